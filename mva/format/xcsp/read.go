package xcsp

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/hearth-dcop/hearth/mva"
)

// Read parses an XCSP 2.1 (FRODO) instance. file names the input in error
// messages. Malformed input yields an [mva.ParseError] carrying the line of
// the offending element; a failing reader yields its error, wrapped.
func Read(r io.Reader, file string) (*mva.Problem, error) {
	return read(r, file, defaultLimits())
}

func read(r io.Reader, file string, lim limits) (*mva.Problem, error) {
	src := &errReader{r: r}
	p := &parser{
		file:     file,
		lim:      lim,
		src:      src,
		dec:      xml.NewDecoder(src),
		sections: make(map[string]int),
		declared: make(map[string]int),
	}
	if err := p.document(); err != nil {
		return nil, err
	}
	return p.build()
}

// errReader remembers the error of the underlying reader, so that an I/O
// failure is not mistaken for bad XML.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// parser turns the token stream into definitions that keep their lines;
// build resolves the references between them once the whole file is read,
// so that sections may come in any order.
type parser struct {
	file string
	lim  limits
	src  *errReader
	dec  *xml.Decoder

	sections map[string]int // section element → line, to refuse repeats
	declared map[string]int // kind+"\x00"+name → line, to refuse repeats
	name     string
	maximize bool

	agents      []string
	domains     []*domainDef
	variables   []varDef
	relations   []*relationDef
	constraints []constraintDef

	domainTotal int
}

type domainDef struct {
	name   string
	labels []string
	exact  map[string]int
	ints   map[int64]int
}

type varDef struct {
	name, domain, agent string
	hasAgent            bool
	line                int
}

type relationDef struct {
	name   string
	line   int
	arity  int
	crisp  string // "", "supports" or "conflicts"
	hasDef bool
	def    float64 // file sense until build converts it
	values []string
	costs  []float64 // one per tuple, file sense until converted
	lines  []int     // one per tuple
}

type constraintDef struct {
	name, reference string
	scope           []string
	arity           int // -1 when the attribute is absent
	line            int
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return mva.Errorf(p.file, line, format, args...)
}

// next returns the next token and the line on which it starts. End of file
// inside an element is an error.
func (p *parser) next() (xml.Token, int, error) {
	line, _ := p.dec.InputPos()
	t, err := p.dec.Token()
	if err == io.EOF {
		return nil, line, p.errorf(line, "unexpected end of file: the <instance> element is not closed")
	}
	if err != nil {
		return nil, line, p.decodeError(err, line)
	}
	return t, line, nil
}

func (p *parser) decodeError(err error, line int) error {
	if p.src.err != nil {
		return fmt.Errorf("reading %s: %w", p.file, p.src.err)
	}
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return p.errorf(se.Line, "XML syntax error: %s", se.Msg)
	}
	return p.errorf(line, "%v", err)
}

// document reads the prolog, the <instance> element and the epilog.
func (p *parser) document() error {
	seen := false
	for {
		line, _ := p.dec.InputPos()
		t, err := p.dec.Token()
		if err == io.EOF {
			if !seen {
				return p.errorf(line, "no <instance> element")
			}
			return nil
		}
		if err != nil {
			return p.decodeError(err, line)
		}
		switch t := t.(type) {
		case xml.StartElement:
			if seen {
				return p.errorf(line, "element <%s> after </instance>", t.Name.Local)
			}
			if t.Name.Local != "instance" {
				return p.errorf(line, "root element is <%s>, want <instance>", t.Name.Local)
			}
			seen = true
			if err := p.instance(); err != nil {
				return err
			}
		case xml.CharData:
			// A byte order mark may precede everything.
			if !isBlank(bytes.TrimPrefix(t, []byte("\ufeff"))) {
				return p.errorf(textLine(t, line), "text outside the <instance> element")
			}
		}
	}
}

func isBlank(b []byte) bool {
	return len(strings.TrimSpace(string(b))) == 0
}

// textLine returns the line of the first non-blank character of b, which
// starts on line.
func textLine(b []byte, line int) int {
	for _, c := range b {
		if !isSep(c) {
			break
		}
		if c == '\n' {
			line++
		}
	}
	return line
}

func (p *parser) instance() error {
	for {
		t, line, err := p.next()
		if err != nil {
			return err
		}
		switch t := t.(type) {
		case xml.EndElement:
			return nil
		case xml.CharData:
			if !isBlank(t) {
				return p.errorf(textLine(t, line), "unexpected text in <instance>")
			}
		case xml.StartElement:
			name := t.Name.Local
			if first, ok := p.sections[name]; ok {
				return p.errorf(line, "second <%s> element (the first is on line %d)", name, first)
			}
			p.sections[name] = line
			var err error
			switch name {
			case "presentation":
				err = p.presentation(t, line)
			case "agents":
				err = p.section(t, line, "agent", "nbAgents", p.agent)
			case "domains":
				err = p.section(t, line, "domain", "nbDomains", p.domain)
			case "variables":
				err = p.section(t, line, "variable", "nbVariables", p.variable)
			case "relations":
				err = p.section(t, line, "relation", "nbRelations", p.relation)
			case "constraints":
				err = p.section(t, line, "constraint", "nbConstraints", p.constraint)
			case "predicates", "functions":
				err = p.errorf(line, "<%s>: intensional constraints are not supported", name)
			case "probabilities":
				err = p.errorf(line, "<probabilities>: random variables are not supported")
			default:
				err = p.errorf(line, "unknown element <%s> in <instance>", name)
			}
			if err != nil {
				return err
			}
		}
	}
}

// declare records a name of a kind (agent, domain, ...) and refuses a
// second declaration.
func (p *parser) declare(kind, name string, line int) error {
	if name == "" {
		return p.errorf(line, "%s with an empty name", kind)
	}
	key := kind + "\x00" + name
	if first, dup := p.declared[key]; dup {
		return p.errorf(line, "%s %q declared twice (first on line %d)", kind, name, first)
	}
	p.declared[key] = line
	return nil
}

func attr(e xml.StartElement, name string) (string, bool) {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

func (p *parser) required(e xml.StartElement, line int, name string) (string, error) {
	v, ok := attr(e, name)
	if !ok {
		return "", p.errorf(line, "<%s> has no %s attribute", e.Name.Local, name)
	}
	return v, nil
}

// count parses an optional non-negative count attribute; -1 means absent.
func (p *parser) count(e xml.StartElement, line int, name string) (int, error) {
	v, ok := attr(e, name)
	if !ok {
		return -1, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, p.errorf(line, "<%s>: %s=%q is not a non-negative integer", e.Name.Local, name, v)
	}
	return n, nil
}

func (p *parser) presentation(e xml.StartElement, line int) error {
	p.name, _ = attr(e, "name")
	if f, ok := attr(e, "format"); ok && !strings.HasPrefix(strings.TrimSpace(f), "XCSP 2") {
		return p.errorf(line, "format %q is not supported (want XCSP 2.1 or XCSP 2.1_FRODO)", f)
	}
	if m, ok := attr(e, "maximize"); ok {
		switch strings.ToLower(strings.TrimSpace(m)) {
		case "true":
			p.maximize = true
		case "false":
		default:
			return p.errorf(line, "maximize=%q: want true or false", m)
		}
	}
	// The presentation may hold a free-text description.
	_, err := p.content(e)
	return err
}

// section reads a list element whose children are all <item> elements,
// each handled by fn, and checks the optional count attribute.
func (p *parser) section(e xml.StartElement, line int, item, countAttr string, fn func(xml.StartElement, int) error) error {
	want, err := p.count(e, line, countAttr)
	if err != nil {
		return err
	}
	n := 0
	for {
		t, tline, err := p.next()
		if err != nil {
			return err
		}
		switch t := t.(type) {
		case xml.EndElement:
			if want >= 0 && n != want {
				return p.errorf(line, "<%s %s=\"%d\"> holds %d <%s> elements", e.Name.Local, countAttr, want, n, item)
			}
			return nil
		case xml.CharData:
			if !isBlank(t) {
				return p.errorf(textLine(t, tline), "unexpected text in <%s>", e.Name.Local)
			}
		case xml.StartElement:
			if t.Name.Local != item {
				return p.errorf(tline, "unexpected element <%s> in <%s>", t.Name.Local, e.Name.Local)
			}
			if err := fn(t, tline); err != nil {
				return err
			}
			n++
		}
	}
}

// text is the character data of an element, with the line on which each
// piece starts (comments may split it).
type text struct {
	s    string
	segs []segment
}

type segment struct {
	off, line int
}

// content reads up to the end of element e, which must not contain other
// elements, and returns its text.
func (p *parser) content(e xml.StartElement) (text, error) {
	var b strings.Builder
	var tx text
	for {
		t, line, err := p.next()
		if err != nil {
			return text{}, err
		}
		switch t := t.(type) {
		case xml.EndElement:
			tx.s = b.String()
			return tx, nil
		case xml.CharData:
			tx.segs = append(tx.segs, segment{off: b.Len(), line: line})
			b.Write(t)
		case xml.StartElement:
			if e.Name.Local == "constraint" {
				return text{}, p.errorf(line, "constraint with <%s>: intensional and global constraints are not supported", t.Name.Local)
			}
			return text{}, p.errorf(line, "unexpected element <%s> in <%s>", t.Name.Local, e.Name.Local)
		}
	}
}

// empty reads up to the end of element e and refuses any content but white
// space.
func (p *parser) empty(e xml.StartElement, line int) error {
	tx, err := p.content(e)
	if err != nil {
		return err
	}
	if _, tline, ok := newLexer(&tx, false).next(); ok {
		return p.errorf(tline, "unexpected text in <%s>", e.Name.Local)
	}
	return nil
}

func (p *parser) agent(e xml.StartElement, line int) error {
	name, err := p.required(e, line, "name")
	if err != nil {
		return err
	}
	if err := p.declare("agent", name, line); err != nil {
		return err
	}
	p.agents = append(p.agents, name)
	return p.empty(e, line)
}

func (p *parser) domain(e xml.StartElement, line int) error {
	name, err := p.required(e, line, "name")
	if err != nil {
		return err
	}
	if err := p.declare("domain", name, line); err != nil {
		return err
	}
	want, err := p.count(e, line, "nbValues")
	if err != nil {
		return err
	}
	tx, err := p.content(e)
	if err != nil {
		return err
	}
	d := &domainDef{name: name, exact: make(map[string]int), ints: make(map[int64]int)}
	lx := newLexer(&tx, false)
	for {
		w, wline, ok := lx.next()
		if !ok {
			break
		}
		if i := strings.Index(w, ".."); i >= 0 {
			lo, err1 := strconv.ParseInt(w[:i], 10, 64)
			hi, err2 := strconv.ParseInt(w[i+2:], 10, 64)
			if err1 != nil || err2 != nil {
				return p.errorf(wline, "domain %q: malformed interval %q", name, w)
			}
			if lo > hi {
				return p.errorf(wline, "domain %q: empty interval %q", name, w)
			}
			// hi-lo computed in uint64 cannot overflow.
			if uint64(hi)-uint64(lo) >= uint64(p.lim.domain-len(d.labels)) {
				return p.errorf(wline, "domain %q has more than %d values", name, p.lim.domain)
			}
			if err := p.reserveDomain(wline, int(uint64(hi)-uint64(lo))+1); err != nil {
				return err
			}
			for v := lo; ; v++ {
				if err := p.addValue(d, strconv.FormatInt(v, 10), wline); err != nil {
					return err
				}
				if v == hi {
					break
				}
			}
			continue
		}
		if len(d.labels) >= p.lim.domain {
			return p.errorf(wline, "domain %q has more than %d values", name, p.lim.domain)
		}
		if err := p.reserveDomain(wline, 1); err != nil {
			return err
		}
		if err := p.addValue(d, w, wline); err != nil {
			return err
		}
	}
	if len(d.labels) == 0 {
		return p.errorf(line, "domain %q is empty", name)
	}
	if want >= 0 && want != len(d.labels) {
		return p.errorf(line, "domain %q: nbValues=\"%d\" but it holds %d values", name, want, len(d.labels))
	}
	p.domains = append(p.domains, d)
	return nil
}

func (p *parser) reserveDomain(line, n int) error {
	if n > p.lim.domainTotal-p.domainTotal {
		return p.errorf(line, "the domains hold more than %d values in all", p.lim.domainTotal)
	}
	p.domainTotal += n
	return nil
}

func (p *parser) addValue(d *domainDef, label string, line int) error {
	if _, dup := d.exact[label]; dup {
		return p.errorf(line, "domain %q: value %q appears twice", d.name, label)
	}
	if v, err := strconv.ParseInt(label, 10, 64); err == nil {
		if i, dup := d.ints[v]; dup {
			return p.errorf(line, "domain %q: value %q equals value %q", d.name, label, d.labels[i])
		}
		d.ints[v] = len(d.labels)
	}
	d.exact[label] = len(d.labels)
	d.labels = append(d.labels, label)
	return nil
}

// index returns the position of a tuple value in the domain.
func (d *domainDef) index(v string) (int, bool) {
	if i, ok := d.exact[v]; ok {
		return i, true
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		i, ok := d.ints[n]
		return i, ok
	}
	return 0, false
}

func (p *parser) variable(e xml.StartElement, line int) error {
	name, err := p.required(e, line, "name")
	if err != nil {
		return err
	}
	if err := p.declare("variable", name, line); err != nil {
		return err
	}
	if strings.ContainsFunc(name, isSpace) {
		return p.errorf(line, "variable name %q contains white space", name)
	}
	if typ, ok := attr(e, "type"); ok && typ == "random" {
		return p.errorf(line, "variable %q: random variables are not supported", name)
	}
	dom, err := p.required(e, line, "domain")
	if err != nil {
		return err
	}
	agent, hasAgent := attr(e, "agent")
	p.variables = append(p.variables, varDef{name: name, domain: dom, agent: agent, hasAgent: hasAgent, line: line})
	return p.empty(e, line)
}

func (p *parser) relation(e xml.StartElement, line int) error {
	name, err := p.required(e, line, "name")
	if err != nil {
		return err
	}
	if err := p.declare("relation", name, line); err != nil {
		return err
	}
	arity, err := p.count(e, line, "arity")
	if err != nil {
		return err
	}
	if arity < 0 {
		return p.errorf(line, "relation %q has no arity attribute", name)
	}
	want, err := p.count(e, line, "nbTuples")
	if err != nil {
		return err
	}
	sem, err := p.required(e, line, "semantics")
	if err != nil {
		return err
	}
	rel := &relationDef{name: name, line: line, arity: arity}
	switch sem {
	case "soft":
	case "supports", "conflicts":
		rel.crisp = sem
	default:
		return p.errorf(line, "relation %q: semantics %q is not soft, supports or conflicts", name, sem)
	}
	if dc, ok := attr(e, "defaultCost"); ok {
		if rel.crisp != "" {
			return p.errorf(line, "relation %q: defaultCost is meaningless with semantics %q", name, sem)
		}
		c, err := parseCost(dc)
		if err != nil {
			return p.errorf(line, "relation %q: defaultCost: %v", name, err)
		}
		rel.hasDef, rel.def = true, c
	}
	tx, err := p.content(e)
	if err != nil {
		return err
	}
	if err := p.tuples(rel, &tx); err != nil {
		return err
	}
	if n := len(rel.costs); want >= 0 && n != want {
		return p.errorf(line, "relation %q: nbTuples=\"%d\" but it lists %d tuples", name, want, n)
	}
	p.relations = append(p.relations, rel)
	return nil
}

// tuples parses "cost: v v|v v|cost: v v" (soft) or "v v|v v" (crisp).
func (p *parser) tuples(rel *relationDef, tx *text) error {
	if strings.TrimSpace(tx.s) == "" {
		return nil
	}
	lx := newLexer(tx, true)
	var (
		cost     float64
		haveCost bool
		words    []string
		wlines   []int
	)
	for more := true; more; {
		// One tuple: the tokens up to the next "|" or the end.
		words, wlines = words[:0], wlines[:0]
		colon := -1
		line := lx.line
		for {
			w, wline, ok := lx.next()
			if !ok {
				more = false
				break
			}
			if w == "|" {
				break
			}
			if w == ":" {
				if colon >= 0 || len(words) != 1 {
					return p.errorf(wline, "relation %q: malformed tuple: want \"cost: values\"", rel.name)
				}
				colon = len(words)
				continue
			}
			if len(words) == 0 {
				line = wline
			}
			words, wlines = append(words, w), append(wlines, wline)
		}
		values := words
		if colon >= 0 {
			if rel.crisp != "" {
				return p.errorf(line, "relation %q: tuples of a %s relation carry no cost", rel.name, rel.crisp)
			}
			c, err := parseCost(words[0])
			if err != nil {
				return p.errorf(wlines[0], "relation %q: %v", rel.name, err)
			}
			cost, haveCost = c, true
			values = words[1:]
		} else if rel.crisp == "" && !haveCost {
			return p.errorf(line, "relation %q: the first tuple has no cost (want \"cost: values\")", rel.name)
		}
		if len(values) != rel.arity {
			return p.errorf(line, "relation %q: tuple has %d values, the arity is %d", rel.name, len(values), rel.arity)
		}
		rel.values = append(rel.values, values...)
		rel.costs = append(rel.costs, cost)
		rel.lines = append(rel.lines, line)
	}
	return nil
}

// parseCost reads a cost or utility: a decimal number, or infinity with an
// optional sign.
func parseCost(s string) (float64, error) {
	s = strings.TrimSpace(s)
	c, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(c) {
		return 0, fmt.Errorf("malformed cost %q", s)
	}
	return c, nil
}

func (p *parser) constraint(e xml.StartElement, line int) error {
	name, err := p.required(e, line, "name")
	if err != nil {
		return err
	}
	if err := p.declare("constraint", name, line); err != nil {
		return err
	}
	arity, err := p.count(e, line, "arity")
	if err != nil {
		return err
	}
	scope, err := p.required(e, line, "scope")
	if err != nil {
		return err
	}
	ref, err := p.required(e, line, "reference")
	if err != nil {
		return err
	}
	p.constraints = append(p.constraints, constraintDef{
		name: name, reference: ref, scope: strings.Fields(scope), arity: arity, line: line,
	})
	return p.empty(e, line)
}

// build resolves names into indices and fills the tables.
func (p *parser) build() (*mva.Problem, error) {
	prob := &mva.Problem{Name: p.name}
	if p.maximize {
		prob.Sense = mva.Maximize
	}

	agentIdx := make(map[string]int, len(p.agents))
	for _, a := range p.agents {
		agentIdx[a] = len(prob.Agents)
		prob.Agents = append(prob.Agents, mva.Agent{Name: a})
	}
	domIdx := make(map[string]*domainDef, len(p.domains))
	for _, d := range p.domains {
		domIdx[d.name] = d
	}

	varIdx := make(map[string]int, len(p.variables))
	doms := make([]*domainDef, 0, len(p.variables))
	defaultAgent := -1
	for _, v := range p.variables {
		d, ok := domIdx[v.domain]
		if !ok {
			return nil, p.errorf(v.line, "variable %q: unknown domain %q", v.name, v.domain)
		}
		owner := 0
		if v.hasAgent {
			a, ok := agentIdx[v.agent]
			if !ok {
				return nil, p.errorf(v.line, "variable %q: unknown agent %q", v.name, v.agent)
			}
			owner = a
		} else {
			if defaultAgent < 0 {
				defaultAgent = len(prob.Agents)
				prob.Agents = append(prob.Agents, mva.Agent{Name: freshAgentName(agentIdx)})
			}
			owner = defaultAgent
		}
		varIdx[v.name] = len(prob.Variables)
		doms = append(doms, d)
		// Variables of one domain share its label slice (capacity capped,
		// so an append copies): copying it per variable would let a small
		// file claim memory proportional to domains × variables.
		prob.Variables = append(prob.Variables, mva.Variable{
			Name:   v.name,
			Domain: d.labels[:len(d.labels):len(d.labels)],
			Agent:  owner,
		})
	}

	relIdx := make(map[string]*relationDef, len(p.relations))
	for _, r := range p.relations {
		if err := p.convert(r); err != nil {
			return nil, err
		}
		relIdx[r.name] = r
	}

	total := 0
	for _, c := range p.constraints {
		f, err := p.function(prob, c, varIdx, doms, relIdx, &total)
		if err != nil {
			return nil, err
		}
		prob.Functions = append(prob.Functions, f)
	}
	if err := prob.Validate(); err != nil {
		// The checks above should make this unreachable.
		return nil, p.errorf(0, "%v", err)
	}
	return prob, nil
}

// freshAgentName returns "a0", with underscores appended while the name is
// taken.
func freshAgentName(taken map[string]int) string {
	name := "a0"
	for {
		if _, ok := taken[name]; !ok {
			return name
		}
		name += "_"
	}
}

// convert turns a relation's costs from the file's sense into internal
// costs.
func (p *parser) convert(r *relationDef) error {
	switch r.crisp {
	case "supports":
		r.hasDef, r.def = true, mva.Hard
		for i := range r.costs {
			r.costs[i] = 0
		}
		return nil
	case "conflicts":
		r.hasDef, r.def = true, 0
		for i := range r.costs {
			r.costs[i] = mva.Hard
		}
		return nil
	}
	var err error
	if r.hasDef {
		if r.def, err = p.internal(r.def); err != nil {
			return p.errorf(r.line, "relation %q: defaultCost: %v", r.name, err)
		}
	}
	for i, c := range r.costs {
		if r.costs[i], err = p.internal(c); err != nil {
			return p.errorf(r.lines[i], "relation %q: %v", r.name, err)
		}
	}
	return nil
}

// internal maps a file cost or utility to hearth's minimised cost.
func (p *parser) internal(c float64) (float64, error) {
	if p.maximize {
		switch {
		case math.IsInf(c, -1):
			return mva.Hard, nil
		case math.IsInf(c, 1):
			return 0, errors.New("utility +infinity in a maximisation problem (infeasible is -infinity)")
		}
		return 0 - c, nil // 0-c, not -c: no negative zero
	}
	switch {
	case math.IsInf(c, 1):
		return mva.Hard, nil
	case math.IsInf(c, -1):
		return 0, errors.New("cost -infinity in a minimisation problem (infeasible is infinity)")
	}
	return c + 0, nil // turns -0 into 0
}

func (p *parser) function(prob *mva.Problem, c constraintDef, varIdx map[string]int, doms []*domainDef, relIdx map[string]*relationDef, total *int) (mva.Function, error) {
	if c.arity >= 0 && c.arity != len(c.scope) {
		return mva.Function{}, p.errorf(c.line, "constraint %q: arity is %d but the scope has %d variables", c.name, c.arity, len(c.scope))
	}
	scope := make([]int, len(c.scope))
	for i, name := range c.scope {
		v, ok := varIdx[name]
		if !ok {
			return mva.Function{}, p.errorf(c.line, "constraint %q: unknown variable %q in the scope", c.name, name)
		}
		for _, w := range scope[:i] {
			if w == v {
				return mva.Function{}, p.errorf(c.line, "constraint %q: variable %q appears twice in the scope", c.name, name)
			}
		}
		scope[i] = v
	}
	if strings.HasPrefix(c.reference, "global:") {
		return mva.Function{}, p.errorf(c.line, "constraint %q: global constraint %q is not supported", c.name, c.reference)
	}
	rel, ok := relIdx[c.reference]
	if !ok {
		return mva.Function{}, p.errorf(c.line, "constraint %q: unknown relation %q", c.name, c.reference)
	}
	if rel.arity != len(scope) {
		return mva.Function{}, p.errorf(c.line, "constraint %q has %d variables but relation %q has arity %d", c.name, len(scope), rel.name, rel.arity)
	}
	size := 1
	for _, v := range scope {
		d := len(doms[v].labels)
		if size > p.lim.table/d {
			return mva.Function{}, p.errorf(c.line, "constraint %q: its table would have more than %d entries", c.name, p.lim.table)
		}
		size *= d
	}
	if size > p.lim.tableTotal-*total {
		return mva.Function{}, p.errorf(c.line, "constraint %q: the tables would have more than %d entries in all", c.name, p.lim.tableTotal)
	}
	*total += size

	costs := make([]float64, size)
	var set []bool // entries listed, when there is no default to fall back on
	if rel.hasDef {
		for i := range costs {
			costs[i] = rel.def
		}
	} else {
		set = make([]bool, size)
	}
	for t, cost := range rel.costs {
		idx := 0
		for j, v := range scope {
			val := rel.values[t*rel.arity+j]
			k, ok := doms[v].index(val)
			if !ok {
				return mva.Function{}, p.errorf(rel.lines[t], "relation %q: value %q is not in the domain of %q (constraint %q, line %d)",
					rel.name, val, prob.Variables[v].Name, c.name, c.line)
			}
			idx = idx*len(doms[v].labels) + k
		}
		costs[idx] = cost
		if set != nil {
			set[idx] = true
		}
	}
	for _, ok := range set {
		if !ok {
			return mva.Function{}, p.errorf(c.line, "constraint %q: relation %q has no defaultCost and does not list every tuple", c.name, rel.name)
		}
	}
	return mva.Function{Name: c.name, Scope: scope, Costs: costs}, nil
}
