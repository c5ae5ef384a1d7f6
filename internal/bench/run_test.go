package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/reform"
)

// tinyProblem is a one-variable problem whose size records the point, so
// that a fake solver can tell points apart.
func tinyProblem(seed uint64, pt Point, _ string) (*mva.Problem, error) {
	p := &mva.Problem{
		Name:      fmt.Sprintf("tiny-%s-%d", pt.Label, seed),
		Agents:    []mva.Agent{{Name: "a0"}},
		Variables: []mva.Variable{{Name: "x", Domain: []string{"0", "1"}, Agent: 0}},
	}
	return p, p.Validate()
}

// fakeSolve answers by the algorithm's group: "opt" proves objective 10
// (plus the seed), "heur" finds 12, "slow" waits for its time limit,
// "big" runs out of memory, "gpu" is unavailable, "boom" panics, and
// "wrong" claims a better optimum than "opt" on seed 2.
func fakeSolve(ctx context.Context, p *mva.Problem, a Algorithm, seed uint64) (mva.Result, error) {
	obj := func(x float64, optimal bool) (mva.Result, error) {
		r := mva.NewResult(p, []int{0}, x)
		r.Optimal = optimal
		r.Metrics = mva.Metrics{SimTimeMs: 1, WallMs: 2, Messages: 3}
		return r, nil
	}
	switch a.Group {
	case "opt":
		return obj(10+float64(seed), true)
	case "heur":
		return obj(12+float64(seed), false)
	case "wrong":
		if seed == 2 {
			return obj(5, true)
		}
		return obj(10+float64(seed), true)
	case "slow":
		<-ctx.Done()
		return mva.Result{}, fmt.Errorf("agent 0: %w", ctx.Err())
	case "big":
		return mva.Result{}, fmt.Errorf("compilation: %w", reform.ErrTooLarge)
	case "bigtable":
		return mva.Result{}, fmt.Errorf("dpop: %w", local.ErrTooLarge)
	case "gpu":
		return mva.Result{}, fmt.Errorf("no device: %w", ErrUnavailable)
	case "boom":
		panic("solver bug")
	}
	return mva.Result{}, errors.New("unknown group " + a.Group)
}

func fakeExperiment(groups ...string) *Experiment {
	var algs []Algorithm
	for _, g := range groups {
		algs = append(algs, Algorithm{Group: g, Global: "dpop", Local: "be"})
	}
	return &Experiment{
		Name:    "fake",
		Metrics: []Metric{SimTime, Gap},
		Plan: func(bool) Plan {
			return Plan{
				Algorithms: algs, Seeds: 2, Timeout: 20 * time.Millisecond,
				Sweeps: []Sweep{{Name: "n", Title: "n", Build: tinyProblem, Monotone: true,
					Points: []Point{{X: 1, Label: "1"}, {X: 2, Label: "2"}, {X: 3, Label: "3"}}}},
			}
		},
	}
}

func statusOf(rows []Row, group, label string, seed uint64) Row {
	for _, r := range rows {
		if r.Group == group && r.XLabel == label && r.Seed == seed {
			return r
		}
	}
	return Row{}
}

func TestRunStatuses(t *testing.T) {
	e := fakeExperiment("opt", "heur", "slow", "big", "bigtable", "gpu", "boom")
	var calls []int
	rows, err := Run(context.Background(), e, Options{Solve: fakeSolve, Host: "test",
		Progress: func(done, total int, _ string) { calls = append(calls, done, total) }})
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * 2 * 7; len(rows) != want {
		t.Fatalf("%d rows, want %d", len(rows), want)
	}
	if len(calls) != 2*len(rows) || calls[len(calls)-2] != len(rows) || calls[len(calls)-1] != len(rows) {
		t.Errorf("progress calls end with %v, want done = total = %d", calls[len(calls)-2:], len(rows))
	}
	for _, tc := range []struct {
		group, label string
		status       string
	}{
		{"opt", "1", StatusOK}, {"opt", "3", StatusOK},
		{"heur", "2", StatusOK},
		{"slow", "1", StatusTimeout}, {"slow", "2", StatusSkipped}, {"slow", "3", StatusSkipped},
		{"big", "1", StatusMemory}, {"big", "2", StatusSkipped},
		{"bigtable", "1", StatusMemory},
		// Unavailable is not a failure of the algorithm: never skipped.
		{"gpu", "1", StatusUnavailable}, {"gpu", "3", StatusUnavailable},
		// A panic is an error row, and errors are not skipped either.
		{"boom", "1", StatusError}, {"boom", "3", StatusError},
	} {
		for seed := uint64(1); seed <= 2; seed++ {
			r := statusOf(rows, tc.group, tc.label, seed)
			if r.Status != tc.status {
				t.Errorf("%s at %s seed %d: status %q (%s), want %q", tc.group, tc.label, seed, r.Status, r.Error, tc.status)
			}
		}
	}
	r := statusOf(rows, "heur", "2", 2)
	if r.Reference != 12 || math.Abs(r.GapPct-100*2.0/12) > 1e-12 {
		t.Errorf("heur seed 2: reference %v gap %v, want 12 and %v", r.Reference, r.GapPct, 100*2.0/12)
	}
	if r := statusOf(rows, "slow", "1", 1); !(r.WallMs >= 20) || !math.IsNaN(r.Objective) {
		t.Errorf("timeout row: wall %v objective %v, want ≥ 20 ms and NaN", r.WallMs, r.Objective)
	}
	if r := statusOf(rows, "boom", "1", 1); !strings.Contains(r.Error, "solver bug") {
		t.Errorf("panic row error %q does not name the panic", r.Error)
	}
	if r.Host != "test" || r.Experiment != "fake" || r.Device != "cpu" || r.Reform != "mva" {
		t.Errorf("row key fields: %+v", r)
	}
	// The panic rows must fail Check; nothing else does.
	err = Check(rows)
	if err == nil || !strings.Contains(err.Error(), "solver bug") {
		t.Fatalf("Check: %v, want the panics reported", err)
	}
	clean := filter(rows, func(r Row) bool { return r.Group != "boom" })
	if err := Check(clean); err != nil {
		t.Errorf("Check without the panics: %v", err)
	}
}

func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	e := fakeExperiment("opt", "heur")
	rows, err := Run(ctx, e, Options{Solve: fakeSolve, Progress: func(done, _ int, _ string) {
		if done == 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || len(rows) != 3 {
		t.Fatalf("interrupted run: %d rows, %v; want 3 rows and context.Canceled", len(rows), err)
	}
}

func TestRunOptions(t *testing.T) {
	e := fakeExperiment("opt")
	rows, err := Run(context.Background(), e, Options{Solve: fakeSolve, Seeds: 3})
	if err != nil || len(rows) != 9 {
		t.Fatalf("Seeds 3: %d rows, %v", len(rows), err)
	}
	if _, err := Run(context.Background(), e, Options{Solve: fakeSolve, Sweeps: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown sweep: %v", err)
	}
	if _, err := Run(context.Background(), e, Options{}); err == nil {
		t.Error("no SolveFunc: no error")
	}
	e.Unavailable = "needs something"
	if _, err := Run(context.Background(), e, Options{Solve: fakeSolve}); err == nil || !strings.Contains(err.Error(), "needs something") {
		t.Errorf("unavailable experiment: %v", err)
	}
}

func TestTune(t *testing.T) {
	var seen []int
	e := &Experiment{Name: "tune", Plan: func(bool) Plan {
		return Plan{Seeds: 1, Timeout: time.Second, Algorithms: []Algorithm{{Group: "opt", Global: "dpop", Local: "gibbs", Runs: 7}},
			Sweeps: []Sweep{{Name: "R", Build: tinyProblem, Points: sampleSweep("R", []int{1, 50})}}}
	}}
	solve := func(ctx context.Context, p *mva.Problem, a Algorithm, seed uint64) (mva.Result, error) {
		seen = append(seen, a.Runs)
		return fakeSolve(ctx, p, a, seed)
	}
	rows, err := Run(context.Background(), e, Options{Solve: solve})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[1 50]" || rows[1].Runs != 50 {
		t.Errorf("runs seen %v, row runs %d; want [1 50] and 50", seen, rows[1].Runs)
	}
	if e.Plan(false).Algorithms[0].Runs != 7 {
		t.Error("Tune changed the plan's algorithm")
	}
}

func TestDelay(t *testing.T) {
	var seen []time.Duration
	solve := func(ctx context.Context, p *mva.Problem, a Algorithm, seed uint64) (mva.Result, error) {
		seen = append(seen, a.Delay)
		return fakeSolve(ctx, p, a, seed)
	}
	if _, err := Run(context.Background(), fakeExperiment("opt"), Options{Solve: solve, Seeds: 1, Delay: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || seen[0] != time.Millisecond || seen[2] != time.Millisecond {
		t.Errorf("delays seen %v, want 1ms for every run", seen)
	}
}
