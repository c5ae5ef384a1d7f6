package wcsp

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/internal/formattest"
	"github.com/hearth-dcop/hearth/internal/randprob"
	tb2 "github.com/hearth-dcop/hearth/internal/toulbar2"
	"github.com/hearth-dcop/hearth/mva"
)

func TestReadSamples(t *testing.T) {
	h := mva.Hard
	type check struct {
		f     int
		scope []int
		vals  []int
		want  float64
	}
	for _, c := range []struct {
		file   string
		name   string
		stats  mva.Stats
		checks []check
	}{
		{"gpube_4queens.wcsp", "4-QUEENS", mva.Stats{Variables: 4, Agents: 1, Functions: 7, MaxArity: 4, MaxDomain: 4}, []check{
			// ub is 1: the default cost 1 of the 4-ary function is hard.
			{0, []int{0, 1, 2, 3}, []int{0, 1, 2, 3}, 0},
			{0, []int{0, 1, 2, 3}, []int{3, 2, 1, 0}, 0},
			{0, []int{0, 1, 2, 3}, []int{0, 0, 1, 2}, h},
			{1, []int{0, 1}, []int{0, 1}, h},
			{1, []int{0, 1}, []int{0, 2}, 0},
			{6, []int{2, 3}, []int{3, 2}, h},
		}},
		{"gpube_8queens.wcsp", "8-QUEENS", mva.Stats{Variables: 8, Agents: 1, Functions: 28, MaxArity: 2, MaxDomain: 8}, nil},
		{"gpube_rep_0_x_10.wcsp", "random-0", mva.Stats{Variables: 10, Agents: 1, Functions: 14, MaxArity: 2, MaxDomain: 10}, []check{
			{0, []int{4, 2}, []int{0, 0}, 70},
			{0, []int{4, 2}, []int{0, 1}, 53},
			{0, []int{4, 2}, []int{9, 9}, 11},
			{13, []int{9, 8}, []int{9, 9}, 61},
		}},
		{"fabe_test_0.wcsp", "0", mva.Stats{Variables: 20, Agents: 1, Functions: 35, MaxArity: 6, MaxDomain: 2}, []check{
			// "3 6 1 15 8 3" then "1 1 0 3", "1 0 1 5", "1 1 1 5".
			{0, []int{6, 1, 15}, []int{1, 1, 0}, 3},
			{0, []int{6, 1, 15}, []int{1, 0, 1}, 5},
			{0, []int{6, 1, 15}, []int{0, 0, 0}, 8},
		}},
		{"fabe_spot5_29.wcsp", "unknown", mva.Stats{Variables: 82, Agents: 1, Functions: 462, MaxArity: 2, MaxDomain: 4}, []check{
			// "2 65 69 0 1" then "1 0 100000".
			{0, []int{65, 69}, []int{1, 0}, 100000},
			{0, []int{65, 69}, []int{0, 0}, 0},
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			p := formattest.ReadFile(t, Read, c.file)
			if p.Name != c.name || p.Sense != mva.Minimize {
				t.Errorf("name %q sense %v, want %q min", p.Name, p.Sense, c.name)
			}
			if got := p.Stats(); got != c.stats {
				t.Errorf("Stats() = %+v, want %+v", got, c.stats)
			}
			if p.Agents[0].Name != "a0" || p.Variables[1].Name != "x1" || p.Functions[1].Name != "f1" {
				t.Errorf("names: agent %q, variable %q, function %q; want a0, x1, f1", p.Agents[0].Name, p.Variables[1].Name, p.Functions[1].Name)
			}
			for _, k := range c.checks {
				f := &p.Functions[k.f]
				if !reflect.DeepEqual(f.Scope, k.scope) {
					t.Errorf("function %d has scope %v, want %v", k.f, f.Scope, k.scope)
					continue
				}
				if got := formattest.Entry(p, f, k.vals...); got != k.want {
					t.Errorf("function %d at %v = %v, want %v", k.f, k.vals, got, k.want)
				}
			}
		})
	}
}

// base is a small valid file; the error cases change one line each.
var base = []string{
	"t 3 3 3 10", // 1: header
	"2 3 2",      // 2: domains
	"1 0 0 1",    // 3: unary on x0
	"1 5",        // 4
	"2 0 1 1 2",  // 5: binary on x0 x1
	"0 0 3",      // 6
	"1 2 12",     // 7: 12 ≥ ub: hard
	"0 4 0",      // 8: constant 4
}

func TestReadBase(t *testing.T) {
	p, err := Read(strings.NewReader(strings.Join(base, "\n")), "t.wcsp")
	if err != nil {
		t.Fatal(err)
	}
	h := mva.Hard
	want := &mva.Problem{
		Name:   "t",
		Agents: []mva.Agent{{Name: "a0"}},
		Variables: []mva.Variable{
			{Name: "x0", Domain: []string{"0", "1"}},
			{Name: "x1", Domain: []string{"0", "1", "2"}},
			{Name: "x2", Domain: []string{"0", "1"}},
		},
		Functions: []mva.Function{
			{Name: "f0", Scope: []int{0}, Costs: []float64{0, 5}},
			{Name: "f1", Scope: []int{0, 1}, Costs: []float64{3, 1, 1, 1, 1, h}},
		},
		Offset: 4,
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Read\n got %+v\nwant %+v", p, want)
	}
}

type errorCase struct {
	name string
	line int    // line of base to replace (1-based); 0 appends
	text string // its new text
	want int    // line of the error
	msg  string
}

var errorCases = []errorCase{
	{"header cut short", 1, "t", 1, "unexpected end of file: want the number of variables"},
	{"malformed count", 1, "t x 3 3 10", 1, `the number of variables: "x" is not an integer`},
	{"negative count", 1, "t 3 3 -3 10", 1, `the number of cost functions: -3 is not between 0`},
	{"zero bound", 1, "t 3 3 3 0", 1, "the upper bound 0 is not positive"},
	{"malformed bound", 1, "t 3 3 3 1e9", 1, `the upper bound: "1e9" is not an integer`},
	{"interval domain", 2, "2 -3 2", 2, "domain size of variable 1 is -3: interval domains"},
	{"empty domain", 2, "2 0 2", 2, "domain size of variable 1 is 0"},
	{"domain above the maximum", 2, "2 4 2", 2, "is 4, more than the maximum 3 of the header"},
	{"malformed domain", 2, "2 3 two", 2, `domain size of variable 2: "two" is not an integer`},
	{"malformed arity", 3, "x 0 0 1", 3, `cost function 0: the arity: "x" is not an integer`},
	{"arity above the variables", 3, "4 0 1 2 0 0", 3, "arity 4 exceeds the 3 variables"},
	{"variable out of range", 3, "1 3 0 1", 3, "variable index 3 is not between 0 and 2"},
	{"negative variable", 3, "1 -1 0 1", 3, "variable index -1"},
	{"repeated variable", 5, "2 0 0 1 2", 5, "variable 0 appears twice in the scope"},
	{"value outside the domain", 4, "2 5", 4, "value 2 is outside the domain of variable 0 (size 2)"},
	{"negative value", 6, "0 -1 3", 6, "value -1 is outside the domain of variable 1"},
	{"tuple split across lines", 6, "0\n5\n3", 7, "value 5 is outside the domain of variable 1 (size 3)"},
	{"malformed cost", 4, "1 five", 4, `cost function 0: the cost of tuple 0: "five" is not an integer`},
	{"fractional cost", 4, "1 2.5", 4, `"2.5" is not an integer`},
	{"negative cost", 4, "1 -5", 4, `negative cost -5 (wcsp costs are non-negative)`},
	{"negative default", 3, "1 0 -2 1", 3, `negative cost -2`},
	{"negative constant", 8, "0 -1 0", 8, `negative cost -1`},
	{"malformed default", 3, "1 0 zero 1", 3, `the default cost "zero" is not an integer`},
	{"malformed tuple count", 3, "1 0 0 one", 3, `the number of tuples: "one" is not an integer`},
	{"intension", 5, "2 0 1 -1 < 0 0", 5, `cost functions in intension and global cost functions (keyword "<") are not supported`},
	{"global", 5, "2 0 1 -1\nsalldiff var 1", 6, `(keyword "salldiff")`},
	{"constant with two tuples", 8, "0 4 2", 8, "a function of arity 0 has 2 tuples, want 0 or 1"},
	{"constant with negative tuples", 8, "0 4 -1", 8, "has -1 tuples"},
	{"trailing token", 0, "7", 9, `unexpected "7" after the last of the 3 cost functions`},
	{"missing function", 8, "", 7, "unexpected end of file: want cost function 2: the arity"},
	{"missing tuple", 5, "2 0 1 1 3", 7, "unexpected end of file: want cost function 1: value 0 of tuple 2"}, // cut below
	{"missing reuse", 5, "2 0 1 1 -1", 5, "reuses shared cost function 1, but 0 are defined so far"},
	{"inexact cost", 1, "t 3 3 3 9223372036854775807", 7, "cost 12 is"}, // replaced below
	{"long token", 1, strings.Repeat("n", 5000) + " 3 3 3 10", 1, "token longer than 4096 bytes"},
}

func mutate(c errorCase) string {
	lines := append([]string(nil), base...)
	if c.line == 0 {
		lines = append(lines, c.text)
	} else {
		lines[c.line-1] = c.text
	}
	switch c.name {
	case "header cut short":
		lines = lines[:1]
	case "inexact cost":
		lines[6] = "1 2 9007199254740992"
	case "missing tuple":
		lines = lines[:7]
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestReadErrors(t *testing.T) {
	for _, c := range errorCases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "inexact cost" {
				c.msg = "cost 9007199254740992 is too large to be exact in a float64"
			}
			_, err := Read(strings.NewReader(mutate(c)), "t.wcsp")
			formattest.CheckParseError(t, err, "t.wcsp", c.want, c.msg)
		})
	}
	t.Run("empty", func(t *testing.T) {
		_, err := Read(strings.NewReader(""), "t.wcsp")
		formattest.CheckParseError(t, err, "t.wcsp", 1, "unexpected end of file: want the problem name")
	})
}

func TestShared(t *testing.T) {
	// The example of toulbar2's documentation: AllDifferent on 4 variables
	// as 6 binary functions sharing one table.
	const src = `AllDifferentDecomposedIntoBinaryConstraints 4 4 6 1
4 4 4 4
-2 0 1 0 4
0 0 1
1 1 1
2 2 1
3 3 1
2 0 2 0 -1
2 0 3 0 -1
2 1 2 0 -1
2 1 3 0 -1
2 2 3 0 -1
`
	p, err := Read(strings.NewReader(src), "t.wcsp")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Functions) != 6 {
		t.Fatalf("%d functions, want 6", len(p.Functions))
	}
	for i, f := range p.Functions {
		for k, c := range f.Costs {
			if want := k%5 == 0; mva.IsHard(c) != want {
				t.Errorf("function %d entry %d is %v, want hard = %v", i, k, c, want)
			}
		}
		if i > 0 && &f.Costs[0] == &p.Functions[0].Costs[0] {
			t.Errorf("function %d shares its table with function 0", i)
		}
	}

	for _, c := range []struct {
		name, src string
		line      int
		msg       string
	}{
		{"other domain", "t 3 3 2 5\n2 2 3\n-2 0 1 0 0\n2 0 2 0 -1\n", 4, "variable 2 has 3 values, but position 1 of shared cost function 1 (line 3) has 2"},
		{"other arity", "t 3 3 2 5\n2 2 3\n-2 0 1 0 0\n1 0 0 -1\n", 4, "arity 1 differs from the arity 2 of shared cost function 1 (line 3)"},
		{"unknown table", "t 3 3 2 5\n2 2 3\n-2 0 1 0 0\n2 0 1 0 -2\n", 4, "reuses shared cost function 2, but 1 are defined"},
		{"shared reuse", "t 3 3 2 5\n2 2 3\n-2 0 1 0 0\n-2 0 1 0 -1\n", 4, "a shared cost function must list its tuples"},
		{"shared constant", "t 3 3 1 5\n2 2 3\n-0 4 0\n", 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.src), "t.wcsp")
			if c.line == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			formattest.CheckParseError(t, err, "t.wcsp", c.line, c.msg)
		})
	}
}

func TestReadLimits(t *testing.T) {
	small := limits{domain: 100, table: 1000, tableTotal: 1500}
	for _, c := range []struct {
		name, src string
		line      int
		msg       string
	}{
		{"domain", "t 2 1000 0 5\n100 101\n", 2, "variable 1 is 101, more than the 100 values"},
		{"table", "t 2 100 1 5\n100 100\n2 0 1 0 0\n", 3, "more than 1000 entries"},
		{"tables in all", "t 2 100 2 5\n30 30\n2 0 1 0 0\n2 1 0 0 0\n", 4, "more than 1500 entries in all"},
		{"reused tables in all", "t 2 100 2 5\n30 30\n-2 0 1 0 0\n2 1 0 0 -1\n", 4, "more than 1500 entries in all"},
		{"huge header", "t 2147483647 2147483647 4611686018427387904 5\n1 1\n", 2, "want the domain size of variable 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := read(strings.NewReader(c.src), "t.wcsp", small)
			formattest.CheckParseError(t, err, "t.wcsp", c.line, c.msg)
		})
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func TestReadIOError(t *testing.T) {
	boom := errors.New("boom")
	head := strings.NewReader("t 3 3 3 10\n2 3")
	r := readerFunc(func(p []byte) (int, error) {
		if head.Len() > 0 {
			return head.Read(p)
		}
		return 0, boom
	})
	_, err := Read(r, "t.wcsp")
	if !errors.Is(err, boom) {
		t.Fatalf("error %v does not wrap the reader's error", err)
	}
	var pe *mva.ParseError
	if errors.As(err, &pe) {
		t.Errorf("an I/O error is reported as a parse error: %v", err)
	}
}

func TestWriteSmall(t *testing.T) {
	h := mva.Hard
	p := &mva.Problem{
		Name:   "small one",
		Sense:  mva.Maximize,
		Agents: []mva.Agent{{Name: "a"}, {Name: "b"}},
		Variables: []mva.Variable{
			{Name: "x", Domain: []string{"red", "green"}, Agent: 0},
			{Name: "y", Domain: []string{"1", "2", "3"}, Agent: 1},
		},
		Functions: []mva.Function{
			{Name: "f", Scope: []int{1, 0}, Costs: []float64{-3, -3, h, -1, -3, 0}},
			{Name: "g", Scope: []int{0}, Costs: []float64{2, 7}},
			{Name: "k", Scope: []int{}, Costs: []float64{-2}},
			{Name: "inf", Scope: []int{}, Costs: []float64{h}},
		},
		Offset: 1,
	}
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	// f is shifted by 3 (max 3 after the shift), g is not (max 7); the
	// constant 1 - 3 - 2 = -4 cannot be written; ub = 1 + 3 + 7.
	const want = `small_one 2 3 3 11
2 3
2 1 0 0 3
1 0 11
1 1 2
2 1 3
1 0 2 1
1 7
0 11 0
`
	if b.String() != want {
		t.Errorf("Write wrote\n%s\nwant\n%s", b.String(), want)
	}
	q, err := Read(&b, "small.wcsp")
	if err != nil {
		t.Fatal(err)
	}
	checkEquivalent(t, p, q)
}

func TestWriteErrors(t *testing.T) {
	good := func() *mva.Problem {
		return &mva.Problem{
			Agents:    []mva.Agent{{Name: "a"}},
			Variables: []mva.Variable{{Name: "x", Domain: []string{"0", "1"}}},
			Functions: []mva.Function{{Name: "f", Scope: []int{0}, Costs: []float64{0, 1}}},
		}
	}
	for _, c := range []struct {
		name   string
		change func(p *mva.Problem)
		msg    string
	}{
		{"invalid", func(p *mva.Problem) { p.Functions[0].Costs = nil }, "invalid problem"},
		{"fraction", func(p *mva.Problem) { p.Functions[0].Costs[1] = 0.5 }, `function "f": cost 0.5 is not an integer`},
		{"unnamed", func(p *mva.Problem) { p.Functions[0].Name = ""; p.Functions[0].Costs[1] = 0.5 }, `function #0: cost 0.5`},
		{"huge", func(p *mva.Problem) { p.Functions[0].Costs[1] = 1 << 53 }, `is not an integer (of at most 2^53)`},
		{"fractional offset", func(p *mva.Problem) { p.Offset = 0.25 }, "the offset 0.25 is not an integer"},
		{"sum", func(p *mva.Problem) {
			for range 2000 {
				p.Functions = append(p.Functions, mva.Function{Scope: []int{0}, Costs: []float64{0, 1 << 52}})
			}
		}, "add up to more than 2^62"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := good()
			c.change(p)
			var b bytes.Buffer
			err := Write(&b, p)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("Write error %v, want %q", err, c.msg)
			}
			if b.Len() != 0 {
				t.Errorf("Write wrote %d bytes before failing", b.Len())
			}
		})
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteIOError(t *testing.T) {
	p := formattest.ReadFile(t, Read, "gpube_4queens.wcsp")
	if err := Write(failingWriter{}, p); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Write error %v, want disk full", err)
	}
}

// write returns p in wcsp format.
func write(t *testing.T, p *mva.Problem) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return b.Bytes()
}

func sampleFiles(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "*.wcsp"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample files: %v", err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	return files
}

func TestRoundTripFiles(t *testing.T) {
	for _, name := range sampleFiles(t) {
		p := formattest.ReadFile(t, Read, name)
		if q, _ := formattest.RoundTrip(t, Write, Read, p, "rt.wcsp"); !reflect.DeepEqual(p, q) {
			t.Errorf("%s: round trip changed the problem", name)
		}
	}
	p, err := Read(strings.NewReader(strings.Join(base, "\n")), "t.wcsp")
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := formattest.RoundTrip(t, Write, Read, p, "rt.wcsp"); !reflect.DeepEqual(p, q) {
		t.Errorf("round trip changed the problem\n got %+v\nwant %+v", q, p)
	}
}

// randomProblem makes a small valid problem with integer costs: 1-3
// agents, 2-8 variables with 1-5 values, functions of arity 0-4 with some
// hard entries and negative costs, either sense and an offset.
func randomProblem(rng *rand.Rand) *mva.Problem {
	return randprob.Make(rng, randprob.Shape{
		Name:      func(r *rand.Rand) string { return fmt.Sprintf("random %d", r.IntN(1000)) },
		AnySense:  true,
		Agents:    randprob.Range{Min: 1, Max: 3},
		Vars:      randprob.Range{Min: 2, Max: 8},
		Domain:    randprob.Range{Min: 1, Max: 5},
		Functions: randprob.Range{Min: 0, Max: 6},
		Arity:     randprob.Range{Min: 0, Max: 4},
		AgentName: func(i int) string { return fmt.Sprintf("agent%d", i) },
		VarName:   func(_ *rand.Rand, i int) string { return fmt.Sprintf("y%d", i) },
		Labels: func(_ *rand.Rand, _, d int) []string {
			labels := make([]string, d)
			for k := range labels {
				labels[k] = fmt.Sprintf("v%d", k)
			}
			return labels
		},
		FuncName: func(i int) string { return fmt.Sprintf("g%d", i) },
		// Each table has its own low end, 0, -10 or -20, so that Write
		// has negative costs to move into its constant.
		Costs: func(r *rand.Rand, arity int, costs []float64) {
			lo := -r.IntN(3) * 10
			for k := range costs {
				if r.IntN(10) == 0 && (arity > 0 || r.IntN(3) == 0) {
					costs[k] = mva.Hard
				} else {
					costs[k] = float64(lo + r.IntN(20))
				}
			}
		},
		Offset: func(r *rand.Rand) float64 { return float64(r.IntN(21) - 10) },
	})
}

// randomProblem makes a small valid problem with integer costs: 1-3
// agents, 2-8 variables with 1-5 values, functions of arity 0-4 with some
// hard entries and negative costs, either sense and an offset.
// assignments calls fn with every complete assignment of p.
func assignments(p *mva.Problem, fn func([]int)) {
	a := make([]int, len(p.Variables))
	for {
		fn(a)
		i := len(a) - 1
		for ; i >= 0; i-- {
			a[i]++
			if a[i] < p.DomainSize(i) {
				break
			}
			a[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// constant returns the constant C of the package documentation: what Write
// moves out of p's functions and offset.
func constant(p *mva.Problem) float64 {
	c := p.Offset
	for _, f := range p.Functions {
		lo := math.Inf(1)
		for _, x := range f.Costs {
			lo = min(lo, x)
		}
		switch {
		case mva.IsHard(lo):
		case len(f.Scope) == 0:
			c += lo
		default:
			c += min(lo, 0)
		}
	}
	return c
}

// checkEquivalent checks that q is p as Write and Read map it: the same
// domain sizes and scopes, Minimize, and the same total cost for every
// assignment, less a negative constant.
func checkEquivalent(t *testing.T, p, q *mva.Problem) {
	t.Helper()
	dropped := min(constant(p), 0)
	if q.Name != name(p) || q.Sense != mva.Minimize || len(q.Agents) != 1 {
		t.Errorf("name %q sense %v agents %v; want %q min [a0]", q.Name, q.Sense, q.Agents, name(p))
	}
	if len(q.Variables) != len(p.Variables) {
		t.Fatalf("%d variables, want %d", len(q.Variables), len(p.Variables))
	}
	for i, v := range q.Variables {
		if v.Name != "x"+strconv.Itoa(i) || len(v.Domain) != p.DomainSize(i) || v.Domain[len(v.Domain)-1] != strconv.Itoa(len(v.Domain)-1) {
			t.Errorf("variable %d is %v, want x%d with %d values", i, v, i, p.DomainSize(i))
		}
	}
	var scopes [][]int
	for _, f := range p.Functions {
		if len(f.Scope) > 0 || mva.IsHard(f.Costs[0]) {
			scopes = append(scopes, f.Scope)
		}
	}
	var got [][]int
	for _, f := range q.Functions {
		got = append(got, f.Scope)
	}
	if !reflect.DeepEqual(got, scopes) {
		t.Errorf("scopes %v, want %v", got, scopes)
	}
	assignments(p, func(a []int) {
		cp, err1 := p.Eval(a)
		cq, err2 := q.Eval(a)
		if err1 != nil || err2 != nil || cp-dropped != cq {
			t.Fatalf("cost of %v: %v (%v) after the round trip, %v (%v) before, %v dropped", a, cq, err2, cp, err1, dropped)
		}
	})
}

func TestRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		p := randomProblem(rng)
		if err := p.Validate(); err != nil {
			t.Fatalf("problem %d: %v", i, err)
		}
		q, _ := formattest.RoundTrip(t, Write, Read, p, "rt.wcsp")
		checkEquivalent(t, p, q)
		// q has non-negative tables: it survives exactly.
		if r, _ := formattest.RoundTrip(t, Write, Read, q, "rt.wcsp"); !reflect.DeepEqual(q, r) {
			t.Fatalf("problem %d: second round trip changed it\n got %+v\nwant %+v", i, r, q)
		}
	}
}

// toulbar2 returns the optimum toulbar2 prints for file, and false when it
// finds no solution.
func toulbar2(t *testing.T, file string) (int64, bool) {
	t.Helper()
	r := tb2.Solve(t, file)
	return r.Cost, r.Feasible
}

// TestToulbar2 checks that toulbar2 finds the same optimum in the files
// Write produces as in the originals, and the brute-force optimum of random
// problems.
func TestToulbar2(t *testing.T) {
	if testing.Short() {
		t.Skip("runs toulbar2")
	}
	dir := t.TempDir()
	for _, name := range sampleFiles(t) {
		if name == "fabe_spot5_404.wcsp" {
			continue // toulbar2 needs half a minute
		}
		want, ok := toulbar2(t, filepath.Join("testdata", name))
		out := filepath.Join(dir, name)
		if err := os.WriteFile(out, write(t, formattest.ReadFile(t, Read, name)), 0o644); err != nil {
			t.Fatal(err)
		}
		got, gotOK := toulbar2(t, out)
		if got != want || gotOK != ok {
			t.Errorf("%s: toulbar2 optimum %d (%v) after Write, %d (%v) before", name, got, gotOK, want, ok)
		}
	}

	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 40 {
		p := randomProblem(rng)
		best := math.Inf(1)
		assignments(p, func(a []int) {
			c, _ := p.Eval(a)
			best = min(best, c)
		})
		b := write(t, p)
		out := filepath.Join(dir, fmt.Sprintf("random%d.wcsp", i))
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
		got, ok := toulbar2(t, out)
		if ok != !mva.IsHard(best) {
			t.Fatalf("problem %d: toulbar2 feasible = %v, brute force optimum %v", i, ok, best)
		}
		// A negative constant is left out (see the package doc).
		c := constant(p)
		if want := best - min(c, 0); ok && float64(got) != want {
			t.Errorf("problem %d: toulbar2 optimum %d, want %v (internal optimum %v, constant %v)\n%s", i, got, want, best, c, b)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add(strings.Join(base, "\n"))
	for _, c := range errorCases {
		f.Add(mutate(c))
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.wcsp"))
	// toulbar2's own small files, global cost functions, interval domains
	// and shared tables among them (../../../testdata/toulbar2/README.md).
	public, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "toulbar2", "*.wcsp"))
	for _, name := range append(files, public...) {
		if b, err := os.ReadFile(name); err == nil && len(b) < 10000 {
			f.Add(string(b))
		}
	}
	small := limits{domain: 64, table: 1 << 12, tableTotal: 1 << 14}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := read(strings.NewReader(src), "fuzz.wcsp", small)
		if !formattest.Parsed(t, p, err) {
			return
		}
		var b bytes.Buffer
		if err := Write(&b, p); err != nil {
			// Only costs too large to add up stop Write.
			if !strings.Contains(err.Error(), "add up to more than") {
				t.Fatalf("Write: %v", err)
			}
			return
		}
		q, err := read(&b, "rewritten.wcsp", limits{domain: 1 << 20, table: 1 << 20, tableTotal: 1 << 20})
		if err != nil {
			t.Fatalf("Read of the written file: %v\n%s", err, b.String())
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the problem\n got %+v\nwant %+v", q, p)
		}
	})
}

// TestSmallIntMatchesParseInt checks the reader's fast integer path
// against strconv.ParseInt: where it answers, the same value; it leaves
// every other token (signs, overflow, non-digits) to ParseInt.
func TestSmallIntMatchesParseInt(t *testing.T) {
	toks := []string{"0", "-0", "7", "-1", "007", "+5", "-", "", "1a", " 1", "123456789012345678",
		"-123456789012345678", "1234567890123456789", "9223372036854775807", "-9223372036854775808",
		"99999999999999999999", "1_000", "0x10", "--1"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		toks = append(toks, strconv.FormatInt(rng.Int64()>>rng.IntN(63), 10), strconv.FormatInt(-rng.Int64()>>rng.IntN(63), 10))
	}
	for _, tok := range toks {
		got, ok := smallInt([]byte(tok))
		want, err := strconv.ParseInt(tok, 10, 64)
		if ok && (err != nil || got != want) {
			t.Errorf("smallInt(%q) = %d; ParseInt: %d, %v", tok, got, want, err)
		}
		if !ok && err == nil && len(strings.TrimPrefix(tok, "-")) <= 18 && !strings.HasPrefix(tok, "+") {
			t.Errorf("smallInt(%q) declined a plain integer of 18 digits or fewer", tok)
		}
	}
}

// TestReadChunks reads files through readers that return 1 byte a call
// (files up to 16 KiB) or 7 (tokens and line ends across every chunk
// boundary) and, for the larger, with tokens of up to maxTokenSize bytes
// across the scanner's own chunks: the problem, or the error with its
// line, is the one read from one whole buffer.
func TestReadChunks(t *testing.T) {
	srcs := []string{strings.Join(base, "\n"), strings.Join(base, "\r\n") + "\n"}
	for _, c := range errorCases {
		srcs = append(srcs, mutate(c))
	}
	for _, name := range sampleFiles(t) {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, string(b))
	}
	// Long tokens (zeros before a cost) across the scanner's first and
	// second chunk boundaries, and one past maxTokenSize.
	head := "t 2 2 1 9\n2 2\n2 0 1"
	pad := func(at, n int) string { return strings.Repeat(" ", at-n) }
	cost := strings.Repeat("0", maxTokenSize-1)
	long := head + pad(scanChunk-100, len(head)) + cost + "3 1\n0 0"
	long += pad(2*scanChunk-50, len(long)) + cost + "7\n"
	srcs = append(srcs, long, strings.Replace(long, "3 1", "03 1", 1), strings.Replace(long, "7\n", "7", 1))
	p, err := Read(strings.NewReader(long), "t.wcsp")
	if err != nil || p.Functions[0].Costs[0] != 7 || p.Functions[0].Costs[1] != 3 {
		t.Fatalf("long tokens: %v", err)
	}
	if _, err := Read(strings.NewReader(srcs[len(srcs)-2]), "t.wcsp"); err == nil || !strings.Contains(err.Error(), "token longer") {
		t.Fatalf("a token past maxTokenSize: %v", err)
	}
	for i, src := range srcs {
		want, wantErr := Read(strings.NewReader(src), "t.wcsp")
		for _, n := range []int{1, 7} {
			if n == 1 && len(src) > 1<<14 {
				continue // the 7-byte reads cross as many boundaries
			}
			r := strings.NewReader(src)
			got, err := Read(readerFunc(func(b []byte) (int, error) { return r.Read(b[:min(n, len(b))]) }), "t.wcsp")
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
				t.Fatalf("source %d, %d bytes a read: %v, %v; whole: %v", i, n, got, err, wantErr)
			}
		}
	}
}

// TestDigitsMatchesNextBytes reads seeded random token streams (plain
// numbers, signed and long ones, words; spaces, tabs, CR LF and newlines
// between them; 1 to 9 bytes a read, so tokens cross chunk ends) twice:
// by nextBytes alone, and by the fast path digits with nextBytes where it
// declines. Each token must come out with the same value and line, and
// digits must take only plain numbers of 18 digits or fewer.
func TestDigitsMatchesNextBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 3))
	seps := []string{" ", "  ", "\t", "\n", "\r\n", " \n\n", "\f"}
	for round := range 200 {
		var b strings.Builder
		for range 1 + rng.IntN(60) {
			switch rng.IntN(6) {
			case 0:
				b.WriteString("-" + strconv.Itoa(rng.IntN(1000)))
			case 1:
				b.WriteString(strings.Repeat("9", 17+rng.IntN(4)))
			case 2:
				b.WriteString("x" + strconv.Itoa(rng.IntN(10)))
			default:
				b.WriteString(strconv.Itoa(rng.IntN(100000)))
			}
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		src := b.String()
		if rng.IntN(2) == 0 {
			src = strings.TrimRight(src, " \t\r\n\f") // a last token at the end of the input
		}
		type tok struct {
			text string
			line int
		}
		var want []tok
		ref := scanner{r: strings.NewReader(src), line: 1}
		for {
			tb, line, err := ref.nextBytes()
			if err != nil {
				break
			}
			want = append(want, tok{string(tb), line})
		}
		n := 1 + round%9
		r := strings.NewReader(src)
		sc := scanner{r: readerFunc(func(p []byte) (int, error) { return r.Read(p[:min(n, len(p))]) }), line: 1}
		for i := 0; ; i++ {
			var got tok
			if v, line, ok := sc.digits(); ok {
				got = tok{strconv.FormatInt(v, 10), line}
				if i < len(want) && (strings.HasPrefix(want[i].text, "-") || len(want[i].text) > 18) {
					t.Fatalf("round %d: digits took %q", round, want[i].text)
				}
			} else {
				tb, line, err := sc.nextBytes()
				if err != nil {
					if i != len(want) {
						t.Fatalf("round %d: %d tokens, want %d (%v)", round, i, len(want), err)
					}
					break
				}
				got = tok{string(tb), line}
			}
			if i >= len(want) || got != want[i] {
				t.Fatalf("round %d, token %d: %+v, want %+v", round, i, got, want[min(i, len(want)-1)])
			}
		}
	}
}
