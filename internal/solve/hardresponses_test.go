package solve

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format/wcsp"
	"github.com/hearth-dcop/hearth/mva/pipeline"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// TestExportHardResponses runs `hearth sim --shds $HEARTH_SHDS_FILE`'s
// protocol (MGM, the file's choice of parameters) with exact best
// responses (-p response_checks=$HEARTH_RESPONSE_CHECKS, default 2^28) in
// process, and writes every AND/OR response solve that took more than
// $HEARTH_HARD_CHECKS checks (default 2^24), or passed the budget, as a
// .wcsp in $HEARTH_EXPORT_HARD (costs ×100 rounded, the format's
// integers): the questions MGM really asks, later ones included, which
// TestExportSHDSResponses (first questions, random later ones) cannot
// produce. Files are named HOME_qN_CHECKS[_budget].wcsp, N the home's
// question (0 the first); every solve is logged (home, question, checks,
// done, time) to solves.log beside them. The solver is local.Exact's;
// HEARTH_RESPONSE_AOBB=1 makes it the AND/OR search (ShiftRows) that
// answered before EDAC did, for comparison. Skipped unless
// HEARTH_SHDS_FILE and HEARTH_EXPORT_HARD are set: a measuring aid, not
// a check.
func TestExportHardResponses(t *testing.T) {
	file, dir := os.Getenv("HEARTH_SHDS_FILE"), os.Getenv("HEARTH_EXPORT_HARD")
	if file == "" || dir == "" {
		t.Skip("set HEARTH_SHDS_FILE and HEARTH_EXPORT_HARD")
	}
	envInt := func(name string, def int64) int64 {
		s := os.Getenv(name)
		if s == "" {
			return def
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			t.Fatalf("$%s = %q: want a count", name, s)
		}
		return v
	}
	budget := envInt("HEARTH_RESPONSE_CHECKS", 1<<28)
	hard := envInt("HEARTH_HARD_CHECKS", 1<<24)
	r, err := homesolve.Load(file, true, homesolve.Overrides{Params: map[string]float64{"response_checks": float64(budget)}})
	if err != nil {
		t.Fatal(err)
	}
	o := HomeOptions(r, Defaults())
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	d, err := Prepare(r.Problem(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "solves.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cp := &capture{dir: dir, hard: hard, log: log, questions: map[string]int{}}
	d.Pipeline.Exact = cp.factory
	d.count()
	sol, err := pipeline.Solve(context.Background(), r.Problem(), d.Pipeline, &sim.Runtime{})
	if err != nil {
		t.Fatal(err)
	}
	res := d.Result(sol)
	t.Logf("notes %q", res.Notes)
	if cp.err != nil {
		t.Fatal(cp.err)
	}
}

// capture is an exact solver factory (mva.ExactFactory) whose AND/OR
// solvers log every solve and write the hard ones (TestExportHardResponses).
type capture struct {
	dir       string
	hard      int64
	mu        sync.Mutex
	log       *os.File
	questions map[string]int // per home, the solves so far
	err       error
}

func (c *capture) factory(lp *mva.LocalProblem, entries int) (mva.LocalSolver, error) {
	if entries > 0 {
		return local.Exact(lp, entries)
	}
	var s mva.LocalSolver = local.NewAOBB(lp, local.AOBBOptions{ShiftRows: true})
	if os.Getenv("HEARTH_RESPONSE_AOBB") == "" {
		var err error
		if s, err = local.Exact(lp, 0); err != nil {
			return nil, err
		}
	}
	rs, ok := s.(responseSolver)
	if !ok {
		return nil, fmt.Errorf("local.Exact's %T is no response solver", s)
	}
	return &capturedSolver{responseSolver: rs, lp: lp, c: c}, nil
}

// responseSolver is what the responder asks of local.Exact's solver.
type responseSolver interface {
	mva.LocalSolver
	SolveRowWithin(ctx context.Context, boundary, interior []int, ub float64, checks int64) (float64, bool, bool, error)
	Width() int
	Describe() string
}

// capturedSolver is local.Exact's solver (with HEARTH_RESPONSE_AOBB=1,
// the AND/OR search it made before) with its solves captured.
type capturedSolver struct {
	responseSolver
	lp *mva.LocalProblem
	c  *capture
}

func (s *capturedSolver) SolveRowWithin(ctx context.Context, b, in []int, ub float64, checks int64) (float64, bool, bool, error) {
	t0, c0 := time.Now(), s.Checks()
	c, found, done, err := s.responseSolver.SolveRowWithin(ctx, b, in, ub, checks)
	s.c.record(s.lp, b, s.Checks()-c0, done, time.Since(t0), s.Describe())
	return c, found, done, err
}

func (s *capturedSolver) SolveRow(ctx context.Context, b, in []int) (float64, error) {
	t0, c0 := time.Now(), s.Checks()
	c, err := s.responseSolver.SolveRow(ctx, b, in)
	s.c.record(s.lp, b, s.Checks()-c0, err == nil, time.Since(t0), s.Describe())
	return c, err
}

// record logs one solve of lp at boundary b and writes it when it was
// hard.
func (c *capture) record(lp *mva.LocalProblem, b []int, checks int64, done bool, d time.Duration, desc string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	home := strings.NewReplacer(" ", "_", "/", "_").Replace(lp.Problem.Agents[0].Name)
	q := c.questions[home]
	c.questions[home]++
	fmt.Fprintf(c.log, "%s q%d checks %d done %v %v %s\n", home, q, checks, done, d.Round(time.Millisecond), desc)
	if checks <= c.hard && done {
		return
	}
	name := fmt.Sprintf("%s_q%d_%d", home, q, checks)
	if !done {
		name += "_budget"
	}
	f, err := os.Create(filepath.Join(c.dir, name+".wcsp"))
	if err == nil {
		var q *mva.Problem
		if q, err = conditioned(lp, b, 100); err == nil {
			err = wcsp.Write(f, q)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil && c.err == nil {
		c.err = err
	}
}

// conditioned returns lp's interior problem with the boundary at b
// (mva.LocalProblem.Conditioned), every finite cost times k rounded to an
// integer (the wcsp format's costs).
func conditioned(lp *mva.LocalProblem, b []int, k float64) (*mva.Problem, error) {
	q, err := lp.Conditioned(b)
	if err != nil {
		return nil, err
	}
	round := func(x float64) float64 {
		if mva.IsHard(x) {
			return x
		}
		return math.Round(x * k)
	}
	for i := range q.Functions {
		for e, c := range q.Functions[i].Costs {
			q.Functions[i].Costs[e] = round(c)
		}
	}
	q.Offset = round(q.Offset)
	return q, nil
}
