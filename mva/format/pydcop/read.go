package pydcop

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/hearth-dcop/hearth/mva"
)

// limits bound what a file can make the reader allocate; they are
// checked before allocating (see the package documentation).
type limits struct {
	table   int // entries of one table
	entries int // entries of all tables
	labels  int // values of all domains
}

func defaultLimits() limits {
	return limits{table: 1 << 24, entries: 1 << 25, labels: 1 << 20}
}

// domain is a named list of values.
type domain struct {
	labels []string
	values []value
	index  map[string]int // label, or Python str() of the value → index
}

// lookup returns the index of the value a tuple token or a scalar names.
func (d *domain) lookup(tok string) (int, bool) {
	i, ok := d.index[tok]
	return i, ok
}

type reader struct {
	file     string
	limits   limits
	p        *mva.Problem
	neg      bool // objective: max
	domains  map[string]*domain
	varDom   []*domain
	varIndex map[string]int
	consts   map[string]value   // external variables
	cnames   map[string]bool    // constraint names, for must_host
	entries  int                // table entries allocated so far
	labels   int                // domain values allocated so far
	open     Opener             // source files; nil when there is no way to open them
	modules  map[string]*module // source files read so far, by name
}

// Opener returns the contents of a constraint's source file, given its
// name as the file writes it.
type Opener func(name string) ([]byte, error)

// MaxSourceBytes bounds a source file.
const MaxSourceBytes = 1 << 20

// SourceDir opens source files relative to dir (absolute names as they
// are), as pyDCOP resolves them relative to the DCOP file.
func SourceDir(dir string) Opener {
	return func(name string) ([]byte, error) {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, MaxSourceBytes+1))
		if err != nil {
			return nil, err
		}
		if len(b) > MaxSourceBytes {
			return nil, fmt.Errorf("%s is larger than %d bytes", name, MaxSourceBytes)
		}
		return b, nil
	}
}

// Read parses a pyDCOP YAML DCOP from r. file names the input in errors,
// which are *mva.ParseError values carrying the line of the offending key
// or value.
// A constraint with a source file is an error: use ReadSources or
// ReadFile to read those.
func Read(r io.Reader, file string) (*mva.Problem, error) {
	return read(r, file, defaultLimits(), nil)
}

// ReadSources is Read with open to read the source files of intentional
// constraints (source: "./functions.py"), whose functions expressions
// call as source.name(...).
func ReadSources(r io.Reader, file string, open Opener) (*mva.Problem, error) {
	return read(r, file, defaultLimits(), open)
}

// ReadFile reads the file at path, with its source files relative to its
// directory.
func ReadFile(path string) (*mva.Problem, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadSources(f, path, SourceDir(filepath.Dir(path)))
}

func read(r io.Reader, file string, lim limits, open Opener) (*mva.Problem, error) {
	dec := yaml.NewDecoder(r)
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, mva.Errorf(file, 0, "empty file")
		}
		return nil, yamlError(file, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); err == nil {
		return nil, mva.Errorf(file, more.Line, "more than one YAML document")
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(file, err)
	}
	rd := &reader{
		file:     file,
		limits:   lim,
		p:        &mva.Problem{},
		domains:  make(map[string]*domain),
		varIndex: make(map[string]int),
		consts:   make(map[string]value),
		cnames:   make(map[string]bool),
		open:     open,
		modules:  make(map[string]*module),
	}
	if err := rd.document(&doc); err != nil {
		return nil, err
	}
	if err := rd.p.Validate(); err != nil {
		return nil, mva.Errorf(file, 0, "%v", err)
	}
	return rd.p, nil
}

// yamlError turns a yaml.v3 syntax error ("yaml: line 3: ...") into a
// ParseError.
func yamlError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, text, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(n); err == nil {
				return mva.Errorf(file, line, "%s", text)
			}
		}
	}
	return mva.Errorf(file, 0, "%s", msg)
}

func (r *reader) errorf(n *yaml.Node, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return mva.Errorf(r.file, line, format, args...)
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

type pair struct{ key, val *yaml.Node }

// mapping returns the entries of a mapping, in file order. An empty value
// (key: with nothing after it) is an empty mapping.
func (r *reader) mapping(n *yaml.Node, what string) ([]pair, error) {
	n = deref(n)
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, r.errorf(n, "%s must be a mapping", what)
	}
	out := make([]pair, 0, len(n.Content)/2)
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return nil, r.errorf(k, "%s: a key must be a plain name", what)
		}
		if k.ShortTag() == "!!merge" {
			return nil, r.errorf(k, "%s: YAML merge keys (<<) are not supported", what)
		}
		if seen[k.Value] {
			return nil, r.errorf(k, "%s: %q appears twice", what, k.Value)
		}
		seen[k.Value] = true
		out = append(out, pair{k, v})
	}
	return out, nil
}

// scalar returns the text of a scalar node.
func (r *reader) scalar(n *yaml.Node, what string) (string, error) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", r.errorf(n, "%s must be a single value", what)
	}
	return n.Value, nil
}

// list returns the items of a sequence, or the node itself for a scalar.
func (r *reader) list(n *yaml.Node, what string) ([]*yaml.Node, error) {
	n = deref(n)
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]*yaml.Node, len(n.Content))
		for i, c := range n.Content {
			out[i] = deref(c)
		}
		return out, nil
	case yaml.ScalarNode:
		if isNull(n) {
			return nil, nil
		}
		return []*yaml.Node{n}, nil
	}
	return nil, r.errorf(n, "%s must be a list", what)
}

func (r *reader) document(doc *yaml.Node) error {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return mva.Errorf(r.file, 0, "empty file")
	}
	root := deref(doc.Content[0])
	top, err := r.mapping(root, "the file")
	if err != nil {
		return err
	}
	sections := make(map[string]pair, len(top))
	for _, kv := range top {
		sections[kv.key.Value] = kv
	}
	if kv, ok := sections["name"]; ok {
		if r.p.Name, err = r.scalar(kv.val, "name"); err != nil {
			return err
		}
	}
	kv, ok := sections["objective"]
	if !ok {
		return r.errorf(root, "objective is mandatory: min or max")
	}
	obj, err := r.scalar(kv.val, "objective")
	if err != nil {
		return err
	}
	switch obj {
	case "min":
	case "max":
		r.p.Sense, r.neg = mva.Maximize, true
	default:
		return r.errorf(kv.val, "unknown objective %q: want min or max", obj)
	}
	steps := []struct {
		key string
		fn  func(*yaml.Node) error
	}{
		{"domains", r.readDomains},
		{"external_variables", r.readExternal},
		{"variables", r.readVariables},
		{"constraints", r.readConstraints},
		{"agents", r.readAgents},
	}
	for _, s := range steps {
		if kv, ok := sections[s.key]; ok {
			if err := s.fn(kv.val); err != nil {
				return err
			}
		}
	}
	var hints *yaml.Node
	if kv, ok := sections["distribution_hints"]; ok {
		hints = kv.val
	}
	return r.placeVariables(hints)
}

func (r *reader) readDomains(n *yaml.Node) error {
	entries, err := r.mapping(n, "domains")
	if err != nil {
		return err
	}
	for _, kv := range entries {
		name := kv.key.Value
		props, err := r.mapping(kv.val, "domain "+name)
		if err != nil {
			return err
		}
		var values *yaml.Node
		for _, p := range props {
			if p.key.Value == "values" {
				values = p.val
			}
		}
		if values == nil {
			return r.errorf(kv.key, "domain %s has no values", name)
		}
		d, err := r.domainValues(name, values)
		if err != nil {
			return err
		}
		r.domains[name] = d
	}
	return nil
}

func (r *reader) domainValues(name string, n *yaml.Node) (*domain, error) {
	var items []*yaml.Node
	switch n.Kind {
	case yaml.SequenceNode:
		items = n.Content
		if len(items) == 1 {
			if it := deref(items[0]); it.Kind == yaml.ScalarNode && it.ShortTag() == "!!str" && strings.Contains(it.Value, "..") {
				return r.valueRange(name, it)
			}
		}
	case yaml.ScalarNode:
		if strings.Contains(n.Value, "..") {
			return r.valueRange(name, n)
		}
		fallthrough
	default:
		return nil, r.errorf(n, "domain %s: values must be a list or a range like [0 .. 9]", name)
	}
	if len(items) == 0 {
		return nil, r.errorf(n, "domain %s is empty", name)
	}
	if err := r.countLabels(n, name, len(items)); err != nil {
		return nil, err
	}
	d := &domain{labels: make([]string, len(items)), values: make([]value, len(items))}
	for i, it := range items {
		it = deref(it)
		if it.Kind != yaml.ScalarNode {
			return nil, r.errorf(it, "domain %s: a value must be a single value, not a list or mapping", name)
		}
		v, err := r.typed(it)
		if err != nil {
			return nil, err
		}
		d.labels[i], d.values[i] = it.Value, v
	}
	return d, r.indexDomain(n, name, d)
}

func (r *reader) countLabels(n *yaml.Node, name string, k int) error {
	if k > r.limits.labels-r.labels {
		return r.errorf(n, "domain %s: more than %d values in all domains", name, r.limits.labels)
	}
	r.labels += k
	return nil
}

// typed returns the Python value of a YAML scalar, typed as PyYAML would.
func (r *reader) typed(n *yaml.Node) (value, error) {
	switch n.ShortTag() {
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return value{}, r.errorf(n, "integer %s is out of the 64-bit range", n.Value)
		}
		return intValue(i), nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return value{}, r.errorf(n, "bad number %s", n.Value)
		}
		return floatValue(f), nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return value{}, r.errorf(n, "bad boolean %s", n.Value)
		}
		return boolValue(b), nil
	}
	return strValue(n.Value), nil
}

// valueRange reads pyDCOP's "first .. last" integer range.
func (r *reader) valueRange(name string, n *yaml.Node) (*domain, error) {
	s := strings.TrimSpace(n.Value)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, b, _ := strings.Cut(s, "..")
	lo, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	hi, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
	if err1 != nil || err2 != nil {
		return nil, r.errorf(n, "domain %s: bad range %q: want integers, as in [0 .. 9]", name, n.Value)
	}
	if hi < lo {
		return nil, r.errorf(n, "domain %s: range %q is empty", name, n.Value)
	}
	if uint64(hi)-uint64(lo) >= uint64(r.limits.labels) {
		return nil, r.errorf(n, "domain %s: range %q has more than %d values", name, n.Value, r.limits.labels)
	}
	k := int(hi-lo) + 1
	if err := r.countLabels(n, name, k); err != nil {
		return nil, err
	}
	d := &domain{labels: make([]string, k), values: make([]value, k)}
	for i := range k {
		v := lo + int64(i)
		d.labels[i], d.values[i] = strconv.FormatInt(v, 10), intValue(v)
	}
	return d, r.indexDomain(n, name, d)
}

func (r *reader) indexDomain(n *yaml.Node, name string, d *domain) error {
	d.index = make(map[string]int, len(d.labels))
	for i, l := range d.labels {
		if _, dup := d.index[l]; dup {
			return r.errorf(n, "domain %s: value %q appears twice", name, l)
		}
		d.index[l] = i
	}
	for i, v := range d.values {
		if s := v.String(); s != d.labels[i] {
			if _, ok := d.index[s]; !ok {
				d.index[s] = i
			}
		}
	}
	return nil
}

// varDomain reads the domain of a variable or an external variable.
func (r *reader) varDomain(kind string, kv pair) (*domain, []pair, error) {
	name := kv.key.Value
	props, err := r.mapping(kv.val, kind+" "+name)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range props {
		if p.key.Value != "domain" {
			continue
		}
		dn, err := r.scalar(p.val, kind+" "+name+": domain")
		if err != nil {
			return nil, nil, err
		}
		d, ok := r.domains[dn]
		if !ok {
			return nil, nil, r.errorf(p.val, "%s %s: unknown domain %q", kind, name, dn)
		}
		return d, props, nil
	}
	return nil, nil, r.errorf(kv.key, "%s %s has no domain", kind, name)
}

func (r *reader) readExternal(n *yaml.Node) error {
	entries, err := r.mapping(n, "external_variables")
	if err != nil {
		return err
	}
	for _, kv := range entries {
		name := kv.key.Value
		d, props, err := r.varDomain("external variable", kv)
		if err != nil {
			return err
		}
		var init *yaml.Node
		for _, p := range props {
			if p.key.Value == "initial_value" {
				init = p.val
			}
		}
		if init == nil {
			return r.errorf(kv.key, "external variable %s has no initial_value", name)
		}
		s, err := r.scalar(init, "initial_value")
		if err != nil {
			return err
		}
		i, ok := d.lookup(s)
		if !ok {
			return r.errorf(init, "external variable %s: initial value %q is not in its domain", name, s)
		}
		r.consts[name] = d.values[i]
	}
	return nil
}

func (r *reader) readVariables(n *yaml.Node) error {
	entries, err := r.mapping(n, "variables")
	if err != nil {
		return err
	}
	costs := make([]*yaml.Node, len(entries))
	for i, kv := range entries {
		name := kv.key.Value
		if _, ok := r.consts[name]; ok {
			return r.errorf(kv.key, "variable %s is also an external variable", name)
		}
		d, props, err := r.varDomain("variable", kv)
		if err != nil {
			return err
		}
		for _, p := range props {
			if p.key.Value == "cost_function" {
				costs[i] = p.val
			}
		}
		r.varIndex[name] = len(r.p.Variables)
		r.p.Variables = append(r.p.Variables, mva.Variable{Name: name, Domain: d.labels})
		r.varDom = append(r.varDom, d)
	}
	for i, fn := range costs {
		if fn == nil {
			continue
		}
		name := r.p.Variables[i].Name
		if err := r.intention("cost function of "+name, "cost_"+name, fn, nil, i, nil); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) readConstraints(n *yaml.Node) error {
	entries, err := r.mapping(n, "constraints")
	if err != nil {
		return err
	}
	for _, kv := range entries {
		name := kv.key.Value
		r.cnames[name] = true
		props, err := r.mapping(kv.val, "constraint "+name)
		if err != nil {
			return err
		}
		m := make(map[string]*yaml.Node, len(props))
		for _, p := range props {
			m[p.key.Value] = p.val
		}
		tn, ok := m["type"]
		if !ok {
			return r.errorf(kv.key, "constraint %s has no type (intention or extensional)", name)
		}
		typ, err := r.scalar(tn, "constraint "+name+": type")
		if err != nil {
			return err
		}
		what := "constraint " + name
		switch typ {
		case "intention":
			var mod *module
			if src, ok := m["source"]; ok {
				if mod, err = r.module(what, src); err != nil {
					return err
				}
			}
			fn, ok := m["function"]
			if !ok {
				return r.errorf(kv.key, "%s has no function", what)
			}
			if err := r.intention(what, name, fn, m["partial"], -1, mod); err != nil {
				return err
			}
		case "extensional":
			if err := r.extensional(what, name, kv.key, m); err != nil {
				return err
			}
		default:
			return r.errorf(tn, "%s: unknown type %q: want intention or extensional", what, typ)
		}
	}
	return nil
}

// module reads and compiles the source file that node n names, once per
// name.
func (r *reader) module(what string, n *yaml.Node) (*module, error) {
	name, err := r.scalar(n, what+": source")
	if err != nil {
		return nil, err
	}
	if mod, ok := r.modules[name]; ok {
		return mod, nil
	}
	if r.open == nil {
		return nil, r.errorf(n, "%s: source file %s cannot be opened when the DCOP is not read from a file", what, name)
	}
	b, err := r.open(name)
	if err != nil {
		return nil, r.errorf(n, "%s: source file: %v", what, err)
	}
	src := string(b)
	file := name
	if !filepath.IsAbs(name) && r.file != "" {
		file = filepath.Join(filepath.Dir(r.file), name)
	}
	mod, err := parseModule(file, src)
	if err != nil {
		var ee *exprError
		if errors.As(err, &ee) {
			return nil, mva.Errorf(file, lineAt(src, ee.pos), "%s (source of %s)", ee.msg, what)
		}
		return nil, r.errorf(n, "%s: %v", what, err)
	}
	r.modules[name] = mod
	return mod, nil
}

// exprLine returns the file line of a byte offset in an expression.
func exprLine(n *yaml.Node, src string, pos int) int {
	switch {
	case n.Style&yaml.LiteralStyle != 0:
		return n.Line + 1 + strings.Count(src[:min(pos, len(src))], "\n")
	case n.Style&yaml.FoldedStyle != 0:
		return n.Line + 1
	}
	return n.Line
}

// intention compiles an expression and tabulates it. self >= 0 makes it
// the cost function of variable self: its scope is that variable alone.
func (r *reader) intention(what, fname string, fn, partial *yaml.Node, self int, mod *module) error {
	fn = deref(fn)
	src, err := r.scalar(fn, what+": function")
	if err != nil {
		return err
	}
	prog, names, err := compile(src, mod)
	if err != nil {
		var ee *exprError
		if errors.As(err, &ee) {
			return mva.Errorf(r.file, exprLine(fn, src, ee.pos), "%s: %s in %q", what, ee.msg, excerpt(src, ee.pos))
		}
		return r.errorf(fn, "%s: %v", what, err)
	}
	consts := r.consts
	if partial != nil {
		fixed, err := r.mapping(partial, what+": partial")
		if err != nil {
			return err
		}
		consts = make(map[string]value, len(r.consts)+len(fixed))
		for k, v := range r.consts {
			consts[k] = v
		}
		for _, p := range fixed {
			vi, ok := r.varIndex[p.key.Value]
			if !ok || !contains(names, p.key.Value) {
				return r.errorf(p.key, "%s: partial names %s, which is not a variable of the function", what, p.key.Value)
			}
			s, err := r.scalar(p.val, what+": partial value")
			if err != nil {
				return err
			}
			i, ok := r.varDom[vi].lookup(s)
			if !ok {
				return r.errorf(p.val, "%s: value %q is not in the domain of %s", what, s, p.key.Value)
			}
			consts[p.key.Value] = r.varDom[vi].values[i]
		}
	}
	var scope []int
	var scopeNames []string
	for _, name := range names {
		if _, ok := consts[name]; ok {
			continue
		}
		vi, ok := r.varIndex[name]
		if !ok {
			continue // bind reports it with its position
		}
		if self >= 0 && vi != self {
			return r.errorf(fn, "%s: it may only use %s, not %s", what, r.p.Variables[self].Name, name)
		}
		scope, scopeNames = append(scope, vi), append(scopeNames, name)
	}
	if self >= 0 {
		scope, scopeNames = []int{self}, []string{r.p.Variables[self].Name}
	}
	if err := prog.bind(scopeNames, consts); err != nil {
		var ee *exprError
		if errors.As(err, &ee) {
			return mva.Errorf(r.file, exprLine(fn, src, ee.pos), "%s: %s", what, ee.msg)
		}
		return r.errorf(fn, "%s: %v", what, err)
	}

	costs, err := r.newTable(fn, what, scope)
	if err != nil {
		return err
	}
	env := make([]value, len(scope))
	idx := make([]int, len(scope))
	for k, v := range scope {
		env[k] = r.varDom[v].values[0]
	}
	for e := range costs {
		v, err := prog.eval(env)
		if err == nil {
			costs[e], err = r.fromResult(v)
		}
		if err != nil {
			return r.errorf(fn, "%s: %v%s", what, err, r.describe(scope, idx))
		}
		for k := len(scope) - 1; k >= 0; k-- { // next assignment, last fastest
			d := r.varDom[scope[k]]
			if idx[k]++; idx[k] < len(d.values) {
				env[k] = d.values[idx[k]]
				break
			}
			idx[k], env[k] = 0, d.values[0]
		}
	}
	if len(scope) == 0 && !mva.IsHard(costs[0]) {
		r.p.Offset += costs[0]
		r.entries--
		return nil
	}
	r.p.Functions = append(r.p.Functions, mva.Function{Name: fname, Scope: scope, Costs: costs})
	return nil
}

// excerpt returns the expression around pos, shortened when long.
func excerpt(src string, pos int) string {
	const width = 40
	src = strings.TrimSpace(src)
	if len(src) <= 2*width {
		return src
	}
	lo, hi := max(0, pos-width), min(len(src), pos+width)
	for lo > 0 && !utf8.RuneStart(src[lo]) {
		lo--
	}
	for hi < len(src) && !utf8.RuneStart(src[hi]) {
		hi++
	}
	s := src[lo:hi]
	if lo > 0 {
		s = "..." + s
	}
	if hi < len(src) {
		s += "..."
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// describe formats an assignment for an error message.
func (r *reader) describe(scope, idx []int) string {
	if len(scope) == 0 {
		return ""
	}
	parts := make([]string, len(scope))
	for k, v := range scope {
		parts[k] = r.p.Variables[v].Name + "=" + r.p.Variables[v].Domain[idx[k]]
	}
	return " (with " + strings.Join(parts, ", ") + ")"
}

// newTable allocates a table over scope within the limits.
func (r *reader) newTable(n *yaml.Node, what string, scope []int) ([]float64, error) {
	size, err := r.p.TableSize(scope)
	if err == nil && size > r.limits.table {
		err = fmt.Errorf("table of %d entries is larger than %d", size, r.limits.table)
	}
	if err != nil {
		return nil, r.errorf(n, "%s: %v", what, err)
	}
	if size > r.limits.entries-r.entries {
		return nil, r.errorf(n, "%s: tables hold more than %d entries in all", what, r.limits.entries)
	}
	r.entries += size
	return make([]float64, size), nil
}

// fromResult turns an expression result into an internal cost.
func (r *reader) fromResult(v value) (float64, error) {
	c, err := v.cost()
	if err != nil {
		return 0, err
	}
	return r.internal(c)
}

// internal turns a number of the file into an internal cost: negated for
// max, +Inf (Hard) allowed, -Inf and NaN refused.
func (r *reader) internal(c float64) (float64, error) {
	if r.neg {
		c = 0 - c
	}
	switch {
	case math.IsNaN(c):
		return 0, errors.New("NaN is not a cost")
	case math.IsInf(c, -1) && r.neg:
		return 0, errors.New("a utility of +inf cannot be maximised")
	case math.IsInf(c, -1):
		return 0, errors.New("a cost of -inf cannot be minimised")
	}
	return c, nil
}

// cost reads a cost (or a utility) written as a YAML number.
func (r *reader) cost(n *yaml.Node, what string) (float64, error) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode {
		return 0, r.errorf(n, "%s: a cost must be a number", what)
	}
	var c float64
	switch n.ShortTag() {
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			c = float64(i)
		} else if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			c = f // beyond 64 bits but plain decimal
		} else {
			return 0, r.errorf(n, "%s: cost %s is out of range", what, n.Value)
		}
	case "!!float":
		if err := n.Decode(&c); err != nil {
			return 0, r.errorf(n, "%s: bad cost %s", what, n.Value)
		}
	default:
		return 0, r.errorf(n, "%s: cost %q is not a number", what, n.Value)
	}
	c, err := r.internal(c)
	if err != nil {
		return 0, r.errorf(n, "%s: %v", what, err)
	}
	return c, nil
}

func (r *reader) extensional(what, name string, key *yaml.Node, m map[string]*yaml.Node) error {
	vn, ok := m["variables"]
	if !ok {
		return r.errorf(key, "%s has no variables", what)
	}
	items, err := r.list(vn, what+": variables")
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return r.errorf(vn, "%s: no variables", what)
	}
	scope := make([]int, len(items))
	for k, it := range items {
		s, err := r.scalar(it, what+": variables")
		if err != nil {
			return err
		}
		s = strings.TrimSpace(s)
		vi, ok := r.varIndex[s]
		if !ok {
			return r.errorf(it, "%s: unknown variable %q", what, s)
		}
		for _, u := range scope[:k] {
			if u == vi {
				return r.errorf(it, "%s: variable %s appears twice", what, s)
			}
		}
		scope[k] = vi
	}
	costs, err := r.newTable(key, what, scope)
	if err != nil {
		return err
	}
	set := make([]bool, len(costs))
	strides := r.p.Strides(scope)
	if values, ok := m["values"]; ok {
		entries, err := r.mapping(values, what+": values")
		if err != nil {
			return err
		}
		for _, kv := range entries {
			c, err := r.cost(kv.key, what)
			if err != nil {
				return err
			}
			text, err := r.scalar(kv.val, what+": assignments")
			if err != nil {
				return err
			}
			tuples, err := splitTuples(text)
			if err != nil {
				return r.errorf(kv.val, "%s: %v", what, err)
			}
			for _, t := range tuples {
				if len(t) != len(scope) {
					return r.errorf(kv.val, "%s: assignment %q has %d values for %d variables", what, strings.Join(t, " "), len(t), len(scope))
				}
				e := 0
				for k, tok := range t {
					i, ok := r.varDom[scope[k]].lookup(tok)
					if !ok {
						return r.errorf(kv.val, "%s: value %q is not in the domain of %s", what, tok, r.p.Variables[scope[k]].Name)
					}
					e += i * strides[k]
				}
				if set[e] {
					return r.errorf(kv.val, "%s: assignment %q is given twice", what, strings.Join(t, " "))
				}
				costs[e], set[e] = c, true
			}
		}
	}
	def, hasDefault := 0.0, false
	if dn, ok := m["default"]; ok && !isNull(deref(dn)) {
		if def, err = r.cost(dn, what+": default"); err != nil {
			return err
		}
		hasDefault = true
	}
	for e := range costs {
		if set[e] {
			continue
		}
		if !hasDefault {
			idx := make([]int, len(scope))
			for k := range scope {
				idx[k] = e / strides[k] % r.p.DomainSize(scope[k])
			}
			return r.errorf(key, "%s: no cost for%s and no default", what, strings.TrimSuffix(strings.TrimPrefix(r.describe(scope, idx), " (with"), ")"))
		}
		costs[e] = def
	}
	r.p.Functions = append(r.p.Functions, mva.Function{Name: name, Scope: scope, Costs: costs})
	return nil
}

// splitTuples splits "a b | c d" into assignments. A value may be quoted
// with ' or " to hold white space or "|".
func splitTuples(s string) ([][]string, error) {
	var out [][]string
	var cur []string
	endTuple := func() error {
		if len(cur) == 0 {
			return fmt.Errorf("empty assignment in %q", s)
		}
		out = append(out, cur)
		cur = nil
		return nil
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '|':
			if err := endTuple(); err != nil {
				return nil, err
			}
			i++
		case c < 0x80 && unicode.IsSpace(rune(c)):
			i++
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated quote in %q", s)
			}
			end := i + 1 + j + 1
			if end < len(s) && s[end] != '|' && !(s[end] < 0x80 && unicode.IsSpace(rune(s[end]))) {
				return nil, fmt.Errorf("a quoted value must be followed by a space or | in %q", s)
			}
			cur = append(cur, s[i+1:end-1])
			i = end
		default:
			j := i
			for j < len(s) && s[j] != '|' && !(s[j] < 0x80 && unicode.IsSpace(rune(s[j]))) {
				j++
			}
			cur = append(cur, s[i:j])
			i = j
		}
	}
	if err := endTuple(); err != nil {
		return nil, err
	}
	return out, nil
}

func (r *reader) readAgents(n *yaml.Node) error {
	n = deref(n)
	var names []*yaml.Node
	switch n.Kind {
	case yaml.MappingNode:
		entries, err := r.mapping(n, "agents")
		if err != nil {
			return err
		}
		for _, kv := range entries {
			names = append(names, kv.key)
		}
	default:
		items, err := r.list(n, "agents")
		if err != nil {
			return err
		}
		names = items
	}
	seen := make(map[string]bool, len(names))
	for _, it := range names {
		s, err := r.scalar(it, "agents")
		if err != nil {
			return err
		}
		if seen[s] {
			return r.errorf(it, "agent %s appears twice", s)
		}
		seen[s] = true
		r.p.Agents = append(r.p.Agents, mva.Agent{Name: s})
	}
	return nil
}

// placeVariables gives every variable an owner; see the package
// documentation for the rule.
func (r *reader) placeVariables(hints *yaml.Node) error {
	owner := make([]int, len(r.p.Variables))
	for i := range owner {
		owner[i] = -1
	}
	placed := 0
	agents := make(map[string]int, len(r.p.Agents))
	for i, a := range r.p.Agents {
		agents[a.Name] = i
	}
	if hints != nil {
		props, err := r.mapping(hints, "distribution_hints")
		if err != nil {
			return err
		}
		for _, p := range props {
			if p.key.Value != "must_host" {
				continue
			}
			hosts, err := r.mapping(p.val, "must_host")
			if err != nil {
				return err
			}
			for _, h := range hosts {
				a, ok := agents[h.key.Value]
				if !ok {
					return r.errorf(h.key, "must_host: unknown agent %q", h.key.Value)
				}
				items, err := r.list(h.val, "must_host: "+h.key.Value)
				if err != nil {
					return err
				}
				for _, it := range items {
					s, err := r.scalar(it, "must_host: "+h.key.Value)
					if err != nil {
						return err
					}
					vi, ok := r.varIndex[s]
					switch {
					case ok && owner[vi] >= 0 && owner[vi] != a:
						return r.errorf(it, "must_host: variable %s is already hosted by %s", s, r.p.Agents[owner[vi]].Name)
					case ok:
						if owner[vi] < 0 {
							placed++
						}
						owner[vi] = a
					case !r.cnames[s]:
						return r.errorf(it, "must_host: unknown variable or constraint %q", s)
					}
				}
			}
		}
	}
	if placed == 0 && len(r.p.Agents) == len(r.p.Variables) {
		for i := range owner {
			owner[i] = i
		}
	}
	a0 := -1
	for i := range owner {
		if owner[i] >= 0 {
			continue
		}
		if a0 < 0 {
			var ok bool
			if a0, ok = agents["a0"]; !ok {
				a0 = len(r.p.Agents)
				r.p.Agents = append(r.p.Agents, mva.Agent{Name: "a0"})
			}
		}
		owner[i] = a0
	}
	for i, a := range owner {
		r.p.Variables[i].Agent = a
	}
	return nil
}
