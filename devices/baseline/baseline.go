package baseline

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// DefaultRounds is the least bound on SH-MGM's rounds after the first
// adoption; the bound is twice the number of homes when that is more. On
// a complete neighbour graph one home moves per round, so convergence
// takes on the order of the number of homes (dm_251_1_2: 108 rounds); the
// published simulator stops after one (shds-model.md §5.1).
const DefaultRounds = 100

// Options tune the baselines. The zero value is the documented default.
type Options struct {
	// Solver makes each home's local solver; it must be exact for the
	// baselines to mean what they say. Nil means bucket elimination.
	Solver mva.SolverFactory
	// OwnPeak makes the uncoordinated homes minimise their own squared
	// load too (SHDS's independent optimum) instead of their bill only.
	OwnPeak bool
	// Rounds bounds SH-MGM's rounds; 0 means max(DefaultRounds, 2·homes),
	// negative stops after the first adoption (round 0, the simulator's
	// K = 0).
	Rounds int
	// Workers is the number of homes solved at once; 0 means GOMAXPROCS.
	Workers int
	// Compile bounds the one-home problems.
	Compile compile.Options
	// ExactEntries bounds the tables of a home whose best response is
	// solved exactly as a whole (0 means 2^22 entries); wider homes
	// answer by block descent.
	ExactEntries int
	// forceBlocks makes every home use block descent (tests).
	forceBlocks bool
	// eager makes SH-MGM re-solve every home whose neighbours moved,
	// without the gain bounds of lazyMGM (tests: the two must agree).
	eager bool
	// levelPeak puts every home's peak term on level variables, as
	// before newSlotPeakSolver (tests: the two must agree).
	levelPeak bool
	// noReuse makes block descent compile and solve every block on
	// every pass, as before blockHome's cache and skips, and every
	// responder solve a question asked again (tests: the two must
	// agree).
	noReuse bool
	// gainFrom overrides gainSolverFrom (tests: 1 gives every exact
	// home a gain solver).
	gainFrom int
	// pool lends bucket elimination's tables to every home's solves
	// (withPool); nil allocates them for each solve.
	pool *local.TablePool
}

// poolBytes bounds the tables a run's pool keeps between solves: the
// gain solvers' and the blocks' buckets of two workers (up to a few
// million entries of 12 bytes, output and argmin), not min-fill's
// widest, which only a mover's row needs.
const poolBytes = 64 << 20

// withPool returns o with a table pool for its homes' solves, shared by
// every responder made with it; o's own pool where it has one.
func (o Options) withPool() Options {
	if o.pool == nil {
		o.pool = local.NewTablePool(poolBytes)
	}
	return o
}

func (o *Options) solver() mva.SolverFactory {
	if o.Solver != nil {
		return o.Solver
	}
	pool := o.pool
	return func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return defaultSolver(lp, pool) }
}

func (o *Options) maxTable() int {
	if o.Compile.MaxTable > 0 {
		return o.Compile.MaxTable
	}
	return compile.DefaultMaxTable
}

func (o *Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// Outcome is a baseline's schedule and its evaluation under the
// neighbourhood's objective.
type Outcome struct {
	// Name is "uncoordinated" or "shmgm".
	Name     string
	Schedule *devices.Schedule
	// Eval is n.Evaluate of Schedule, the levels being the tightest that
	// fit: Eval.Cost is the coordinated objective of this schedule (+Inf
	// when it breaks the feeder limit, which the baselines ignore).
	Eval *devices.Evaluation
	// Rounds is the number of SH-MGM rounds after the first adoption;
	// Moves the number of home moves in them; Converged is true when the
	// last round found no home that could improve.
	Rounds    int
	Moves     int
	Converged bool
	// Solves counts the one-home (or one-block) solves.
	Solves int
	// Approximate counts the homes too wide for exact bucket elimination
	// whose best responses came from block descent (respond.go).
	Approximate int
	// Coarse names the homes whose best responses were solved with
	// fewer levels per slot than they have draws, their per-slot tables
	// being past the compiler's limit (Options.Compile.MaxTable): their
	// peak term was on level caps above the draw. The schedules and Eval
	// are still exact evaluations; only the responses are approximate.
	Coarse []string
	Wall   time.Duration
}

// Uncoordinated schedules every home alone and evaluates the
// neighbourhood's resulting load.
func Uncoordinated(ctx context.Context, n *devices.Neighbourhood, o Options) (*Outcome, error) {
	start := time.Now()
	if err := n.Validate(); err != nil {
		return nil, err
	}
	s := &devices.Schedule{Homes: make([]devices.HomeSchedule, len(n.Homes))}
	approx := make([]bool, len(n.Homes))
	coarse := make([]bool, len(n.Homes))
	err := parallel(ctx, o.workers(), len(n.Homes), func(hi int) error {
		if o.OwnPeak {
			r, exact, err := newResponder(n, hi, &o)
			if err != nil {
				return err
			}
			if _, err := r.respond(ctx, make([]float64, n.Horizon.Slots)); err != nil {
				return err
			}
			r.adopt()
			s.Homes[hi], approx[hi], coarse[hi] = r.schedule(), !exact, r.coarse()
			return nil
		}
		hs, err := newHomeSolver(n, n.Homes[hi], false, &o)
		if err != nil {
			return err
		}
		assign, _, err := hs.solve(ctx)
		if err != nil {
			return err
		}
		s.Homes[hi] = hs.schedule(assign)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("uncoordinated baseline: %w", err)
	}
	ev, err := n.Evaluate(s)
	if err != nil {
		return nil, fmt.Errorf("uncoordinated baseline: %w", err)
	}
	out := &Outcome{Name: "uncoordinated", Schedule: s, Eval: ev, Converged: true, Solves: len(n.Homes), Wall: time.Since(start)}
	for hi, a := range approx {
		if a {
			out.Approximate++
		}
		if coarse[hi] {
			out.Coarse = append(out.Coarse, n.Homes[hi].Name)
		}
	}
	return out, nil
}

// parallel runs job(0..n−1) on up to workers goroutines and returns the
// error of the lowest failing index, so that the error does not depend on
// scheduling. It stops handing out jobs after a failure or when ctx ends.
func parallel(ctx context.Context, workers, n int, job func(i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || failed.Load() {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[i] = err
					failed.Store(true)
					return
				}
				if err := job(i); err != nil {
					errs[i] = err
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
