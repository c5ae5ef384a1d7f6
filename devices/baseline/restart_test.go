package baseline

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
)

// TestImproveFrom: on dm_7_1_2, the improvement phase restarted from the
// SH-MGM-style baseline's plan and from the homes' own schedules keeps
// the better run — here the one from the homes' own schedules, strictly
// below the baseline — every rule kept, its objective the evaluation's,
// no run above its start; a start that is not a schedule of the street is
// skipped with a reason; one worker gives the same choice and schedule as
// several; a cancelled context stops before the later starts.
func TestImproveFrom(t *testing.T) {
	n := shdsFile(t, "dm_7_1_2")
	ctx := context.Background()
	sh, err := SHMGM(ctx, n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := Uncoordinated(ctx, n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	shf := FlowObjective(n, sh.Eval)
	bad := &devices.Schedule{Homes: u.Schedule.Homes[:1]}
	starts := []Start{{"shmgm", sh.Schedule}, {"own", u.Schedule}, {"short", bad}}
	o := ImproveOptions{Seed: 1, Kicks: 3, Options: Options{ExactEntries: 1 << 20}}
	rs, err := ImproveFrom(ctx, n, starts, o)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Runs[2] != nil || rs.Skipped[2] == "" || rs.Skipped[0] != "" || rs.Skipped[1] != "" {
		t.Errorf("skipped %q, runs %v", rs.Skipped, rs.Runs)
	}
	best := rs.Improvement()
	for k, run := range rs.Runs[:2] {
		if run.Flow > run.Start || best.Flow > run.Flow {
			t.Errorf("start %d: %v from %v; kept %v", k, run.Flow, run.Start, best.Flow)
		}
	}
	ev, err := n.Evaluate(best.Schedule)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Feasible || FlowObjective(n, ev) != best.Flow {
		t.Errorf("kept plan: feasible %v %v, objective %v reported %v", ev.Feasible, ev.Violations, FlowObjective(n, ev), best.Flow)
	}
	if rs.Best != 1 || best.Flow >= shf || rs.Stopped {
		t.Errorf("kept start %d (%v) against the baseline's %v; stopped %v", rs.Best, best.Flow, shf, rs.Stopped)
	}

	o.Workers = 1
	one, err := ImproveFrom(ctx, n, starts, o)
	if err != nil {
		t.Fatal(err)
	}
	if one.Best != rs.Best || one.Improvement().Flow != best.Flow || !slices.EqualFunc(one.Improvement().Schedule.Homes, best.Schedule.Homes, sameActions) {
		t.Errorf("one worker kept start %d (%v), several %d (%v)", one.Best, one.Improvement().Flow, rs.Best, best.Flow)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	st, err := ImproveFrom(cctx, n, starts[:2], o)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Stopped || st.Best != 0 || st.Runs[1] != nil || st.Skipped[1] == "" || math.IsNaN(st.Improvement().Flow) {
		t.Errorf("cancelled: stopped %v, best %d, runs %v, skipped %q", st.Stopped, st.Best, st.Runs, st.Skipped)
	}

	if _, err := ImproveFrom(ctx, n, nil, o); err == nil {
		t.Error("no start: no error")
	}
	if _, err := ImproveFrom(ctx, n, []Start{{"short", bad}, {"own", u.Schedule}}, o); err == nil {
		t.Error("a first start of one home for seven: no error")
	}
}
