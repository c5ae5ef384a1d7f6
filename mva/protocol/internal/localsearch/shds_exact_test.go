package localsearch_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format/wcsp"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// TestSHDSExactResponse checks that `--shds`'s choice (devices/homesolve)
// with -p response_checks=homesolve.ExactResponseChecks, its other
// parameters (response_width, response_total) left to it, answers a home
// too wide for bucket elimination — dm_7_1_5's second home, whose
// response problem has min-fill width 17 or more — with an exact best
// response, not block descent: its first question (the other homes at
// their own schedules, as MGM with init=3 asks) is answered by the
// AND/OR search within the bounds, and the row's ℓ_i is toulbar2's
// optimum of the same response problem (written as a .wcsp, costs ×100).
// Past response_width the same question is answered by block descent.
func TestSHDSExactResponse(t *testing.T) {
	if _, err := exec.LookPath("toulbar2"); err != nil {
		t.Skip("toulbar2 is not installed")
	}
	const home = 1
	ctx := context.Background()
	r, err := homesolve.Load(filepath.Join("..", "..", "..", "..", "testdata", "shds_dm_7_1_5.json"), true, homesolve.Overrides{Params: map[string]float64{"response_checks": homesolve.ExactResponseChecks}})
	if err != nil {
		t.Fatal(err)
	}
	choice := r.WithStart(r.Choice())
	params := choice.Params
	if params["response"] != float64(localsearch.ResponseBlocks) || params["response_checks"] <= 0 {
		t.Fatalf("--shds's parameters %v: no exact responses for wide homes", params)
	}
	cfg, err := localsearch.ParseResponse(params)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Problem()
	d := mva.Decompose(p)
	sub := d.Subs[home]
	sub.Boundary, sub.Interior = nil, sub.Local
	whole := mva.NewLocalProblem(p, &sub)
	if _, err := local.NewBE(whole, local.BEOptions{MaxEntries: int(params["response_entries"])}); err == nil {
		t.Fatalf("home %d fits bucket elimination in %v entries", home, params["response_entries"])
	}
	solver := func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("aobb", lp) }
	n, _, err := mva.BuildNode(ctx, d, d.Neighbours(), home, solver, false, 1, params)
	if err != nil {
		t.Fatal(err)
	}
	n.Exact = local.Exact
	nb, err := localsearch.New(n)
	if err != nil {
		t.Fatal(err)
	}
	rowCost := func(ctx context.Context, row int) (localsearch.Cost, error) {
		return localsearch.RowCost(ctx, n.Local, row)
	}
	vals := make([]int, len(nb.SlotVars()))
	for s, v := range nb.SlotVars() {
		vals[s] = choice.Start[v]
	}
	lp := n.Local.LP
	b := make([]int, lp.NB)
	for k, v := range lp.Vars[:lp.NB] {
		b[k] = choice.Start[v]
	}
	cur := lp.EncodeRow(b)
	// Past response_width (this search's pseudo-tree is wider than 10)
	// the same question is answered by block descent, without trying.
	narrow := cfg
	narrow.Width = 10
	for _, c := range []localsearch.ResponseConfig{narrow, cfg} {
		resp, err := localsearch.NewResponder(n, nb, rowCost, c)
		if err != nil {
			t.Fatal(err)
		}
		row, gain, err := resp.BestMove(ctx, cur, vals)
		if err != nil {
			t.Fatal(err)
		}
		exact, blocks := resp.ResponseCounts()
		t.Logf("home %d, response_width %d, response_total %d: row %d, gain %v, %d exact and %d block-descent responses", home, c.Width, c.Total, row, gain, exact, blocks)
		if c != cfg {
			if exact != 0 || blocks != 1 {
				t.Fatalf("home %d (%+v): %d exact and %d block-descent responses past its bounds, want block descent", home, c, exact, blocks)
			}
			continue
		}
		if exact != 1 || blocks != 0 {
			t.Fatalf("home %d: %d exact and %d block-descent responses, want one exact", home, exact, blocks)
		}
		checkResponse(t, resp, nb, rowCost, row, vals)
	}
}

// checkResponse writes resp's response problem at vals as a .wcsp (costs
// ×100) and checks row's ℓ_i against toulbar2's optimum of it.
func checkResponse(t *testing.T, resp *localsearch.Responder, nb *localsearch.Neighbourhood, rowCost localsearch.LocalCost, row int, vals []int) {
	t.Helper()
	q, err := resp.ResponseProblem(vals)
	if err != nil {
		t.Fatal(err)
	}
	if _, width := q.PrimalGraph().MinFill(mva.NewLocalProblem(q, mva.Whole(q)).Vars); width < 17 {
		t.Fatalf("the response problem has min-fill width %d, not a wide home's (17 or more)", width)
	}
	path := filepath.Join(t.TempDir(), "response.wcsp")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := wcsp.Write(f, scaled(q, 100)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkToulbar2(t, path, q, nb, rowCost, row, vals)
}
