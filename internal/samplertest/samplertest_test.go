package samplertest

import (
	"math"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// chiTail is the exact upper tail probability of the chi-square
// distribution with df degrees of freedom at x, from the closed forms of
// the regularised incomplete gamma function at integer and half-integer
// shapes.
func chiTail(df int, x float64) float64 {
	h := x / 2
	if df%2 == 0 {
		term, sum := 1.0, 1.0
		for k := 1; k < df/2; k++ {
			term *= h / float64(k)
			sum += term
		}
		return math.Exp(-h) * sum
	}
	q := math.Erfc(math.Sqrt(h))
	for k := range (df - 1) / 2 {
		a := float64(k) + 0.5
		q += math.Exp(a*math.Log(h) - h - lgamma(a+1))
	}
	return q
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// TestChiLimit checks the Wilson–Hilferty quantile against the exact tail:
// within a factor 3 of 10⁻⁶ over the degrees of freedom the tests use.
func TestChiLimit(t *testing.T) {
	if got := chiTail(2, 2*math.Log(1e6)); math.Abs(got-1e-6) > 1e-15 {
		t.Fatalf("chiTail(2, 2 ln 10⁶) = %v, want 10⁻⁶", got)
	}
	if got := chiTail(1, 3.841458820694124); math.Abs(got-0.05) > 1e-9 {
		t.Fatalf("chiTail(1, 3.84) = %v, want 0.05", got)
	}
	for _, df := range []int{3, 4, 5, 10, 29, 30, 119, 500} {
		p := chiTail(df, ChiLimit(df))
		if p < 1e-6/3 || p > 3e-6 {
			t.Errorf("df %d: P(χ² > %.2f) = %.3g, want about 10⁻⁶", df, ChiLimit(df), p)
		}
	}
}

func TestChiSquare(t *testing.T) {
	pi := []float64{0.5, 0.25, 0, 0.25}
	tests := []struct {
		name   string
		counts []int
		chi    float64
		df     int
	}{
		{"exact", []int{50, 25, 0, 25}, 0, 2},
		// (60−50)²/50 + (20−25)²/25 + (20−25)²/25 = 2 + 1 + 1.
		{"off", []int{60, 20, 0, 20}, 4, 2},
		{"impossible state", []int{50, 25, 1, 24}, math.Inf(1), 1},
	}
	for _, tc := range tests {
		chi, df := ChiSquare(tc.counts, pi)
		if math.Abs(chi-tc.chi) > 1e-12 && chi != tc.chi || df != tc.df {
			t.Errorf("%s: ChiSquare = %v, %d; want %v, %d", tc.name, chi, df, tc.chi, tc.df)
		}
		u := make([]uint64, len(tc.counts))
		for i, c := range tc.counts {
			u[i] = uint64(c)
		}
		if chiU, dfU := ChiSquare(u, pi); chiU != chi || dfU != df {
			t.Errorf("%s: uint64 counts give %v, %d; int counts %v, %d", tc.name, chiU, dfU, chi, df)
		}
	}
}

// TestBoltzmann checks π on two variables of 2 and 3 values against the
// closed form, and the numbering against StateIndex.
func TestBoltzmann(t *testing.T) {
	doms := []int{2, 3}
	cost := func(x []int) float64 { return float64(x[0] + 2*x[1]) }
	for _, tau := range []float64{1, 0.5, 3} {
		pi := Boltzmann(doms, cost, tau)
		z := 0.0
		for a := range 2 {
			for b := range 3 {
				z += math.Exp(-float64(a+2*b) / tau)
			}
		}
		for a := range 2 {
			for b := range 3 {
				s := StateIndex(doms, []int{a, b})
				if s != 3*a+b {
					t.Fatalf("StateIndex(%d, %d) = %d", a, b, s)
				}
				if want := math.Exp(-float64(a+2*b)/tau) / z; math.Abs(pi[s]-want) > 1e-15 {
					t.Errorf("τ=%v: π(%d, %d) = %v, want %v", tau, a, b, pi[s], want)
				}
			}
		}
	}
	// A Hard cost has probability 0.
	pi := Boltzmann([]int{2}, func(x []int) float64 { return []float64{mva.Hard, 1}[x[0]] }, 1)
	if pi[0] != 0 || pi[1] != 1 {
		t.Errorf("π with a Hard state = %v, want [0 1]", pi)
	}
}

// TestFixtures checks the shapes the sampler tests rely on.
func TestFixtures(t *testing.T) {
	lp := DistProblem(t)
	if lp.NB != 1 || lp.NumInterior() != 4 {
		t.Fatalf("DistProblem: %d boundary, %d interior", lp.NB, lp.NumInterior())
	}
	for row := range 2 {
		pi := Target(lp, row, 1)
		if len(pi) != 36 || slices.Index(pi, 0) == -1 {
			t.Fatalf("DistProblem row %d: %d states", row, len(pi))
		}
		if _, df := ChiSquare(make([]int, len(pi)), pi); df != 29 {
			t.Fatalf("DistProblem row %d: %d feasible states, want 30", row, df+1)
		}
	}
	if h := HardRows(t); h.NB != 2 || h.NumInterior() != 4 {
		t.Fatalf("HardRows: %d boundary, %d interior", h.NB, h.NumInterior())
	}
	huge := HugeBoundary(t)
	if _, err := huge.Rows(); huge.NB != HugeNB || err == nil {
		t.Fatalf("HugeBoundary: %d boundary, rows error %v", huge.NB, err)
	}
	for _, c := range []struct{ nb, db int }{{4, 8}, {2, 6}, {1, 3}} {
		m := MeetingAgent(1, c.nb, c.db, true)
		rows, err := m.Rows()
		if err != nil || m.NB != c.nb || m.NumInterior() != 10 || rows != int(math.Pow(float64(c.db), float64(c.nb))) {
			t.Fatalf("MeetingAgent(%d, %d): %d boundary, %d interior, %d rows (%v)", c.nb, c.db, m.NB, m.NumInterior(), rows, err)
		}
	}
	p := NewProblem(t, []int{2, 3}, []int{0, 1}, nil)
	if len(p.Agents) != 2 || p.Variables[1].Name != "v1" || !slices.Equal(p.Variables[1].Domain, []string{"0", "1", "2"}) {
		t.Fatalf("NewProblem: %+v", p)
	}
	if n := len(Locals(p)); n != 2 {
		t.Fatalf("Locals: %d local problems, want 2", n)
	}
}
