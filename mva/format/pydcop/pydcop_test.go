package pydcop

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/internal/formattest"
	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
)

type wantFunc struct {
	name  string
	scope []string
	costs []float64
}

func checkFunctions(t *testing.T, p *mva.Problem, want []wantFunc) {
	t.Helper()
	if len(p.Functions) != len(want) {
		t.Fatalf("%d functions, want %d", len(p.Functions), len(want))
	}
	for i, w := range want {
		f := p.Functions[i]
		var scope []string
		for _, v := range f.Scope {
			scope = append(scope, p.Variables[v].Name)
		}
		if f.Name != w.name || !reflect.DeepEqual(scope, w.scope) {
			t.Errorf("function %d is %s%v, want %s%v", i, f.Name, scope, w.name, w.scope)
			continue
		}
		if !reflect.DeepEqual(f.Costs, w.costs) {
			t.Errorf("function %s costs\n%v\nwant\n%v", f.Name, f.Costs, w.costs)
		}
	}
}

func owners(p *mva.Problem) string {
	var b strings.Builder
	for i, v := range p.Variables {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(v.Name + ":" + p.Agents[v.Agent].Name)
	}
	return b.String()
}

func agentNames(p *mva.Problem) string {
	var names []string
	for _, a := range p.Agents {
		names = append(names, a.Name)
	}
	return strings.Join(names, " ")
}

func TestReadGraphColoring(t *testing.T) {
	p := formattest.ReadFile(t, Read, "graph_coloring.yaml")
	if p.Name != "graph coloring" || p.Sense != mva.Minimize || p.Offset != 0 {
		t.Errorf("header %q %v %v", p.Name, p.Sense, p.Offset)
	}
	for _, v := range p.Variables {
		if strings.Join(v.Domain, " ") != "R G" {
			t.Errorf("%s domain %v", v.Name, v.Domain)
		}
	}
	if got := agentNames(p); got != "a1 a2 a3 a4 a5" {
		t.Errorf("agents %q", got)
	}
	if got := owners(p); got != "v1:a1 v2:a2 v3:a3" {
		t.Errorf("owners %q", got)
	}
	checkFunctions(t, p, []wantFunc{
		{"cost_v1", []string{"v1"}, []float64{-0.1, 0.1}},
		{"cost_v2", []string{"v2"}, []float64{0.1, -0.1}},
		{"cost_v3", []string{"v3"}, []float64{0.1, -0.1}},
		{"diff_1_2", []string{"v1", "v2"}, []float64{1, 0, 0, 1}},
		{"diff_2_3", []string{"v3", "v2"}, []float64{1, 0, 0, 1}},
	})
}

func TestReadExtensional(t *testing.T) {
	p := formattest.ReadFile(t, Read, "extensional.yaml")
	if got := owners(p); got != "v1:a1 v2:a2 v3:a3 v4:a4" {
		t.Errorf("owners %q, want variable i on agent i", got)
	}
	if got := strings.Join(p.Variables[3].Domain, " "); got != "0 1 2" {
		t.Errorf("range domain %q, want 0 1 2", got)
	}
	h := mva.Hard
	checkFunctions(t, p, []wantFunc{
		{"c_1_2", []string{"v1", "v2"}, []float64{5, 8, 20, 3}},
		{"c_2_3", []string{"v2", "v3"}, []float64{5, 4, 3, 3}},
		{"c_3_4", []string{"v3", "v4"}, []float64{0, 2.5, 100, h, 100, 0}},
		{"pref_4", []string{"v4"}, []float64{1, 1, 7}},
	})
}

func TestReadExpressions(t *testing.T) {
	p := formattest.ReadFile(t, Read, "expressions.yaml")
	if p.Sense != mva.Maximize || p.Offset != -2.5 {
		t.Errorf("sense %v offset %v, want max and -2.5", p.Sense, p.Offset)
	}
	if got := agentNames(p); got != "home1 home2 a0" {
		t.Errorf("agents %q, want a0 added for the unplaced f", got)
	}
	if got := owners(p); got != "x:home1 y:home1 m:home2 f:a0" {
		t.Errorf("owners %q", got)
	}
	if got := strings.Join(p.Variables[3].Domain, " "); got != "true false" {
		t.Errorf("flags %q", got)
	}
	// Utilities printed by CPython for the same expressions, negated.
	neg := func(u ...float64) []float64 {
		for i := range u {
			u[i] = 0 - u[i]
		}
		return u
	}
	checkFunctions(t, p, []wantFunc{
		{"cost_m", []string{"m"}, neg(0, 2, 5)},
		{"gap", []string{"x", "y"}, neg(-5, -4, 0, -2, -4, -6, -5, -1, 0, -2, -7, -6, -3, -1, 0, -8, -7, -4, -2, -1, -10, -8, -6, -4, -2)},
		{"mode_power", []string{"x", "m", "y"}, neg(
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0,
			-1, -1, 0, 0, 0, -1, -1, 0, 0, 0, 0.25, 0.25, 0.25, 0.25, 0.25,
			0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1.0, 1.0, 1.0, 1.0, 1.0,
			1, 1, 2, 2, 2, 1, 1, 2, 2, 2, 2.25, 2.25, 2.25, 2.25, 2.25,
			1, 1, 2, 2, 2, 1, 1, 2, 2, 2, 4.0, 4.0, 4.0, 4.0, 4.0)},
		{"flag", []string{"f", "x", "y"}, neg(
			11, 12, 10, 11, 12, 12, 10, 11, 12, 10, 10, 11, 12, 10, 11, 11, 12, 10, 11, 12, 12, 10, 11, 12, 10,
			2, 3, 1, 2, 3, 3, 1, 2, 3, 1, 1, 2, 3, 1, 2, 2, 3, 1, 2, 3, 3, 1, 2, 3, 1)},
		{"fixed", []string{"x"}, neg(-1, 9, 19, 29, 39)},
	})
}

func TestReadSecp(t *testing.T) {
	p := formattest.ReadFile(t, Read, "secp.yaml")
	if got := owners(p); got != "l1:al1 l2:al2 l3:al3 m1:a0" {
		t.Errorf("owners %q", got)
	}
	if len(p.Functions) != 5 {
		t.Fatalf("%d functions, want 5", len(p.Functions))
	}
	if got := p.Functions[0].Costs; !reflect.DeepEqual(got, []float64{0, 0.7, 1.4, 2.0999999999999996, 2.8}) {
		t.Errorf("cost_l1 = %v", got)
	}
	m1c := p.Functions[3]
	if m1c.Name != "m1_c" || !reflect.DeepEqual(m1c.Scope, []int{3, 0, 1, 2}) || len(m1c.Costs) != 625 {
		t.Fatalf("m1_c = %s %v (%d entries)", m1c.Name, m1c.Scope, len(m1c.Costs))
	}
	// CPython: [0 if m1 == round(0.7*l1 + 0.5*l2 + 0.3*l3) else 1000 ...][:30]
	want := []float64{0, 0, 1000, 1000, 1000, 0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}
	if !reflect.DeepEqual(m1c.Costs[:30], want) {
		t.Errorf("m1_c starts %v, want %v", m1c.Costs[:30], want)
	}
	// m1 = 2 with l1 = 1, l2 = 1, l3 = 1: round(1.5) = 2 (half to even).
	if c := m1c.Costs[2*125+1*25+1*5+1]; c != 0 {
		t.Errorf("m1_c(2, 1, 1, 1) = %v, want 0", c)
	}
	r1 := p.Functions[4]
	if r1.Name != "r1" || !reflect.DeepEqual(r1.Scope, []int{3, 1}) || r1.Costs[0] != 60 || r1.Costs[3*5+3] != 0 {
		t.Errorf("r1 = %+v", r1)
	}
}

func TestPlacement(t *testing.T) {
	const head = "name: t\nobjective: min\ndomains: {d: {values: [0, 1]}}\nvariables: {x: {domain: d}, y: {domain: d}}\n"
	tests := []struct{ name, tail, agents, owners string }{
		{"no agents", "", "a0", "x:a0 y:a0"},
		{"one per variable", "agents: [p, q]\n", "p q", "x:p y:q"},
		{"mapping", "agents: {p: {capacity: 1}, q: }\n", "p q", "x:p y:q"},
		{"more agents", "agents: [p, q, r]\n", "p q r a0", "x:a0 y:a0"},
		{"existing a0", "agents: [p, a0, r]\n", "p a0 r", "x:a0 y:a0"},
		{"hint", "agents: [p, q]\ndistribution_hints: {must_host: {q: [y]}}\n", "p q a0", "x:a0 y:q"},
		{"hint on constraint", "constraints: {c: {type: intention, function: x + y}}\nagents: [p, q]\ndistribution_hints: {must_host: {p: [x, c], q: [y]}, host_with: {x: [y]}}\n", "p q", "x:p y:q"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Read(strings.NewReader(head+tt.tail), "t.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if got := agentNames(p); got != tt.agents {
				t.Errorf("agents %q, want %q", got, tt.agents)
			}
			if got := owners(p); got != tt.owners {
				t.Errorf("owners %q, want %q", got, tt.owners)
			}
		})
	}
}

func TestReadForms(t *testing.T) {
	in := `name: forms
objective: min
domains:
  a: {values: 1..3}
  b: {values: ['1', 1.50, 'two words', x|y, True]}
external_variables:
  e: {domain: a, initial_value: 2}
variables:
  u: {domain: a}
  w: {domain: b}
constraints:
  quoted:
    type: extensional
    variables: [u, w]
    default: 0
    values:
      1: 1 1 | 2 1.5 | 3 'two words'
      2: 1 "x|y" | 2 True
  expr:
    type: intention
    function: |-
      (u + e) * (1 if w == 'two words' else 0)
        + (w == 1.5)
        + (w is_true if False else 0) if False else (u + e) * (1 if w == 'two words' else 0) + (w == 1.5)
`
	_, err := Read(strings.NewReader(in), "forms.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), "forms.yaml:24: constraint expr: unexpected \"is_true\"") {
		t.Fatalf("error %v, want one at line 24", err)
	}
	in = strings.Replace(in, `        + (w is_true if False else 0) if False else (u + e) * (1 if w == 'two words' else 0) + (w == 1.5)
`, "", 1)
	p, err := Read(strings.NewReader(in), "forms.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Variables[1].Domain, "/"); got != "1/1.50/two words/x|y/True" {
		t.Errorf("labels %q", got)
	}
	checkFunctions(t, p, []wantFunc{
		// 1.5 matches the label 1.50 by Python's str(); True is a label.
		{"quoted", []string{"u", "w"}, []float64{1, 0, 0, 2, 0, 0, 1, 0, 0, 2, 0, 0, 1, 0, 0}},
		// '1' is a string, 1.50 a float, True a bool.
		{"expr", []string{"u", "w"}, []float64{0, 1, 3, 0, 0, 0, 1, 4, 0, 0, 0, 1, 5, 0, 0}},
	})
}

// readErrorCases are malformed files with the error they get; FuzzRead
// starts from them too.
func readErrorCases() []struct{ name, in, want string } {
	const h = "name: t\nobjective: min\n"                                      // lines 1-2
	const d = h + "domains:\n  d: {values: [R, G]}\n  n: {values: [0 .. 2]}\n" // lines 3-5
	const v = d + "variables:\n  x: {domain: d}\n  y: {domain: n}\n"           // lines 6-8
	return []struct{ name, in, want string }{
		{"empty", "", "bad.yaml: empty file"},
		{"yaml syntax", h + "domains: [\n", "bad.yaml:3: did not find expected node content"},
		{"not a mapping", "- 1\n", "bad.yaml:1: the file must be a mapping"},
		{"two documents", h + "---\n" + h, "bad.yaml:3: more than one YAML document"},
		{"no objective", "name: t\n", "bad.yaml:1: objective is mandatory"},
		{"unknown objective", "name: t\nobjective: maximize\n", "bad.yaml:2: unknown objective \"maximize\": want min or max"},
		{"duplicate key", h + "objective: max\n", "bad.yaml:3: the file: \"objective\" appears twice"},
		{"domain without values", h + "domains:\n  d: {type: x}\n", "bad.yaml:4: domain d has no values"},
		{"empty domain", h + "domains:\n  d: {values: []}\n", "bad.yaml:4: domain d is empty"},
		{"duplicate value", h + "domains:\n  d:\n    values: [a, b, a]\n", "bad.yaml:5: domain d: value \"a\" appears twice"},
		{"bad range", h + "domains:\n  d: {values: [a .. b]}\n", "bad.yaml:4: domain d: bad range \"a .. b\""},
		{"empty range", h + "domains:\n  d: {values: [3 .. 1]}\n", "bad.yaml:4: domain d: range \"3 .. 1\" is empty"},
		{"huge range", h + "domains:\n  d: {values: [0 .. 99999999999]}\n", "bad.yaml:4: domain d: range \"0 .. 99999999999\" has more than"},
		{"nested value", h + "domains:\n  d:\n    values: [a, [b]]\n", "bad.yaml:5: domain d: a value must be a single value"},
		{"unknown domain", d + "variables:\n  x: {domain: colours}\n", "bad.yaml:7: variable x: unknown domain \"colours\""},
		{"no domain", d + "variables:\n  x: {initial_value: R}\n", "bad.yaml:7: variable x has no domain"},
		{"variable twice", d + "variables:\n  x: {domain: d}\n  x: {domain: d}\n", "bad.yaml:8: variables: \"x\" appears twice"},
		{"no type", v + "constraints:\n  c: {function: x}\n", "bad.yaml:10: constraint c has no type"},
		{"unknown type", v + "constraints:\n  c:\n    type: intentional\n", "bad.yaml:11: constraint c: unknown type \"intentional\""},
		{"no function", v + "constraints:\n  c: {type: intention}\n", "bad.yaml:10: constraint c has no function"},
		{"source", v + "constraints:\n  c: {type: intention, source: f.py, function: source.f(x)}\n", "bad.yaml:10: constraint c: source file f.py cannot be opened when the DCOP is not read from a file"},
		{"syntax", v + "constraints:\n  c:\n    type: intention\n    function: 1 if x == 'R' 0\n", "bad.yaml:12: constraint c: conditional expression without else"},
		{"syntax literal", v + "constraints:\n  c:\n    type: intention\n    function: |\n      1 if x == 'R'\n        else 0 +\n", "bad.yaml:14: constraint c: unexpected end of expression"},
		{"statement", v + "constraints:\n  c:\n    type: intention\n    function: |\n      if x == 'R':\n          return 1\n      while y:\n          return 0\n", "bad.yaml:15: constraint c: while statements are not supported"},
		{"no return", v + "constraints:\n  c:\n    type: intention\n    function: |\n      if x == 'R':\n          return 1\n", "bad.yaml:12: constraint c: the function ends without return (it would return None) (with x=G)"},
		{"unknown name", v + "constraints:\n  c: {type: intention, function: x == z}\n", "bad.yaml:10: constraint c: unknown name z"},
		{"unknown function", v + "constraints:\n  c: {type: intention, function: sqrt(y)}\n", "bad.yaml:10: constraint c: unknown function sqrt"},
		{"division by zero", v + "constraints:\n  c:\n    type: intention\n    function: 10 / y\n", "bad.yaml:12: constraint c: division by zero (with y=0)"},
		{"string result", v + "constraints:\n  c: {type: intention, function: x}\n", "bad.yaml:10: constraint c: the expression returned the string \"R\", not a number (with x=R)"},
		{"type error", v + "constraints:\n  c: {type: intention, function: x < y}\n", "bad.yaml:10: constraint c: '<' not supported between instances of 'str' and 'int' (with x=R, y=0)"},
		{"nan result", v + "constraints:\n  c: {type: intention, function: \"float('nan') + y\"}\n", "bad.yaml:10: constraint c: the expression returned NaN (with y=0)"},
		{"minus inf", v + "constraints:\n  c: {type: intention, function: \"-float('inf')\"}\n", "bad.yaml:10: constraint c: a cost of -inf cannot be minimised"},
		{"cost function other var", v + "  z:\n    domain: n\n    cost_function: z + y\n", "bad.yaml:11: cost function of z: it may only use z, not y"},
		{"partial unknown", v + "constraints:\n  c:\n    type: intention\n    function: y\n    partial: {x: R}\n", "bad.yaml:13: constraint c: partial names x, which is not a variable of the function"},
		{"partial value", v + "constraints:\n  c:\n    type: intention\n    function: y\n    partial: {y: 7}\n", "bad.yaml:13: constraint c: value \"7\" is not in the domain of y"},
		{"ext no variables", v + "constraints:\n  c: {type: extensional, values: {1: R}}\n", "bad.yaml:10: constraint c has no variables"},
		{"ext unknown variable", v + "constraints:\n  c:\n    type: extensional\n    variables: [x, w]\n", "bad.yaml:12: constraint c: unknown variable \"w\""},
		{"ext repeated variable", v + "constraints:\n  c:\n    type: extensional\n    variables: [x, x]\n", "bad.yaml:12: constraint c: variable x appears twice"},
		{"ext arity", v + "constraints:\n  c:\n    type: extensional\n    variables: [x, y]\n    values:\n      1: R 0 | G\n", "bad.yaml:14: constraint c: assignment \"G\" has 1 values for 2 variables"},
		{"ext value", v + "constraints:\n  c:\n    type: extensional\n    variables: [x, y]\n    default: 0\n    values:\n      1: R 0\n      2: B 1\n", "bad.yaml:16: constraint c: value \"B\" is not in the domain of x"},
		{"ext twice", v + "constraints:\n  c:\n    type: extensional\n    variables: [x, y]\n    default: 0\n    values:\n      1: R 0\n      2: G 1 | R 0\n", "bad.yaml:16: constraint c: assignment \"R 0\" is given twice"},
		{"ext missing", v + "constraints:\n  c:\n    type: extensional\n    variables: [x, y]\n    values:\n      1: R 0 | R 1 | R 2 | G 0\n", "bad.yaml:10: constraint c: no cost for x=G, y=1 and no default"},
		{"ext bad cost", v + "constraints:\n  c:\n    type: extensional\n    variables: x\n    default: 0\n    values:\n      high: R\n", "bad.yaml:15: constraint c: cost \"high\" is not a number"},
		{"ext nan cost", v + "constraints:\n  c:\n    type: extensional\n    variables: x\n    default: .nan\n", "bad.yaml:13: constraint c: default: NaN is not a cost"},
		{"ext empty tuple", v + "constraints:\n  c:\n    type: extensional\n    variables: x\n    default: 0\n    values:\n      1: R |\n", "bad.yaml:15: constraint c: empty assignment in \"R |\""},
		{"ext quote", v + "constraints:\n  c:\n    type: extensional\n    variables: x\n    default: 0\n    values:\n      1: \"'R\"\n", "bad.yaml:15: constraint c: unterminated quote"},
		{"agent twice", v + "agents: [a, b, a]\n", "bad.yaml:9: agent a appears twice"},
		{"hint unknown agent", v + "agents: [a]\ndistribution_hints:\n  must_host:\n    b: [x]\n", "bad.yaml:12: must_host: unknown agent \"b\""},
		{"hint unknown variable", v + "agents: [a]\ndistribution_hints:\n  must_host:\n    a: [x, q]\n", "bad.yaml:12: must_host: unknown variable or constraint \"q\""},
		{"hint two agents", v + "agents: [a, b]\ndistribution_hints:\n  must_host:\n    a: [x]\n    b: [x]\n", "bad.yaml:13: must_host: variable x is already hosted by a"},
		{"external no initial", d + "external_variables:\n  e: {domain: d}\n", "bad.yaml:7: external variable e has no initial_value"},
		{"external bad initial", d + "external_variables:\n  e: {domain: d, initial_value: B}\n", "bad.yaml:7: external variable e: initial value \"B\" is not in its domain"},
		{"merge key", d + "variables:\n  x: &v {domain: d}\n  y:\n    <<: *v\n", "bad.yaml:9: variable y: YAML merge keys (<<) are not supported"},
	}
}

func TestReadErrors(t *testing.T) {
	tests := readErrorCases()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.in), "bad.yaml")
			formattest.CheckParseErrorPrefix(t, err, tt.want)
		})
	}
}

// TestLimits checks the allocation limits with small ones, so as not to
// allocate gigabytes in a test.
func TestLimits(t *testing.T) {
	const h = "name: t\nobjective: min\n"
	lim := limits{table: 100, entries: 250, labels: 30}
	tests := []struct{ name, in, want string }{
		{"range", h + "domains:\n  d: {values: [0 .. 30]}\n", "bad.yaml:4: domain d: range \"0 .. 30\" has more than 30 values"},
		{"range overflow", h + "domains:\n  d: {values: [-9223372036854775808 .. 9223372036854775807]}\n", "bad.yaml:4: domain d: range"},
		{"domain not a mapping", h + "domains:\n  d: {values: [0 .. 19]}\n  e: {values: [0 .. 9]}\n  f: [a]\n", "bad.yaml:6: domain f must be a mapping"},
		{"labels", h + "domains:\n  d: {values: [0 .. 19]}\n  e: {values: [0 .. 9]}\n  f: {values: [a]}\n", "bad.yaml:6: domain f: more than 30 values in all domains"},
		{"table", h + "domains:\n  d: {values: [0 .. 10]}\nvariables:\n  a: {domain: d}\n  b: {domain: d}\nconstraints:\n  c: {type: intention, function: a + b}\n", "bad.yaml:9: constraint c: table of 121 entries is larger than 100"},
		{"overflow", h + "domains:\n  d: {values: [0 .. 29]}\nvariables:\n  a: {domain: d}\n  b: {domain: d}\n  c: {domain: d}\n  e: {domain: d}\n  f: {domain: d}\n  g: {domain: d}\n  i: {domain: d}\nconstraints:\n  c: {type: extensional, variables: [a, b, c, e, f, g, i], default: 0}\n", "bad.yaml:14: constraint c: table over 7 variables is too large"},
		{"entries", h + "domains:\n  d: {values: [0 .. 9]}\nvariables:\n  a: {domain: d}\n  b: {domain: d}\nconstraints:\n  c1: {type: extensional, variables: [a, b], default: 0}\n  c2: {type: extensional, variables: [a, b], default: 0}\n  c3: {type: extensional, variables: [a, b], default: 0}\n", "bad.yaml:11: constraint c3: tables hold more than 250 entries in all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := read(strings.NewReader(tt.in), "bad.yaml", lim, nil)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error\n%v\nwant prefix\n%q", err, tt.want)
			}
		})
	}
	// The default limit on one table is checked before allocating.
	in := h + "domains:\n  d: {values: [0 .. 4096]}\nvariables:\n  a: {domain: d}\n  b: {domain: d}\nconstraints:\n  c: {type: extensional, variables: [a, b]}\n"
	if _, err := Read(strings.NewReader(in), "bad.yaml"); err == nil || !strings.HasPrefix(err.Error(), "bad.yaml:9: constraint c: table of 16785409 entries is larger than 16777216") {
		t.Errorf("error %v, want the table limit", err)
	}
	// A long expression is reported around the error, not in full.
	in = h + "variables: {}\nconstraints:\n  c: {type: intention, function: " + strings.Repeat("1 + ", 1000) + "* 2}\n"
	if _, err := Read(strings.NewReader(in), "bad.yaml"); err == nil || len(err.Error()) > 200 || !strings.Contains(err.Error(), "+ 1 + * 2") {
		t.Errorf("error %v, want a short excerpt", err)
	}
}

func TestRoundTripFiles(t *testing.T) {
	for _, name := range []string{"graph_coloring.yaml", "extensional.yaml", "expressions.yaml", "secp.yaml"} {
		t.Run(name, func(t *testing.T) {
			p := formattest.ReadFile(t, Read, name)
			q, out := formattest.RoundTrip(t, Write, Read, p, "rt.yaml")
			if !reflect.DeepEqual(p, q) {
				t.Errorf("round trip changed the problem:\n%+v\n%+v\n%s", p, q, out)
			}
		})
	}
}

// randomProblem makes a seeded random problem: awkward names and labels,
// several agents, both senses, hard entries, an offset and costs that are
// integers, fractions, large and tiny.
func randomProblem(seed uint64) *mva.Problem {
	labels := []string{"0", "1", "2", "R", "G", "true", "null", "~", "1.50", "two words", "x|y", "'q", `"dq`, "", "é", "- a", "#c", "a: b", "[x]", "-1", ".inf", "0x1f", "1..2"}
	return randprob.Make(rand.New(rand.NewPCG(seed, 7)), randprob.Shape{
		Name:      func(r *rand.Rand) string { return []string{"", "rand", "a: b", "42"}[r.IntN(4)] },
		AnySense:  true,
		Agents:    randprob.Range{Min: 1, Max: 4},
		Vars:      randprob.Range{Min: 1, Max: 6},
		Domain:    randprob.Range{Min: 1, Max: 4},
		Functions: randprob.Range{Min: 0, Max: 5},
		Arity:     randprob.Range{Min: 1, Max: 3},
		AgentName: func(i int) string { return []string{"a", "1", "agent x", "true"}[i] + strconv.Itoa(i) },
		VarName: func(r *rand.Rand, i int) string {
			return []string{"v", "x y", "1", "null"}[r.IntN(4)] + strconv.Itoa(i)
		},
		// A lone label that looks like a range would be read as one.
		Labels: func(r *rand.Rand, _, d int) []string {
			var dom []string
			for _, k := range r.Perm(len(labels)) {
				if len(dom) < d && (d > 1 || !strings.Contains(labels[k], "..")) {
					dom = append(dom, labels[k])
				}
			}
			return dom
		},
		Costs: func(r *rand.Rand, _ int, costs []float64) {
			for j := range costs {
				switch r.IntN(6) {
				case 0:
					costs[j] = mva.Hard
				case 1:
					costs[j] = float64(r.IntN(5))
				case 2:
					costs[j] = (r.Float64() - 0.5) * 1e20
				case 3:
					costs[j] = r.Float64() * 1e-9
				default:
					costs[j] = math.Round((r.Float64()-0.5)*1000) / 8
				}
			}
		},
		Offset: func(r *rand.Rand) float64 { return []float64{0, 12.5, -3, 1e-7}[r.IntN(4)] },
	})
}

func TestRoundTripRandom(t *testing.T) {
	for seed := range uint64(300) {
		p := randomProblem(seed)
		q, out := formattest.RoundTrip(t, Write, Read, p, "rt.yaml")
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("seed %d: round trip changed the problem:\n%+v\n%+v\n%s", seed, p, q, out)
		}
	}
}

func TestWriteZeroArity(t *testing.T) {
	p := &mva.Problem{
		Sense:     mva.Maximize,
		Agents:    []mva.Agent{{Name: "a"}},
		Variables: []mva.Variable{{Name: "x", Domain: []string{"0"}}},
		Functions: []mva.Function{{Name: "k", Costs: []float64{4}}, {Name: "offset", Scope: []int{0}, Costs: []float64{1}}},
		Offset:    1.5,
	}
	q, out := formattest.RoundTrip(t, Write, Read, p, "rt.yaml")
	if q.Offset != 5.5 || len(q.Functions) != 1 || q.Functions[0].Name != "offset" {
		t.Errorf("got offset %v and %+v, want 5.5 and the unary function\n%s", q.Offset, q.Functions, out)
	}
	if !strings.Contains(string(out), "function: \"-5.5\"") {
		t.Errorf("the constant is not written as the utility -5.5:\n%s", out)
	}
	p.Functions[0].Costs[0] = mva.Hard
	q, out = formattest.RoundTrip(t, Write, Read, p, "rt.yaml")
	if len(q.Functions) != 2 || !mva.IsHard(q.Functions[1].Costs[0]) || len(q.Functions[1].Scope) != 0 {
		t.Errorf("a hard constant did not come back as a hard zero-arity function: %+v\n%s", q.Functions, out)
	}
}

func TestWriteFormat(t *testing.T) {
	p := formattest.ReadFile(t, Read, "extensional.yaml")
	var buf bytes.Buffer
	if err := Write(&buf, p); err != nil {
		t.Fatal(err)
	}
	want := `name: graph coloring tutorial
objective: min
domains:
  d0:
    values: [R, G]
  d1:
    values: [0, 1, 2]
variables:
  v1: {domain: d0}
  v2: {domain: d0}
  v3: {domain: d0}
  v4: {domain: d1}
constraints:
  c_1_2:
    type: extensional
    variables: [v1, v2]
    default: 5
    values:
      8: R G
      20: G R
      3: G G
  c_2_3:
    type: extensional
    variables: [v2, v3]
    default: 3
    values:
      5: R R
      4: R G
  c_3_4:
    type: extensional
    variables: [v3, v4]
    default: 0
    values:
      2.5: R 1
      100: R 2 | G 1
      .inf: G 0
  pref_4:
    type: extensional
    variables: [v4]
    default: 1
    values:
      7: "2"
agents: [a1, a2, a3, a4]
distribution_hints:
  must_host:
    a1: [v1]
    a2: [v2]
    a3: [v3]
    a4: [v4]
`
	if buf.String() != want {
		t.Errorf("Write =\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestYAMLNumber(t *testing.T) {
	for c, want := range map[float64]string{
		0: "0", -3: "-3", 2.5: "2.5", 1e20: "1.0e+20", 1.5e-9: "1.5e-09", 123456789012345: "123456789012345",
		1234567890123456: "1.234567890123456e+15", math.Inf(1): ".inf", math.Inf(-1): "-.inf", 0.1: "0.1",
	} {
		if got := yamlNumber(c); got != want {
			t.Errorf("yamlNumber(%v) = %q, want %q", c, got, want)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	base := func() *mva.Problem {
		return &mva.Problem{
			Agents:    []mva.Agent{{Name: "a"}},
			Variables: []mva.Variable{{Name: "x", Domain: []string{"0", "1"}}},
		}
	}
	p := base()
	p.Variables[0].Domain = []string{"0..3"}
	if err := Write(&bytes.Buffer{}, p); err == nil || !strings.Contains(err.Error(), "range") {
		t.Errorf("single value with ..: err = %v", err)
	}
	p = base()
	p.Variables[0].Domain = []string{"it's \"x\"", "b"}
	if err := Write(&bytes.Buffer{}, p); err == nil || !strings.Contains(err.Error(), "quotes") {
		t.Errorf("label with both quotes: err = %v", err)
	}
	p = base()
	p.Variables[0].Domain = []string{"b", "b"}
	if err := Write(&bytes.Buffer{}, p); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("repeated label: err = %v", err)
	}
	p = base()
	p.Agents = append(p.Agents, mva.Agent{Name: "a"})
	if err := Write(&bytes.Buffer{}, p); err == nil || !strings.Contains(err.Error(), "agent name") {
		t.Errorf("repeated agent: err = %v", err)
	}
	p = base()
	p.Offset = math.NaN()
	if err := Write(&bytes.Buffer{}, p); !errors.Is(err, mva.ErrInvalid) {
		t.Errorf("invalid problem: err = %v", err)
	}
}

func FuzzRead(f *testing.F) {
	formattest.AddFiles(f, "graph_coloring.yaml", "extensional.yaml", "expressions.yaml", "secp.yaml",
		"pydcop/graph_coloring1_func.yaml", "pydcop/SimpleHouse.yml", "pydcop/graph_coloring_tuto_max.yaml")
	f.Add([]byte("objective: min\ndomains: {d: {values: [R, G]}}\nvariables: {x: {domain: d}, y: {domain: d}}\n" +
		"constraints:\n  c:\n    type: intention\n    source: f.py\n    function: source.weighted(x, y, 2) + 1\n" +
		"  e:\n    type: intention\n    function: |\n      if x == y:\n          k = 3\n      else:\n          k = 0\n      return k\n"))
	for _, c := range readErrorCases() {
		f.Add([]byte(c.in))
	}
	f.Add([]byte("name: t\nobjective: max\ndomains: {d: {values: 0..3}}\nvariables: {x: {domain: d}}\nconstraints: {c: {type: intention, function: x ** 2}}\n"))
	f.Add([]byte("objective: min\ndomains:\n  d: &d {values: [a, 'b c']}\nvariables: {x: {domain: d}, y: {domain: d}}\nconstraints:\n  c: {type: extensional, variables: [x, y], default: .inf, values: {1: a 'b c' | 'b c' a}}\n"))
	// Source files are testModule, whatever their name.
	open := func(string) ([]byte, error) { return []byte(testModule), nil }
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadSources(bytes.NewReader(data), "fuzz.yaml", open)
		if !formattest.Parsed(t, p, err) {
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, p); err != nil {
			return // labels that no tuple can hold are refused, not a bug
		}
		q, err := Read(&buf, "fuzz2.yaml")
		if err != nil {
			t.Fatalf("Read(Write(p)): %v\n%s", err, buf.Bytes())
		}
		if len(q.Variables) != len(p.Variables) || len(q.Agents) != len(p.Agents) {
			t.Fatalf("round trip changed the problem's shape")
		}
	})
}
