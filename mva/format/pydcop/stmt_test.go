package pydcop

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/internal/formattest"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// runBody compiles a function body, binds the names it reads in order to
// env's values and returns "type:str(value)".
func runBody(src string, mod *module, env map[string]value) (string, []string, error) {
	prog, names, err := compile(src, mod)
	if err != nil {
		return "", nil, err
	}
	if err := prog.bind(names, nil); err != nil {
		return "", names, err
	}
	vals := make([]value, len(names))
	for i, n := range names {
		v, ok := env[n]
		if !ok {
			return "", names, fmt.Errorf("test gives no value for %s", n)
		}
		vals[i] = v
	}
	v, err := prog.eval(vals)
	if err != nil {
		return "", names, err
	}
	return v.typeName() + ":" + v.String(), names, nil
}

// TestBodies checks function bodies against what CPython returns for the
// same text wrapped in a def (printed as type:str(value)), pyDCOP's way of
// running a function with return statements.
func TestBodies(t *testing.T) {
	i, f, s := intValue, floatValue, strValue
	elifs := "if a < 0:\n    return -1\nelif a == 0:\n    return 0\nelif a < 10:\n    return 1\nreturn 2"
	colours := "if a == 'R':\n    return 10\nelif a == 'G':\n    c = 3\n    c **= 2\n    return c // 2\nelse:\n    pass\nreturn -1"
	tests := []struct {
		src   string
		env   map[string]value
		names string
		want  string
	}{
		{"if a == b:\n    return 1\nelse:\n    return 0", map[string]value{"a": i(1), "b": i(1)}, "a b", "int:1"},
		{elifs, map[string]value{"a": i(5)}, "a", "int:1"},
		{elifs, map[string]value{"a": i(50)}, "a", "int:2"},
		{elifs, map[string]value{"a": i(-3)}, "a", "int:-1"},
		{"d = abs(a - b)\nd *= 2\nreturn d if d < 5 else 5.0", map[string]value{"a": i(1), "b": i(4)}, "a b", "float:5.0"},
		{"d = abs(a - b)\nd *= 2\nreturn d if d < 5 else 5.0", map[string]value{"a": i(1), "b": i(2)}, "a b", "int:2"},
		{"x = a\nif x:\n    x = x + 1\nreturn x", map[string]value{"a": i(0)}, "a", "int:0"},
		{"if a: return 1\nelse: return 2.5", map[string]value{"a": i(0)}, "a", "float:2.5"},
		{"pass\nreturn (a +\n        b) / 2", map[string]value{"a": i(1), "b": i(2)}, "a b", "float:1.5"},
		{"# cost\n\nreturn a + a  # trailing\n", map[string]value{"a": s("R")}, "a", "str:RR"},
		{"return a \\\n  + 1", map[string]value{"a": boolValue(true)}, "a", "int:2"},
		{"\"\"\"doc\nstring\"\"\"\nreturn a", map[string]value{"a": i(3)}, "a", "int:3"},
		{"if a > 0:\n    if b > 0:\n        return 1\n    return 2\nreturn 3", map[string]value{"a": i(1), "b": i(0)}, "a b", "int:2"},
		{colours, map[string]value{"a": s("G")}, "a", "int:4"},
		{colours, map[string]value{"a": s("B")}, "a", "int:-1"},
		{"if a:\n    pass\nreturn f", map[string]value{"a": i(1), "f": f(0.5)}, "a f", "float:0.5"},
		// A YAML block keeps the indentation of its first line for all.
		{"  if a:\n    return 1\n  return 0", map[string]value{"a": i(1)}, "a", "int:1"},
	}
	for _, tt := range tests {
		got, names, err := runBody(tt.src, nil, tt.env)
		if err != nil {
			t.Errorf("%q: %v", tt.src, err)
			continue
		}
		if got != tt.want || strings.Join(names, " ") != tt.names {
			t.Errorf("%q = %s reading %v, want %s reading %s", tt.src, got, names, tt.want, tt.names)
		}
	}
}

func TestBodyRuntimeErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"if a: y = 1\nreturn y", "local variable y is used before it is assigned"},
		{"if a:\n    return 1", "the function ends without return"},
		{"y = 1 / a\nreturn y", "division by zero"},
	}
	for _, tt := range tests {
		got, _, err := runBody(tt.src, nil, map[string]value{"a": intValue(0)})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q = %s, %v; want error %q", tt.src, got, err, tt.want)
		}
	}
}

// deepIfs returns n if statements, each inside the previous one.
func deepIfs(n int) string {
	var b strings.Builder
	for k := range n {
		b.WriteString(strings.Repeat(" ", k) + "if a:\n")
	}
	return b.String() + strings.Repeat(" ", n) + "return 1"
}

func TestBodyErrors(t *testing.T) {
	tests := []struct {
		src  string
		pos  int
		want string
	}{
		{"for i in a:\n    return i", 0, "for statements are not supported"},
		{"while a:\n    return 1", 0, "while statements are not supported"},
		{"import os\nreturn 1", 0, "import statements are not supported"},
		{"if a\n    return 1", 4, `expected ":"`},
		{"return 1\n  return 2", 11, "unexpected indent"},
		{"if a:\nreturn 1", 4, "expected an indented block"},
		{"if a:\n    return 1\n  return 2", 21, "unindent does not match any outer indentation level"},
		{"return", 0, "return needs a value"},
		{"else:\n    return 1", 0, "else without if"},
		{"def f():\n    return 1\nreturn f()", 0, "nested functions (def) are not supported"},
		{"return source.f(a)", 7, "the constraint has no source"},
		{"return math.sqrt(a)", 11, "attribute access (.) is not supported"},
		{"a, b = 1, 2\nreturn a", 1, `unexpected ","`},
		{"a + 1 = 2\nreturn a", 6, "only assignments to a single name are supported"},
		{"return a\nreturn b if", 20, "unexpected end of expression"},
		{"return '''a", 7, "unterminated string"},
		{"if a: return 1 return 2", 15, `unexpected "return"`},
		{"return z", 7, "unknown name z"},
		{deepIfs(300), 200*199/2 + 6*200 + 200, "blocks nested more than 200 levels deep"},
	}
	for _, tt := range tests {
		_, _, err := runBody(tt.src, nil, map[string]value{"a": intValue(1), "b": intValue(2), "z": intValue(0)})
		var ee *exprError
		if tt.want == "unknown name z" {
			// z is read, so it is a variable: bind it to nothing.
			prog, _, cerr := compile(tt.src, nil)
			if cerr != nil {
				t.Fatal(cerr)
			}
			err = prog.bind(nil, nil)
		}
		if !errors.As(err, &ee) {
			t.Errorf("%q: error %v, want an exprError %q", tt.src, err, tt.want)
			continue
		}
		if !strings.Contains(ee.msg, tt.want) || ee.pos != tt.pos {
			t.Errorf("%q: error %q at %d, want %q at %d", tt.src, ee.msg, ee.pos, tt.want, tt.pos)
		}
	}
}

const testModule = `"""Functions for a test DCOP."""

# a comment
def diff(a, b):
    """1 when a and b are equal."""
    if a == b:
        return 1
    return 0

def weighted(a, b, w):
    d = diff(a, b) * w
    return d + bonus(a)

def bonus(x):
    if x == 'R': return 0.5
    return 0
`

func TestModule(t *testing.T) {
	mod, err := parseModule("f.py", testModule)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		src  string
		env  map[string]value
		want string
	}{
		{"source.diff(x, y)", map[string]value{"x": strValue("R"), "y": strValue("R")}, "int:1"},
		{"source.weighted(x, y, 10)", map[string]value{"x": strValue("R"), "y": strValue("R")}, "float:10.5"},
		{"source.weighted(x, y, 10)", map[string]value{"x": strValue("G"), "y": strValue("R")}, "int:0"},
		{"k = source.bonus(x)\nreturn k * 4", map[string]value{"x": strValue("R")}, "float:2.0"},
	}
	for _, tt := range tests {
		got, _, err := runBody(tt.src, mod, tt.env)
		if err != nil || got != tt.want {
			t.Errorf("%q = %s, %v; want %s", tt.src, got, err, tt.want)
		}
	}
	for _, tt := range []struct {
		src  string
		pos  int
		want string
	}{
		{"source.nothing(x)", 7, "unknown function nothing: f.py defines diff, weighted, bonus"},
		{"source.diff(x)", 7, "diff() takes 2 argument(s), got 1"},
		{"source.diff", 6, "write source.function(arguments)"},
		{"diff(x, y)", 0, "unknown function diff"},
	} {
		_, _, err := compile(tt.src, mod)
		var ee *exprError
		if !errors.As(err, &ee) || !strings.Contains(ee.msg, tt.want) || ee.pos != tt.pos {
			t.Errorf("%q: error %v, want %q at %d", tt.src, err, tt.want, tt.pos)
		}
	}
}

func TestModuleErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"import math\n", "f.py:1: imports are not supported"},
		{"def f(a):\n    return a\nfrom os import path\n", "f.py:3: imports are not supported"},
		{"x = 1\n", "f.py:1: a source file may only define functions"},
		{"def f(a):\n    return f(a)\n", "f.py:2: function f calls"},
		{"def f(a):\n    return g(a)\n\ndef g(b):\n    return f(b) + 1\n", "recursion is not supported"},
		{"def f(a):\n    return g(a)\n", "f.py:2: unknown function g: f.py defines f"},
		{"def f(a):\n    return b\n", "f.py:2: unknown name b"},
		{"def f(a=1):\n    return a\n", "f.py:1: parameters must be plain names"},
		{"def f(a, a):\n    return a\n", "f.py:1: parameter a appears twice"},
		{"def f(a):\n    return a\ndef f(b):\n    return b\n", "f.py:3: function f is defined twice"},
		{"def f(a):\n    for x in a:\n        return x\n", "f.py:2: for statements are not supported"},
		{"  def f(a):\n    return a\n", "f.py:1: unexpected indent"},
		{"def f(a):\nreturn a\n", "f.py:1: expected an indented block"},
	}
	for _, tt := range tests {
		in := "objective: min\ndomains: {d: {values: [1, 2]}}\nvariables: {x: {domain: d}}\n" +
			"constraints:\n  c: {type: intention, source: f.py, function: source.f(x)}\n"
		_, err := ReadSources(strings.NewReader(in), "dcop.yaml", func(string) ([]byte, error) { return []byte(tt.src), nil })
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.src, err, tt.want)
		}
	}
}

// TestSourceRuntimeError checks that an error inside a source function
// names the source file's line and the constraint's assignment.
func TestSourceRuntimeError(t *testing.T) {
	in := "objective: min\ndomains: {d: {values: [0, 1]}}\nvariables: {x: {domain: d}}\n" +
		"constraints:\n  c: {type: intention, source: f.py, function: source.inv(x)}\n"
	src := "def inv(a):\n    b = a\n    return 1 / b\n"
	_, err := ReadSources(strings.NewReader(in), "dcop.yaml", func(string) ([]byte, error) { return []byte(src), nil })
	want := "dcop.yaml:5: constraint c: f.py:3: in inv: division by zero (with x=0)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	_, err = Read(strings.NewReader(in), "dcop.yaml")
	formattest.CheckParseError(t, err, "dcop.yaml", 5, "source file f.py cannot be opened")
	_, err = ReadSources(strings.NewReader(in), "dcop.yaml", func(string) ([]byte, error) { return nil, os.ErrNotExist })
	formattest.CheckParseError(t, err, "dcop.yaml", 5, "source file: file does not exist")
}

// TestPyDCOPInstances reads every DCOP of pyDCOP's tests/instances folder
// (copied in testdata/pydcop, see its README) and solves it exactly with
// bucket elimination: the optimum must be the one CPython computes from
// the same files (testdata/pydcop/optima.py evaluates every function with
// Python itself and eliminates variables over dictionaries, printing the
// values below).
func TestPyDCOPInstances(t *testing.T) {
	optima := map[string]float64{
		"SimpleHouse.yml":                              66.19999999999999,
		"graph_coloring1.yaml":                         -0.1,
		"graph_coloring1_func.yaml":                    -0.1,
		"graph_coloring_10_4_15_0.1.yml":               0,
		"graph_coloring_10_4_15_0.1_capa.yml":          0,
		"graph_coloring_10_4_15_0.1_capa_costs.yml":    0,
		"graph_coloring_3agts_10vars.yaml":             10000,
		"graph_coloring_4agts_10vars.yaml":             10000,
		"graph_coloring_csp.yaml":                      0,
		"graph_coloring_eq.yaml":                       -0.30000000000000004,
		"graph_coloring_seperate_costs.yaml":           -0.1,
		"graph_coloring_seperate_costs_intention.yaml": -0.30000000000000004,
		"graph_coloring_tuto.yaml":                     12,
		"graph_coloring_tuto_max.yaml":                 53, // pyDCOP's file: "Solution is GRRG, Cost is 53"
		"secp_simple1.yaml":                            2.3,
	}
	files, err := filepath.Glob(filepath.Join("testdata", "pydcop", "*.y*ml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(optima) {
		t.Fatalf("%d files in testdata/pydcop, %d optima", len(files), len(optima))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			want, ok := optima[name]
			if !ok {
				t.Fatalf("no optimum for %s", name)
			}
			p, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			assign, cost := solveExactly(t, p)
			got := cost
			if p.Sense == mva.Maximize {
				got = -cost
			}
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("optimum %v, CPython %v", got, want)
			}
			if name == "graph_coloring_tuto_max.yaml" {
				var sol []string
				for v, x := range assign {
					sol = append(sol, p.Variables[v].Domain[x])
				}
				if s := strings.Join(sol, ""); s != "GRRG" {
					t.Errorf("solution %s, pyDCOP's GRRG", s)
				}
			}
		})
	}
}

// solveExactly returns an optimal assignment of p and its cost.
func solveExactly(t *testing.T, p *mva.Problem) ([]int, float64) {
	t.Helper()
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	be, err := local.NewBE(lp, local.BEOptions{})
	if err != nil {
		t.Fatal(err)
	}
	interior := make([]int, lp.NumInterior())
	if _, err := be.SolveRow(context.Background(), nil, interior); err != nil {
		t.Fatal(err)
	}
	assign := make([]int, len(p.Variables))
	for k, v := range lp.Vars[lp.NB:] {
		assign[v] = interior[k]
	}
	cost, err := p.Eval(assign)
	if err != nil {
		t.Fatal(err)
	}
	return assign, cost
}

// TestReadFileSources checks that the readers that open files find a
// source file relative to the DCOP file, not the working directory.
func TestReadFileSources(t *testing.T) {
	dir := t.TempDir()
	yaml := "objective: min\ndomains: {d: {values: [0, 1, 2]}}\nvariables: {x: {domain: d}, y: {domain: d}}\n" +
		"constraints:\n  c:\n    type: intention\n    source: lib/f.py\n    function: source.f(x, y)\n"
	if err := os.MkdirAll(filepath.Join(dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"dcop.yaml": yaml, "lib/f.py": "def f(a, b):\n    return a * 3 + b\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := ReadFile(filepath.Join(dir, "dcop.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8}; !reflect.DeepEqual(p.Functions[0].Costs, want) {
		t.Errorf("costs %v, want %v", p.Functions[0].Costs, want)
	}
}

// FuzzBody compiles and runs arbitrary function bodies: errors, never a
// panic or a hang.
func FuzzBody(f *testing.F) {
	for _, s := range []string{
		"if a == b:\n    return 1\nelse:\n    return 0",
		"if a < 0:\n    return -1\nelif a == 0:\n    return 0\nreturn 2",
		"d = abs(a - b)\nd *= 2\nreturn d if d < 5 else 5.0",
		"if a: return 1\nelse: return 2.5", "pass\nreturn (a +\n        b) / 2",
		"\"\"\"doc\"\"\"\nreturn a \\\n + 1", "return source.diff(a, b) + source.bonus(a)",
		"  if a:\n    return 1\n  return 0", "if a: y = 1\nreturn y",
	} {
		f.Add(s)
	}
	mod, err := parseModule("f.py", testModule)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src string) {
		prog, names, err := compile(src, mod)
		if err != nil {
			var ee *exprError
			if !errors.As(err, &ee) || ee.pos < 0 || ee.pos > len(src) {
				t.Fatalf("bad error %v for %q", err, src)
			}
			return
		}
		if err := prog.bind(names, nil); err != nil {
			return
		}
		env := make([]value, len(names))
		samples := []value{intValue(-3), floatValue(0.5), strValue("R"), boolValue(true), intValue(math.MaxInt64)}
		for i := range samples {
			for k := range env {
				env[k] = samples[(i+k)%len(samples)]
			}
			if v, err := prog.eval(env); err == nil {
				_, _ = v.cost()
			}
		}
	})
}

// FuzzModule compiles arbitrary source files and calls every function
// that compiles.
func FuzzModule(f *testing.F) {
	f.Add(testModule)
	f.Add("def f(a):\n    return g(a)\n\ndef g(b):\n    return f(b) + 1\n")
	f.Add("import os\n")
	f.Add("def f(a, b):\n    '''x'''\n    if a:\n        c = b\n    else:\n        c = -b\n    return c\n")
	f.Fuzz(func(t *testing.T, src string) {
		mod, err := parseModule("f.py", src)
		if err != nil {
			var ee *exprError
			if !errors.As(err, &ee) || ee.pos < 0 || ee.pos > len(src) {
				t.Fatalf("bad error %v for %q", err, src)
			}
			return
		}
		for _, fn := range mod.order {
			args := make([]value, len(fn.params))
			for k := range args {
				args[k] = intValue(int64(k))
			}
			_, _ = fn.call(args)
		}
	})
}
