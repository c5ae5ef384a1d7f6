package pydcop

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/hearth-dcop/hearth/mva"
)

// Write writes p as a pyDCOP YAML file that Read turns back into the same
// problem. See the package documentation for the layout.
func Write(w io.Writer, p *mva.Problem) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("pydcop: %w", err)
	}
	neg := p.Sense == mva.Maximize
	// number turns an internal cost into the file's number.
	number := func(c float64) float64 {
		if neg {
			return 0 - c
		}
		return c
	}

	root := mappingNode(false)
	add(root, "name", strNode(p.Name))
	add(root, "objective", strNode(p.Sense.String()))

	domains := mappingNode(false)
	domainOf := make([]string, len(p.Variables))
	byLabels := make(map[string]string)
	for i, v := range p.Variables {
		key := strings.Join(v.Domain, "\x00")
		name, ok := byLabels[key]
		if !ok {
			if err := checkLabels(v); err != nil {
				return err
			}
			name = "d" + strconv.Itoa(len(byLabels))
			byLabels[key] = name
			values := seqNode()
			for _, l := range v.Domain {
				values.Content = append(values.Content, plainNode(l))
			}
			d := mappingNode(false)
			add(d, "values", values)
			add(domains, name, d)
		}
		domainOf[i] = name
	}
	add(root, "domains", domains)

	variables := mappingNode(false)
	for i, v := range p.Variables {
		m := mappingNode(true)
		add(m, "domain", strNode(domainOf[i]))
		add(variables, v.Name, m)
	}
	add(root, "variables", variables)

	constraints := mappingNode(false)
	used := make(map[string]bool, len(p.Functions)+1)
	unique := func(name string, i int) string {
		if name == "" {
			name = "c" + strconv.Itoa(i)
		}
		n := name
		for k := 2; used[n]; k++ {
			n = name + "_" + strconv.Itoa(k)
		}
		used[n] = true
		return n
	}
	constant := p.Offset
	for i, f := range p.Functions {
		if len(f.Scope) == 0 {
			constant += f.Costs[0]
			continue
		}
		c, err := extensionalNode(p, f, number)
		if err != nil {
			return fmt.Errorf("pydcop: function %s: %w", f.Name, err)
		}
		add(constraints, unique(f.Name, i), c)
	}
	if constant != 0 {
		c := mappingNode(false)
		add(c, "type", strNode("intention"))
		add(c, "function", strNode(pyNumber(number(constant))))
		add(constraints, unique("offset", len(p.Functions)), c)
	}
	add(root, "constraints", constraints)

	agents := seqNode()
	hosted := make([][]string, len(p.Agents))
	seen := make(map[string]bool, len(p.Agents))
	for _, a := range p.Agents {
		if seen[a.Name] {
			return fmt.Errorf("pydcop: agent name %q is used twice", a.Name)
		}
		seen[a.Name] = true
		agents.Content = append(agents.Content, strNode(a.Name))
	}
	for _, v := range p.Variables {
		hosted[v.Agent] = append(hosted[v.Agent], v.Name)
	}
	add(root, "agents", agents)
	mustHost := mappingNode(false)
	for a, vars := range hosted {
		if len(vars) == 0 {
			continue
		}
		list := seqNode()
		for _, v := range vars {
			list.Content = append(list.Content, strNode(v))
		}
		add(mustHost, p.Agents[a].Name, list)
	}
	if len(mustHost.Content) > 0 {
		hints := mappingNode(false)
		add(hints, "must_host", mustHost)
		add(root, "distribution_hints", hints)
	}

	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return fmt.Errorf("pydcop: %w", err)
	}
	return enc.Close()
}

// checkLabels refuses domains that Read would not give back.
func checkLabels(v mva.Variable) error {
	if len(v.Domain) == 1 && strings.Contains(v.Domain[0], "..") {
		return fmt.Errorf("pydcop: variable %s: the single value %q would read as a range", v.Name, v.Domain[0])
	}
	seen := make(map[string]bool, len(v.Domain))
	for _, l := range v.Domain {
		if seen[l] {
			return fmt.Errorf("pydcop: variable %s: value %q appears twice", v.Name, l)
		}
		seen[l] = true
		if _, err := quoteLabel(l); err != nil {
			return fmt.Errorf("pydcop: variable %s: %w", v.Name, err)
		}
	}
	return nil
}

// extensionalNode writes f as an extensional constraint whose default is
// its most frequent cost.
func extensionalNode(p *mva.Problem, f mva.Function, number func(float64) float64) (*yaml.Node, error) {
	keys := make([]string, len(f.Costs))
	count := make(map[string]int)
	var order []string
	for e, c := range f.Costs {
		k := yamlNumber(number(c))
		keys[e] = k
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	def := order[0]
	for _, k := range order {
		if count[k] > count[def] {
			def = k
		}
	}
	tuples := make(map[string][]string, len(order))
	idx := make([]int, len(f.Scope))
	tok := make([]string, len(f.Scope))
	for _, k := range keys {
		if k != def {
			for j, v := range f.Scope {
				l, err := quoteLabel(p.Variables[v].Domain[idx[j]])
				if err != nil {
					return nil, err
				}
				tok[j] = l
			}
			tuples[k] = append(tuples[k], strings.Join(tok, " "))
		}
		for j := len(f.Scope) - 1; j >= 0; j-- {
			if idx[j]++; idx[j] < p.DomainSize(f.Scope[j]) {
				break
			}
			idx[j] = 0
		}
	}

	c := mappingNode(false)
	add(c, "type", strNode("extensional"))
	vars := seqNode()
	for _, v := range f.Scope {
		vars.Content = append(vars.Content, strNode(p.Variables[v].Name))
	}
	add(c, "variables", vars)
	add(c, "default", plainNode(def))
	values := mappingNode(false)
	for _, k := range order {
		if k == def {
			continue
		}
		values.Content = append(values.Content, plainNode(k), strNode(strings.Join(tuples[k], " | ")))
	}
	if len(values.Content) == 0 {
		values.Style = yaml.FlowStyle
	}
	add(c, "values", values)
	return c, nil
}

// quoteLabel returns a label as a tuple token, quoted when it holds white
// space or "|", starts with a quote, or is empty.
func quoteLabel(l string) (string, error) {
	if l != "" && !strings.ContainsRune(l, '|') && strings.IndexFunc(l, unicode.IsSpace) < 0 && l[0] != '\'' && l[0] != '"' {
		return l, nil
	}
	switch {
	case !strings.ContainsRune(l, '\''):
		return "'" + l + "'", nil
	case !strings.ContainsRune(l, '"'):
		return `"` + l + `"`, nil
	}
	return "", fmt.Errorf("value %q holds both kinds of quotes and cannot appear in a tuple", l)
}

// yamlNumber formats a cost as a YAML number that both yaml.v3 (YAML 1.2)
// and PyYAML (YAML 1.1) read back exactly: integers plainly, other values
// with the shortest digits, a decimal point and a signed exponent.
func yamlNumber(c float64) string {
	switch {
	case math.IsInf(c, 1):
		return ".inf"
	case math.IsInf(c, -1):
		return "-.inf"
	case c == math.Trunc(c) && math.Abs(c) < 1e15:
		return strconv.FormatInt(int64(c), 10)
	}
	s := strconv.FormatFloat(c, 'g', -1, 64)
	mant, exp, hasExp := strings.Cut(s, "e")
	if !strings.ContainsRune(mant, '.') {
		mant += ".0"
	}
	if hasExp {
		return mant + "e" + exp
	}
	return mant
}

// pyNumber formats a number as a Python expression.
func pyNumber(c float64) string {
	switch {
	case math.IsInf(c, 1):
		return "float('inf')"
	case math.IsInf(c, -1):
		return "-float('inf')"
	case c == math.Trunc(c) && math.Abs(c) < 1e15:
		return strconv.FormatInt(int64(c), 10)
	}
	return strconv.FormatFloat(c, 'g', -1, 64)
}

func mappingNode(flow bool) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if flow {
		n.Style = yaml.FlowStyle
	}
	return n
}

func seqNode() *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
}

// strNode is a string, quoted by the encoder when its plain form would
// read as another type.
func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// plainNode is a scalar written as it is when YAML allows (quoted only when
// the syntax requires it), so that 1 stays an integer and .inf a float.
func plainNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: s}
}

func add(m *yaml.Node, key string, val *yaml.Node) {
	m.Content = append(m.Content, strNode(key), val)
}
