package lp

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// randomBanded returns a feasible programme of the planner's shape: rows
// in a band, each column touching one to three rows near each other,
// finite and infinite upper bounds, some fixed columns; feasible by
// construction (B = A·x0 for a point x0 within the bounds) and bounded
// (columns without an upper bound have costs ≥ 0).
func randomBanded(seed uint64) *Problem {
	r := rand.New(rand.NewPCG(seed, 42))
	m := 5 + r.IntN(40)
	n := m + r.IntN(3*m)
	p := NewProblem(m)
	x0 := make([]float64, 0, n)
	type col struct {
		rows []int
		vals []float64
	}
	var cols []col
	for range n {
		first := r.IntN(m)
		var c col
		for k := range 1 + r.IntN(3) {
			if first+k < m {
				c.rows = append(c.rows, first+k)
				c.vals = append(c.vals, math.Round((r.Float64()*4-2)*100)/100)
			}
		}
		lo := math.Round(r.Float64()*4-1) * float64(r.IntN(2))
		hi := lo + math.Round(r.Float64()*10)
		if r.IntN(4) == 0 {
			hi = math.Inf(1)
		}
		if r.IntN(10) == 0 {
			hi = lo // fixed
		}
		v := lo
		if !math.IsInf(hi, 1) {
			v = lo + (hi-lo)*r.Float64()
		} else {
			v = lo + 3*r.Float64()
		}
		// Costs ≥ 0 on unbounded columns keep the programme bounded.
		cost := math.Round((r.Float64()*2-1)*100) / 100
		if math.IsInf(hi, 1) {
			cost = math.Abs(cost)
		}
		p.AddCol(cost, lo, hi, c.rows, c.vals)
		x0 = append(x0, v)
		cols = append(cols, c)
	}
	for j, c := range cols {
		for k, row := range c.rows {
			p.B[row] += c.vals[k] * x0[j]
		}
	}
	return p
}

// writeLP writes p in CPLEX LP format for glpsol.
func writeLP(p *Problem) string {
	var b strings.Builder
	b.WriteString("Minimize\n obj:")
	for j, c := range p.Cost {
		fmt.Fprintf(&b, " %+.12g x%d", c, j)
	}
	b.WriteString("\nSubject To\n")
	rows := make([]strings.Builder, p.Rows)
	for j := range p.Cost {
		for e := p.colStart[j]; e < p.colStart[j+1]; e++ {
			fmt.Fprintf(&rows[p.rowIdx[e]], " %+.12g x%d", p.val[e], j)
		}
	}
	for i := range rows {
		s := rows[i].String()
		if s == "" {
			s = " 0 x0"
		}
		fmt.Fprintf(&b, " r%d:%s = %.12g\n", i, s, p.B[i])
	}
	b.WriteString("Bounds\n")
	for j := range p.Cost {
		if math.IsInf(p.Hi[j], 1) {
			fmt.Fprintf(&b, " x%d >= %.12g\n", j, p.Lo[j])
		} else {
			fmt.Fprintf(&b, " %.12g <= x%d <= %.12g\n", p.Lo[j], j, p.Hi[j])
		}
	}
	b.WriteString("End\n")
	return b.String()
}

// glpk solves p with glpsol and returns its optimum.
func glpk(t *testing.T, p *Problem) float64 {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "p.lp"), filepath.Join(dir, "p.txt")
	if err := os.WriteFile(in, []byte(writeLP(p)), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cmd := exec.Command("glpsol", "--lp", in, "-w", out)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		t.Fatalf("glpsol: %v: %s", err, log.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The plain-text solution: comment lines, then "s bas m n pst dst obj".
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 7 && f[0] == "s" && f[1] == "bas" {
			if f[4] != "f" || f[5] != "f" {
				t.Fatalf("glpsol status %q %q", f[4], f[5])
			}
			v, err := strconv.ParseFloat(f[6], 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no solution line in glpsol's output:\n%s", data)
	return 0
}

// TestAgainstGLPK: on seeded banded programmes the interior-point optimum
// is feasible (rows and bounds) and equals GLPK's simplex optimum.
func TestAgainstGLPK(t *testing.T) {
	if _, err := exec.LookPath("glpsol"); err != nil {
		t.Skip("glpsol not found (Debian: apt-get install glpk-utils)")
	}
	for seed := range uint64(60) {
		p := randomBanded(seed)
		res, err := Solve(p)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for j, v := range res.X {
			if v < p.Lo[j]-1e-9 || v > p.Hi[j]+1e-9 {
				t.Fatalf("seed %d: x%d = %v outside [%v, %v]", seed, j, v, p.Lo[j], p.Hi[j])
			}
		}
		ax := make([]float64, p.Rows)
		for j := range p.Cost {
			for e := p.colStart[j]; e < p.colStart[j+1]; e++ {
				ax[p.rowIdx[e]] += p.val[e] * res.X[j]
			}
		}
		for i := range ax {
			if math.Abs(ax[i]-p.B[i]) > 1e-6*(1+math.Abs(p.B[i])) {
				t.Fatalf("seed %d: row %d: %v ≠ %v", seed, i, ax[i], p.B[i])
			}
		}
		want := glpk(t, p)
		if math.Abs(res.Obj-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Fatalf("seed %d: optimum %.9g, GLPK %.9g", seed, res.Obj, want)
		}
	}
}

// TestInfeasible: a programme with no solution is reported, not solved.
func TestInfeasible(t *testing.T) {
	p := NewProblem(1)
	p.AddCol(1, 0, 1, []int{0}, []float64{1})
	p.AddCol(1, 0, 1, []int{0}, []float64{1})
	p.B[0] = 3 // x + y = 3 with x, y ≤ 1
	if _, err := Solve(p); !errors.Is(err, ErrNotConverged) {
		t.Fatalf("err %v", err)
	}
}
