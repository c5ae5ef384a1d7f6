package compile

import (
	"context"
	"math"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// BenchmarkBEOrder solves the README's example street with automatic
// levels (autoStreet) by bucket elimination in its own order (beOrder:
// the cheapest of seeded greedy orders, then a local search, by the
// entries its buckets join) against min-fill's order alone, the order
// before: the whole street as one row (`hearth solve`), and each home's
// MVA table over its committed levels (what DPOP's agents fill, `hearth
// sim`). Both orders must give the same optimum, and the same table; the
// ratio of their times is the order's. reads/op is bucket elimination's
// Checks, the entries its joins read.
func BenchmarkBEOrder(b *testing.B) {
	cfg := autoStreet(b)
	c, err := Compile(cfg.Neighbourhood, Options{})
	if err != nil {
		b.Fatal(err)
	}
	p := c.Problem
	d := mva.Decompose(p)
	cases := []struct {
		name string
		lp   *mva.LocalProblem
	}{{"street", mva.NewLocalProblem(p, mva.Whole(p))}}
	for i := range d.Subs {
		cases = append(cases, struct {
			name string
			lp   *mva.LocalProblem
		}{"table-" + p.Agents[i].Name, mva.NewLocalProblem(p, &d.Subs[i])})
	}
	for _, tc := range cases {
		var want []float64
		for _, order := range []struct {
			name    string
			minFill bool
		}{{"min-fill", true}, {"search", false}} {
			b.Run(tc.name+"/"+order.name, func(b *testing.B) {
				var reads int64
				for b.Loop() {
					s, err := local.NewBE(tc.lp, local.BEOptions{MinFill: order.minFill})
					if err != nil {
						b.Fatal(err)
					}
					t, err := mva.NewTable(tc.lp)
					if err != nil {
						b.Fatal(err)
					}
					if err := t.Fill(context.Background(), s); err != nil {
						b.Fatal(err)
					}
					reads = s.Checks()
					if want == nil {
						want = t.Costs
						continue
					}
					for r, got := range t.Costs {
						if math.Abs(got-want[r]) > 1e-9*math.Max(1, math.Abs(want[r])) {
							b.Fatalf("row %d: %s's cost %.12g, the other order's %.12g", r, order.name, got, want[r])
						}
					}
				}
				b.ReportMetric(float64(reads), "reads/op")
			})
		}
	}
}
