package uai

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/internal/formattest"
	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
)

// near reports whether two costs agree to 1e-12, relative for large
// costs and absolute near zero.
func near(a, b float64) bool {
	if mva.IsHard(a) || mva.IsHard(b) {
		return mva.IsHard(a) && mva.IsHard(b)
	}
	return math.Abs(a-b) <= 1e-12*max(1, math.Abs(a), math.Abs(b))
}

func nlog(p float64) float64 {
	if p == 0 {
		return mva.Hard
	}
	return -math.Log(p)
}

func TestReadSimple(t *testing.T) {
	p := formattest.ReadFile(t, Read, "fabe_misc_simple2.uai")
	if got := len(p.Variables); got != 5 {
		t.Fatalf("%d variables, want 5", got)
	}
	for i, v := range p.Variables {
		if v.Name != "x"+strconv.Itoa(i) || strings.Join(v.Domain, ",") != "0,1" || v.Agent != 0 {
			t.Errorf("variable %d = %+v", i, v)
		}
	}
	if len(p.Agents) != 1 || p.Agents[0].Name != "a0" {
		t.Errorf("agents = %+v, want one a0", p.Agents)
	}
	if p.Sense != mva.Minimize || p.Offset != 0 {
		t.Errorf("sense %v offset %v, want min and 0", p.Sense, p.Offset)
	}
	want := []struct {
		scope []int
		probs []float64
	}{
		{[]int{0, 1}, []float64{0.1, 0.2, 0.3, 0.4}},
		{[]int{0, 2}, []float64{0.3, 0.1, 0.9, 0.6}},
		{[]int{0, 3}, []float64{0.5, 0.1, 0.1, 0.5}},
		{[]int{1, 2}, []float64{0.7, 0.2, 0.8, 0.9}},
		{[]int{1, 3}, []float64{0.5, 0.7, 0.2, 0.4}},
		{[]int{1, 4}, []float64{0.1, 0.1, 0.3, 0.3}},
		{[]int{3, 4}, []float64{0.6, 0.5, 0.4, 0.7}},
	}
	if len(p.Functions) != len(want) {
		t.Fatalf("%d functions, want %d", len(p.Functions), len(want))
	}
	for i, w := range want {
		f := p.Functions[i]
		if !equalInts(f.Scope, w.scope) {
			t.Errorf("function %d scope %v, want %v", i, f.Scope, w.scope)
		}
		for j, pr := range w.probs {
			if f.Costs[j] != -math.Log(pr) {
				t.Errorf("function %d entry %d = %v, want -ln(%v) = %v", i, j, f.Costs[j], pr, -math.Log(pr))
			}
		}
	}
}

// TestSimpleOptimum checks the energy convention against toulbar2, which
// prints "Optimum: 6773987 energy: 4.415 prob: 1.210e-02" and the solution
// 1 1 0 1 1 for this file.
func TestSimpleOptimum(t *testing.T) {
	p := formattest.ReadFile(t, Read, "fabe_misc_simple2.uai")
	best, bestAssign := math.Inf(1), []int(nil)
	assign := make([]int, len(p.Variables))
	for a := 0; a < 1<<len(assign); a++ {
		for v := range assign {
			assign[v] = a >> (len(assign) - 1 - v) & 1
		}
		c, err := p.Eval(assign)
		if err != nil {
			t.Fatal(err)
		}
		if c < best {
			best, bestAssign = c, append([]int(nil), assign...)
		}
	}
	// 0.4 * 0.9 * 0.5 * 0.8 * 0.4 * 0.3 * 0.7 = 0.012096
	if want := -math.Log(0.012096); !near(best, want) {
		t.Errorf("optimum %v, want %v", best, want)
	}
	if math.Abs(best-4.415) > 5e-4 {
		t.Errorf("optimum %v, toulbar2 prints energy 4.415", best)
	}
	if !equalInts(bestAssign, []int{1, 1, 0, 1, 1}) {
		t.Errorf("best assignment %v, toulbar2 finds 1 1 0 1 1", bestAssign)
	}
}

func TestReadGrid(t *testing.T) {
	p := formattest.ReadFile(t, Read, "fabe_grid_50-12-5.uai")
	if len(p.Variables) != 144 || len(p.Functions) != 144 {
		t.Fatalf("%d variables, %d functions, want 144 and 144", len(p.Variables), len(p.Functions))
	}
	f := p.Functions[0]
	if !equalInts(f.Scope, []int{1, 39, 0}) {
		t.Errorf("first scope %v, want [1 39 0]", f.Scope)
	}
	want := []float64{0, 1, 1, 0, 0, 1, 0, 1}
	for j, pr := range want {
		if f.Costs[j] != nlog(pr) {
			t.Errorf("first table entry %d = %v, want %v", j, f.Costs[j], nlog(pr))
		}
	}
	last := p.Functions[143]
	if !equalInts(last.Scope, []int{142, 40, 143}) {
		t.Errorf("last scope %v, want [142 40 143]", last.Scope)
	}
	if got, want := last.Costs[7], -math.Log(0.510143); got != want {
		t.Errorf("last entry %v, want %v", got, want)
	}
	if p.Functions[4].Scope[0] != 32 || len(p.Functions[4].Scope) != 2 {
		t.Errorf("function 4 scope %v, want [32 4]", p.Functions[4].Scope)
	}
}

func TestReadZeroArity(t *testing.T) {
	in := "MARKOV\n2\n2 3\n3\n0\n2 0 1\n0\n1\n0.5\n6\n1 2 3\n4 5 6\n1\n0.25\n"
	p, err := Read(strings.NewReader(in), "z.uai")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Functions) != 1 || !near(p.Offset, -math.Log(0.5)-math.Log(0.25)) {
		t.Errorf("functions %d offset %v, want 1 and %v", len(p.Functions), p.Offset, -math.Log(0.125))
	}
	if got := strings.Join(p.Variables[1].Domain, " "); got != "0 1 2" {
		t.Errorf("domain of x1 = %q", got)
	}
	// A zero probability without scope stays a hard zero-arity function.
	in = "MARKOV\n1\n2\n1\n0\n1\n0\n"
	p, err = Read(strings.NewReader(in), "z.uai")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Functions) != 1 || !mva.IsHard(p.Functions[0].Costs[0]) || p.Offset != 0 {
		t.Errorf("got %+v offset %v, want one hard zero-arity function", p.Functions, p.Offset)
	}
}

// readErrorCases are malformed files with the error they get; FuzzRead
// starts from them too.
func readErrorCases() []struct{ name, in, want string } {
	return []struct{ name, in, want string }{
		{"empty", "", "bad.uai:1: unexpected end of file: expected MARKOV or BAYES"},
		{"type", "\nMRF\n1\n2\n0\n", "bad.uai:2: unknown network type \"MRF\""},
		{"nvars", "MARKOV\nx\n", "bad.uai:2: bad number of variables \"x\""},
		{"nvars negative", "MARKOV\n-1\n", "bad.uai:2: bad number of variables"},
		{"nvars huge", "MARKOV\n1000000\n2 2\n", "bad.uai:2: number of variables is 1000000, more than the rest of the file holds"},
		{"card zero", "MARKOV\n2\n2 0\n0\n", "bad.uai:3: variable 1 has cardinality 0"},
		{"card huge", "MARKOV\n1\n99999999999\n0\n", "bad.uai:3: cardinality of variable 0 is 99999999999, more than 1048576"},
		{"card bad", "MARKOV\n1\n2.5\n0\n", "bad.uai:3: bad cardinality of variable 0 \"2.5\""},
		{"truncated cards", "MARKOV\n3\n2 2", "bad.uai:3: unexpected end of file: expected cardinality of variable 2"},
		{"nfactors huge", "MARKOV\n1\n2\n50\n1 0\n", "bad.uai:4: number of factors is 50, more than the rest of the file holds"},
		{"index range", "MARKOV\n2\n2 2\n1\n2 0 2\n4 1 1 1 1\n", "bad.uai:5: factor 0: variable index 2 out of range (2 variables)"},
		{"index bad", "MARKOV\n2\n2 2\n1\n2 0 a\n4 1 1 1 1\n", "bad.uai:5: bad variable of factor 0 \"a\""},
		{"repeated", "MARKOV\n2\n2 2\n1\n2 1\n1\n4 1 1 1 1\n", "bad.uai:6: factor 0: variable 1 appears twice in the scope"},
		{"scope too big", "MARKOV\n2\n2 2\n1\n3 0 1 0\n", "bad.uai:5: factor 0: scope of 3 variables, but there are only 2"},
		{"size mismatch", "MARKOV\n2\n2 3\n1\n2 0 1\n\n4\n1 1 1 1\n", "bad.uai:7: factor 0: table has 4 entries, its scope needs 6"},
		{"truncated table", "MARKOV\n2\n2 2\n1\n2 0 1\n4\n1 1\n1\n", "bad.uai:8: unexpected end of file: expected an entry of factor 0"},
		{"truncated count", "MARKOV\n2\n2 2\n1\n2 0 1\n", "bad.uai:5: unexpected end of file: expected entry count of factor 0"},
		{"count beyond file", "MARKOV\n1\n2\n1\n1 0\n2\n", "bad.uai:6: unexpected end of file: expected 2 entries for factor 0"},
		{"bad number", "MARKOV\n1\n2\n1\n1 0\n2\n0.5\n0..5\n", "bad.uai:8: factor 0: bad probability \"0..5\""},
		{"nan", "MARKOV\n1\n2\n1\n1 0\n2 NaN 1\n", "bad.uai:6: factor 0: bad probability \"NaN\""},
		{"inf", "MARKOV\n1\n2\n1\n1 0\n2 1 inf\n", "bad.uai:6: factor 0: bad probability \"inf\""},
		{"hex", "MARKOV\n1\n2\n1\n1 0\n2 1 0x1p-2\n", "bad.uai:6: factor 0: bad probability \"0x1p-2\""},
		{"overflow", "MARKOV\n1\n2\n1\n1 0\n2 1 1e999\n", "bad.uai:6: factor 0: probability \"1e999\" is out of range"},
		{"negative", "MARKOV\n1\n2\n1\n1 0\n2\n0.5\n-0.5\n", "bad.uai:8: factor 0: negative probability -0.5"},
		{"trailing", "MARKOV\n1\n2\n1\n1 0\n2 0.5 0.5\n\n0.5\n", "bad.uai:8: unexpected \"0.5\" after the last table"},
		{"table too large", "MARKOV\n3\n65536 65536 65536\n1\n3 0 1 2\n1\n", "bad.uai:6: factor 0: table over 3 variables is too large"},
	}
}

func TestReadErrors(t *testing.T) {
	tests := readErrorCases()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tt.in), "bad.uai")
			formattest.CheckParseErrorPrefix(t, err, tt.want)
		})
	}
}

func TestReadLenient(t *testing.T) {
	// Probabilities above 1, exponents, a BAYES header and values spread
	// over lines are all fine.
	in := "BAYES 2 2 2 1 2 0 1 4 2.5\n1e-3 0 +1.\n"
	p, err := Read(strings.NewReader(in), "ok.uai")
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{-math.Log(2.5), -math.Log(1e-3), mva.Hard, 0}
	for j, c := range p.Functions[0].Costs {
		if c != want[j] || math.Signbit(c) && c == 0 {
			t.Errorf("entry %d = %v, want %v", j, c, want[j])
		}
	}
}

// equalProblems compares two problems, costs to 1e-12.
func equalProblems(t *testing.T, a, b *mva.Problem) {
	t.Helper()
	if a.Name != b.Name || a.Sense != b.Sense || !near(a.Offset, b.Offset) {
		t.Errorf("header (%q %v %v) != (%q %v %v)", a.Name, a.Sense, a.Offset, b.Name, b.Sense, b.Offset)
	}
	if len(a.Variables) != len(b.Variables) || len(a.Agents) != len(b.Agents) || len(a.Functions) != len(b.Functions) {
		t.Fatalf("sizes differ: %v vs %v", a.Stats(), b.Stats())
	}
	for i := range a.Variables {
		va, vb := a.Variables[i], b.Variables[i]
		if va.Name != vb.Name || va.Agent != vb.Agent || strings.Join(va.Domain, "\x00") != strings.Join(vb.Domain, "\x00") {
			t.Errorf("variable %d: %+v != %+v", i, va, vb)
		}
	}
	for i := range a.Agents {
		if a.Agents[i] != b.Agents[i] {
			t.Errorf("agent %d: %+v != %+v", i, a.Agents[i], b.Agents[i])
		}
	}
	for i := range a.Functions {
		fa, fb := a.Functions[i], b.Functions[i]
		if !equalInts(fa.Scope, fb.Scope) || len(fa.Costs) != len(fb.Costs) {
			t.Errorf("function %d: scope %v/%d != %v/%d", i, fa.Scope, len(fa.Costs), fb.Scope, len(fb.Costs))
			continue
		}
		for j := range fa.Costs {
			if !near(fa.Costs[j], fb.Costs[j]) {
				t.Errorf("function %d entry %d: %v != %v", i, j, fa.Costs[j], fb.Costs[j])
			}
		}
	}
}

func TestRoundTripFiles(t *testing.T) {
	for _, name := range []string{"fabe_misc_simple2.uai", "fabe_grid_50-12-5.uai"} {
		t.Run(name, func(t *testing.T) {
			p := formattest.ReadFile(t, Read, name)
			q, _ := formattest.RoundTrip(t, Write, Read, p, "rt.uai")
			for i := range q.Functions {
				q.Functions[i].Name = p.Functions[i].Name
			}
			equalProblems(t, p, q)
		})
	}
}

// randomProblem makes a seeded random problem in the shape Read returns:
// names x<i>, labels 0..d-1, one agent a0, no offset. Costs lie in
// [lo, hi]; about one entry in ten is hard.
func randomProblem(seed uint64, lo, hi float64) *mva.Problem {
	return randprob.Make(rand.New(rand.NewPCG(seed, 1)), randprob.Shape{
		Agents:    randprob.Range{Min: 1, Max: 1},
		Vars:      randprob.Range{Min: 1, Max: 6},
		Domain:    randprob.Range{Min: 1, Max: 4},
		Functions: randprob.Range{Min: 0, Max: 5},
		Arity:     randprob.Range{Min: 1, Max: 3},
		Costs: func(r *rand.Rand, _ int, costs []float64) {
			for j := range costs {
				costs[j] = lo + (hi-lo)*r.Float64()
				if r.IntN(10) == 0 {
					costs[j] = mva.Hard
				}
			}
		},
	})
}

func TestRoundTripRandom(t *testing.T) {
	for seed := range uint64(200) {
		p := randomProblem(seed, -50, 50)
		q, _ := formattest.RoundTrip(t, Write, Read, p, "rt.uai")
		equalProblems(t, p, q)
		if t.Failed() {
			t.Fatalf("seed %d", seed)
		}
	}
}

// TestWriteEnergy checks that offsets and costs beyond what exp(−c) can
// hold keep every assignment's cost, if not the tables themselves.
func TestWriteEnergy(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 2))
		base := []float64{0, 1e4, -1e4, 650}[seed%4]
		p := randomProblem(seed, base, base+600)
		p.Offset = []float64{0, 3.5, -2000, 1e6}[r.IntN(4)]
		if seed%7 == 0 {
			p.Functions = nil
		}
		if seed%11 == 0 && len(p.Functions) > 0 {
			for j := range p.Functions[0].Costs {
				p.Functions[0].Costs[j] = mva.Hard
			}
		}
		q, _ := formattest.RoundTrip(t, Write, Read, p, "rt.uai")
		assign := make([]int, len(p.Variables))
		for range 20 {
			for v := range assign {
				assign[v] = r.IntN(p.DomainSize(v))
			}
			cp, _ := p.Eval(assign)
			cq, _ := q.Eval(assign)
			if !(mva.IsHard(cp) && mva.IsHard(cq)) && math.Abs(cp-cq) > 1e-9*max(1, math.Abs(cp)) {
				t.Fatalf("seed %d: assignment %v costs %v, after a round trip %v", seed, assign, cp, cq)
			}
		}
	}
}

func TestWriteNoVariables(t *testing.T) {
	p := &mva.Problem{Offset: 1234.5}
	q, _ := formattest.RoundTrip(t, Write, Read, p, "rt.uai")
	if len(q.Variables) != 0 || len(q.Functions) != 0 || !near(q.Offset, 1234.5) {
		t.Errorf("got %d variables, %d functions, offset %v; want 0, 0, 1234.5", len(q.Variables), len(q.Functions), q.Offset)
	}
}

func TestWriteErrors(t *testing.T) {
	p := &mva.Problem{
		Agents:    []mva.Agent{{Name: "a0"}},
		Variables: []mva.Variable{{Name: "x0", Domain: []string{"0", "1"}}},
		Functions: []mva.Function{{Name: "wide", Scope: []int{0}, Costs: []float64{0, 1000}}},
	}
	if err := Write(&bytes.Buffer{}, p); err == nil || !strings.Contains(err.Error(), "wide") {
		t.Errorf("Write with a cost span of 1000: err = %v, want one naming the function", err)
	}
	p.Functions[0].Costs = []float64{0, math.NaN()}
	if err := Write(&bytes.Buffer{}, p); !errors.Is(err, mva.ErrInvalid) {
		t.Errorf("Write of an invalid problem: err = %v, want ErrInvalid", err)
	}
	p.Functions[0].Costs = []float64{0, 1}
	p.Offset = 1e300
	if err := Write(&bytes.Buffer{}, p); err == nil {
		t.Error("Write with offset 1e300: no error")
	}
}

func TestWriteFormat(t *testing.T) {
	p := &mva.Problem{
		Agents: []mva.Agent{{Name: "a0"}},
		Variables: []mva.Variable{
			{Name: "x0", Domain: []string{"0", "1"}},
			{Name: "x1", Domain: []string{"0", "1", "2"}},
		},
		Functions: []mva.Function{{Scope: []int{0, 1}, Costs: []float64{0, mva.Hard, -math.Log(0.5), 0, 0, 0}}},
	}
	var buf bytes.Buffer
	if err := Write(&buf, p); err != nil {
		t.Fatal(err)
	}
	want := "MARKOV\n2\n2 3\n1\n2 0 1\n\n6\n1 0 0.5\n1 1 1\n"
	if buf.String() != want {
		t.Errorf("Write =\n%s\nwant\n%s", buf.String(), want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func FuzzRead(f *testing.F) {
	formattest.AddFiles(f, "fabe_misc_simple2.uai")
	// toulbar2's own small MARKOV files: zero potentials, tabs, a last
	// line without its newline (../../../testdata/toulbar2/README.md).
	public, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "toulbar2", "*.uai"))
	for _, name := range public {
		if b, err := os.ReadFile(name); err == nil && len(b) < 1<<14 {
			f.Add(b)
		}
	}
	for _, c := range readErrorCases() {
		f.Add([]byte(c.in))
	}
	f.Add([]byte("MARKOV\n2\n2 3\n3\n0\n2 0 1\n0\n1\n0.5\n6\n1 2 3\n4 5 6\n1\n0.25\n"))
	f.Add([]byte("BAYES 2 2 2 1 2 0 1 4 2.5\n1e-3 0 +1.\n"))
	f.Add([]byte("MARKOV\n3\n65536 65536 65536\n1\n3 0 1 2\n1\n"))
	f.Add([]byte("MARKOV\n1\n1048576\n1\n1 0\n1048576\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Read(bytes.NewReader(data), "fuzz.uai")
		if !formattest.Parsed(t, p, err) {
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, p); err != nil {
			return // costs too wide for exp(−c) are refused, not a bug
		}
		q, err := Read(&buf, "fuzz2.uai")
		if err != nil {
			t.Fatalf("Read(Write(p)): %v", err)
		}
		if len(q.Variables) != len(p.Variables) {
			t.Fatalf("round trip changed the variables")
		}
	})
}

// TestShortDecimalMatchesParseFloat checks the reader's fast path against
// strconv.ParseFloat, bit for bit, on hand-picked and seeded random
// tokens: those it takes must parse to the same float64, and it must
// leave everything else (signs, exponents, long mantissas) to ParseFloat.
func TestShortDecimalMatchesParseFloat(t *testing.T) {
	toks := []string{"0", "1", "0.5", ".5", "5.", "0.184761", "5.412394", "0.1", "0.3",
		"123456789012345", "0.123456789012345", "1.00000000000000", "000000000000001",
		"9.99999999999999", "0.000000000000001"}
	rng := rand.New(rand.NewPCG(18, 1))
	for range 20000 {
		n := 1 + rng.IntN(15)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		if p := rng.IntN(n + 1); p < n || rng.IntN(2) == 0 {
			b = append(b[:p], append([]byte{'.'}, b[p:]...)...)
		}
		toks = append(toks, string(b))
	}
	for _, tok := range toks {
		got, ok := shortDecimal([]byte(tok))
		if !ok {
			t.Errorf("shortDecimal(%q) declined a short decimal", tok)
			continue
		}
		want, err := strconv.ParseFloat(tok, 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("shortDecimal(%q) = %v, ParseFloat %v (%v)", tok, got, want, err)
		}
	}
	for _, tok := range []string{"", ".", "-0.5", "+0.5", "1e3", "0.0000000000000001", "1234567890123456", "1.2.3", "0x1", "inf", "NaN", "1_0"} {
		if v, ok := shortDecimal([]byte(tok)); ok {
			t.Errorf("shortDecimal(%q) = %v, want it left to ParseFloat", tok, v)
		}
	}
}
