package xcsp

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hearth-dcop/hearth/mva"
)

// Write writes p as an XCSP 2.1 file in FRODO's dialect. It fails when p is
// invalid or holds a name or label the format cannot carry (see the package
// documentation); nothing is written then.
func Write(w io.Writer, p *mva.Problem) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("xcsp: %w", err)
	}
	if err := checkWritable(p); err != nil {
		return fmt.Errorf("xcsp: %w", err)
	}
	bw := bufio.NewWriter(w)
	writeProblem(bw, p)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("xcsp: %w", err)
	}
	return nil
}

// checkWritable verifies that every name and label survives the trip
// through the file.
func checkWritable(p *mva.Problem) error {
	if err := checkXML("problem name", p.Name); err != nil {
		return err
	}
	agents := make(map[string]bool, len(p.Agents))
	for i, a := range p.Agents {
		if a.Name == "" {
			return fmt.Errorf("agent %d has no name", i)
		}
		if agents[a.Name] {
			return fmt.Errorf("agent name %q is used twice", a.Name)
		}
		agents[a.Name] = true
		if err := checkXML("agent name", a.Name); err != nil {
			return err
		}
	}
	for _, v := range p.Variables {
		if err := checkXML("variable name", v.Name); err != nil {
			return err
		}
		if strings.ContainsFunc(v.Name, isSpace) {
			return fmt.Errorf("variable name %q contains white space, which separates the names of a scope", v.Name)
		}
		// The reader's own check refuses duplicates, also "1" beside "01".
		d := &domainDef{name: v.Name, exact: make(map[string]int), ints: make(map[int64]int)}
		for _, l := range v.Domain {
			if err := checkLabel(l); err != nil {
				return fmt.Errorf("variable %q: %w", v.Name, err)
			}
			if _, dup := d.exact[l]; dup {
				return fmt.Errorf("variable %q: value %q appears twice in the domain", v.Name, l)
			}
			if n, err := strconv.ParseInt(l, 10, 64); err == nil {
				if i, dup := d.ints[n]; dup {
					return fmt.Errorf("variable %q: values %q and %q are the same integer", v.Name, d.labels[i], l)
				}
				d.ints[n] = len(d.labels)
			}
			d.exact[l] = len(d.labels)
			d.labels = append(d.labels, l)
		}
	}
	for _, f := range p.Functions {
		if err := checkXML("function name", f.Name); err != nil {
			return err
		}
	}
	return nil
}

func checkXML(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q is not valid UTF-8", what, s)
	}
	for _, r := range s {
		if !isXMLChar(r) {
			return fmt.Errorf("%s %q holds the character %U, which XML cannot carry", what, s, r)
		}
	}
	return nil
}

// isXMLChar reports whether r is a Char of the XML 1.0 grammar.
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

func checkLabel(l string) error {
	switch {
	case l == "":
		return fmt.Errorf("empty value label")
	case strings.ContainsFunc(l, isSpace):
		return fmt.Errorf("value label %q contains white space", l)
	case strings.ContainsAny(l, "|:"):
		return fmt.Errorf("value label %q contains | or :, which separate tuples and costs", l)
	case strings.Contains(l, ".."):
		return fmt.Errorf("value label %q contains .., which marks an interval", l)
	}
	return checkXML("value label", l)
}

// names hands out identifiers that no other element uses, since XCSP wants
// every name of an instance to be distinct.
type names map[string]bool

func (n names) fresh(base string) string {
	name := base
	for i := 1; n[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	n[name] = true
	return name
}

// constraint is a function as it will be written.
type constraint struct {
	name, relation string
	scope          []int
	costs          []float64
}

func writeProblem(w *bufio.Writer, p *mva.Problem) {
	used := make(names)
	for _, a := range p.Agents {
		used[a.Name] = true
	}
	for _, v := range p.Variables {
		used[v.Name] = true
	}

	// Constraints keep their functions' names where they are usable.
	var cons []constraint
	taken := make(map[string]bool)
	constant := p.Offset
	hasConstant := p.Offset != 0
	for i := range p.Functions {
		f := &p.Functions[i]
		if len(f.Scope) == 0 {
			constant += f.Costs[0]
			hasConstant = true
			continue
		}
		name := f.Name
		if name == "" || taken[name] {
			name = used.fresh("c" + strconv.Itoa(i))
		}
		taken[name] = true
		used[name] = true
		cons = append(cons, constraint{name: name, scope: f.Scope, costs: f.Costs})
	}
	if hasConstant && constant != 0 {
		c := constraint{name: used.fresh("offset"), costs: []float64{constant}}
		if len(p.Variables) > 0 {
			// A unary constraint of constant cost, which FRODO reads; it
			// cannot read an empty scope.
			c.scope = []int{0}
			c.costs = make([]float64, p.DomainSize(0))
			for i := range c.costs {
				c.costs[i] = constant
			}
		}
		cons = append(cons, c)
	}
	for i := range cons {
		cons[i].relation = used.fresh("r_" + cons[i].name)
	}

	// One domain element per distinct list of labels.
	domName := make(map[string]string)
	varDom := make([]string, len(p.Variables))
	var domOrder []string
	for i, v := range p.Variables {
		key := strings.Join(v.Domain, " ")
		name, ok := domName[key]
		if !ok {
			name = used.fresh("d" + strconv.Itoa(len(domOrder)))
			domName[key] = name
			domOrder = append(domOrder, key)
		}
		varDom[i] = name
	}

	maxArity := 0
	for _, c := range cons {
		maxArity = max(maxArity, len(c.scope))
	}
	fmt.Fprintf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<instance>\n")
	fmt.Fprintf(w, "<presentation name=\"%s\" maxConstraintArity=\"%d\" maximize=\"%t\" format=\"XCSP 2.1_FRODO\"/>\n",
		esc(p.Name), maxArity, p.Sense == mva.Maximize)

	fmt.Fprintf(w, "<agents nbAgents=\"%d\">\n", len(p.Agents))
	for _, a := range p.Agents {
		fmt.Fprintf(w, "\t<agent name=\"%s\"/>\n", esc(a.Name))
	}
	fmt.Fprintf(w, "</agents>\n")

	fmt.Fprintf(w, "<domains nbDomains=\"%d\">\n", len(domOrder))
	for _, key := range domOrder {
		labels := strings.Split(key, " ")
		fmt.Fprintf(w, "\t<domain name=\"%s\" nbValues=\"%d\">", esc(domName[key]), len(labels))
		writeLabels(w, labels)
		fmt.Fprintf(w, "</domain>\n")
	}
	fmt.Fprintf(w, "</domains>\n")

	fmt.Fprintf(w, "<variables nbVariables=\"%d\">\n", len(p.Variables))
	for i, v := range p.Variables {
		fmt.Fprintf(w, "\t<variable name=\"%s\" domain=\"%s\" agent=\"%s\"/>\n",
			esc(v.Name), esc(varDom[i]), esc(p.Agents[v.Agent].Name))
	}
	fmt.Fprintf(w, "</variables>\n")

	// Labels escaped once, not once per tuple.
	labels := make([][]string, len(p.Variables))
	escaped := make(map[string][]string)
	for i, v := range p.Variables {
		key := strings.Join(v.Domain, " ")
		if _, ok := escaped[key]; !ok {
			l := make([]string, len(v.Domain))
			for k, s := range v.Domain {
				l[k] = esc(s)
			}
			escaped[key] = l
		}
		labels[i] = escaped[key]
	}
	fmt.Fprintf(w, "<relations nbRelations=\"%d\">\n", len(cons))
	for _, c := range cons {
		writeRelation(w, p, labels, c)
	}
	fmt.Fprintf(w, "</relations>\n")

	fmt.Fprintf(w, "<constraints nbConstraints=\"%d\">\n", len(cons))
	for _, c := range cons {
		scope := make([]string, len(c.scope))
		for i, v := range c.scope {
			scope[i] = esc(p.Variables[v].Name)
		}
		fmt.Fprintf(w, "\t<constraint name=\"%s\" arity=\"%d\" scope=\"%s\" reference=\"%s\"/>\n",
			esc(c.name), len(c.scope), strings.Join(scope, " "), esc(c.relation))
	}
	fmt.Fprintf(w, "</constraints>\n</instance>\n")
}

// esc escapes s for an attribute value or character data.
func esc(s string) string {
	if !strings.ContainsAny(s, "<>&'\"\t\n\r") {
		return s
	}
	var b strings.Builder
	// EscapeText only fails when its writer does.
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// writeLabels writes a domain, runs of three or more consecutive integers
// (in canonical decimal) as intervals.
func writeLabels(w *bufio.Writer, labels []string) {
	for i := 0; i < len(labels); {
		if i > 0 {
			w.WriteByte(' ')
		}
		j := i + 1
		if lo, ok := canonicalInt(labels[i]); ok {
			for j < len(labels) {
				v, ok := canonicalInt(labels[j])
				if !ok || v != lo+int64(j-i) {
					break
				}
				j++
			}
			if j-i >= 3 {
				fmt.Fprintf(w, "%s..%s", labels[i], labels[j-1])
				i = j
				continue
			}
			j = i + 1
		}
		w.WriteString(esc(labels[i]))
		i = j
	}
}

// canonicalInt returns the value of s when s is an integer written as
// FormatInt writes it, which is how the reader expands intervals.
func canonicalInt(s string) (int64, bool) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strconv.FormatInt(v, 10) != s {
		return 0, false
	}
	return v, true
}

// writeRelation writes c's table: the most frequent cost as defaultCost and
// the other tuples grouped by cost, in order of first appearance.
func writeRelation(w *bufio.Writer, p *mva.Problem, labels [][]string, c constraint) {
	freq := make(map[float64]int)
	var order []float64
	for _, x := range c.costs {
		if freq[x] == 0 {
			order = append(order, x)
		}
		freq[x]++
	}
	def := order[0]
	for _, x := range order {
		if freq[x] > freq[def] {
			def = x
		}
	}
	n := len(c.costs) - freq[def]
	fmt.Fprintf(w, "\t<relation name=\"%s\" arity=\"%d\" nbTuples=\"%d\" semantics=\"soft\" defaultCost=\"%s\">",
		esc(c.relation), len(c.scope), n, fileCost(p, def))

	// Group the entries by cost, keeping table order inside each group.
	group := make(map[float64]int, len(order))
	for i, x := range order {
		group[x] = i
	}
	byGroup := make([][]int, len(order))
	for i, x := range c.costs {
		if x != def {
			g := group[x]
			byGroup[g] = append(byGroup[g], i)
		}
	}
	doms := make([]int, len(c.scope))
	for i, v := range c.scope {
		doms[i] = p.DomainSize(v)
	}
	vals := make([]int, len(c.scope))
	first := true
	for g, entries := range byGroup {
		for k, idx := range entries {
			if !first {
				w.WriteByte('|')
			}
			first = false
			if k == 0 {
				w.WriteString(fileCost(p, order[g]))
				w.WriteByte(':')
			}
			for j := len(doms) - 1; j >= 0; j-- {
				vals[j] = idx % doms[j]
				idx /= doms[j]
			}
			for j, v := range c.scope {
				if j > 0 {
					w.WriteByte(' ')
				}
				w.WriteString(labels[v][vals[j]])
			}
		}
	}
	fmt.Fprintf(w, "</relation>\n")
}

// fileCost formats an internal cost in the file's sense.
func fileCost(p *mva.Problem, c float64) string {
	if p.Sense == mva.Maximize {
		if mva.IsHard(c) {
			return "-infinity"
		}
		c = 0 - c
	} else if mva.IsHard(c) {
		return "infinity"
	}
	if c == math.Trunc(c) && math.Abs(c) < 1e21 {
		return strconv.FormatFloat(c, 'f', -1, 64)
	}
	return strconv.FormatFloat(c, 'g', -1, 64)
}
