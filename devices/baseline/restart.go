package baseline

import (
	"context"
	"fmt"

	"github.com/hearth-dcop/hearth/devices"
)

// Start is a schedule the improvement phase may start from, named for
// the notes (the protocol's plan, the homes' own schedules, the
// SH-MGM-style baseline's plan).
type Start struct {
	Name     string
	Schedule *devices.Schedule
}

// Restarts is what ImproveFrom found.
type Restarts struct {
	// Runs holds the improvement of each start, in the order given; nil
	// where the start was skipped (Skipped says why) or ctx ended before
	// it began.
	Runs []*Improvement
	// Skipped gives, for each start, why it was not improved ("" where
	// it was).
	Skipped []string
	// Best indexes the run with the lowest FlowObjective (ties to the
	// earlier start).
	Best int
	// Stopped is true when ctx ended the search: Best is then the best
	// of the runs so far.
	Stopped bool
}

// Improvement returns the best run.
func (r *Restarts) Improvement() *Improvement { return r.Runs[r.Best] }

// ImproveFrom runs Improve from each start in turn with the same options
// (and seed) and keeps the best: iterated local search from several
// starts, because the escapes of one run stay near its start's basin. On
// the Des Moines instances the protocol's plan, the homes' own
// (uncoordinated) schedules and the SH-MGM-style baseline's plan each
// lead to the best local optimum on some instance; taking the best of
// them puts the result at or below the baseline's plan whenever that is
// one of the starts, since Improve never ends above its start.
//
// The first start must be feasible (an error otherwise, as Improve's);
// a later one that breaks a rule or the feeder limit is skipped, and
// named in Skipped. It is deterministic: the same starts and options give
// the same runs and the same choice. When ctx ends, the runs so far are
// compared (the one ctx stopped returns its best so far) and the rest
// are not started.
func ImproveFrom(ctx context.Context, n *devices.Neighbourhood, starts []Start, o ImproveOptions) (*Restarts, error) {
	if len(starts) == 0 {
		return nil, fmt.Errorf("improve: no start")
	}
	out := &Restarts{}
	if err := out.Continue(ctx, n, starts, o); err != nil {
		return nil, err
	}
	return out, nil
}

// Continue runs Improve from further starts, as ImproveFrom does, and
// keeps the best of all the runs: a caller can compute the later starts
// only once the first run has ended (and skip them when it was stopped).
// A start is an error only when r has no run yet.
func (r *Restarts) Continue(ctx context.Context, n *devices.Neighbourhood, starts []Start, o ImproveOptions) error {
	for _, st := range starts {
		first := len(r.Runs) == 0
		k := len(r.Runs)
		r.Runs = append(r.Runs, nil)
		r.Skipped = append(r.Skipped, "")
		if !first && ctx.Err() != nil {
			r.Skipped[k] = "stopped before it began"
			r.Stopped = true
			continue
		}
		if st.Schedule == nil || len(st.Schedule.Homes) != len(n.Homes) {
			if first {
				r.Runs, r.Skipped = nil, nil
				return fmt.Errorf("improve from %s: not a schedule of the %d homes", st.Name, len(n.Homes))
			}
			r.Skipped[k] = fmt.Sprintf("not a schedule of the %d homes", len(n.Homes))
			continue
		}
		if !first {
			ev, err := n.Evaluate(st.Schedule)
			if err != nil {
				r.Skipped[k] = err.Error()
				continue
			}
			if !ev.Feasible {
				r.Skipped[k] = fmt.Sprintf("not feasible: %v", ev.Violations)
				continue
			}
		}
		imp, err := Improve(ctx, n, st.Schedule, o)
		if err != nil {
			if first {
				r.Runs, r.Skipped = nil, nil
				return fmt.Errorf("improve from %s: %w", st.Name, err)
			}
			// A later start whose feeder limits Improve refuses (its
			// committed caps over a window's) is skipped, not fatal.
			r.Skipped[k] = err.Error()
			continue
		}
		r.Runs[k] = imp
		if imp.Flow < r.Runs[r.Best].Flow {
			r.Best = k
		}
		if imp.Stopped {
			r.Stopped = true
		}
	}
	return nil
}
