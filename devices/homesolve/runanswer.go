package homesolve

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/baseline"
	"github.com/hearth-dcop/hearth/devices/street"
	"github.com/hearth-dcop/hearth/mva/pipeline"
)

// This file is Answer's compiled step for `hearth run`, where each
// compiled home is a process that knows only its own values: the home
// takes part in the distributed descent (baseline.Descend) with the
// energy homes' published imports as outside load and one feeder limit
// per window, as Answer's baseline.Improve does in process
// (baseline.TestDescendFeederPerWindow: the same moves).

// HomeLoad is compiled home home's planned load per slot (kW, signed:
// below zero where it feeds back) for the values of a round (its own;
// the others' anything).
func (r *Run) HomeLoad(values []int, home int) ([]float64, error) {
	n := r.Model()
	hs, err := r.homeSchedule(values, home)
	if err != nil {
		return nil, err
	}
	scale := powerScale(n)
	out := make([]float64, n.Horizon.Slots)
	for t := range out {
		out[t] = n.Homes[home].Draw(t, func(d int) int { return hs.Actions[d][t] }) * scale
	}
	return out, nil
}

// EnergyNames are the energy homes' names in the street's order, the
// order AnswerHome takes their imports in.
func (r *Run) EnergyNames() []string {
	out := make([]string, len(r.energy))
	for i, m := range r.energy {
		out[i] = m.Home.Name
	}
	return out
}

// AnswerHome is compiled home home's part in the compiled homes' answer
// to the energy homes of `hearth run` (one step of Answer's
// alternation): from values (its own after the round so far), with
// imports the energy homes' import per slot (kW, EnergyNames' order) and
// flows every compiled home's load that flows (kW, the compiled homes'
// order), it runs baseline.Descend with every other compiled home over rt
// and returns the values with its own replaced. Each compiled home's
// outside load is the energy homes' import (its energy neighbours' on a
// street with a neighbours key) and each window's feeder limit the
// street's less the energy homes' highest import there, at most the
// protocol's own (feederRoom). Where a window has no room, or the
// compiled homes' caps already exceed it, no compiled home can move and
// nobody runs the descent: blocked names that window (−1 otherwise), the
// same on every compiled home, which all read the same loads.
func (r *Run) AnswerHome(ctx context.Context, values []int, home int, imports, flows [][]float64, rt pipeline.Runtime) (out []int, blocked int, err error) {
	n := r.Model()
	T := n.Horizon.Slots
	if len(imports) != len(r.energy) {
		return nil, -1, fmt.Errorf("%d energy homes' imports for %d energy homes", len(imports), len(r.energy))
	}
	if len(flows) != len(n.Homes) {
		return nil, -1, fmt.Errorf("%d compiled homes' loads for %d compiled homes", len(flows), len(n.Homes))
	}
	for k, v := range slices.Concat(imports, flows) {
		if len(v) != T {
			return nil, -1, fmt.Errorf("load %d has %d slots, the horizon %d", k, len(v), T)
		}
	}
	if n.Weights.Peak <= 0 || len(r.energy) == 0 {
		return values, -1, nil
	}
	scale := powerScale(n)
	m2 := *n
	m2.Homes = slices.Clone(n.Homes)
	st := street.StreetOf(r.cfg.Neighbourhood, r.energy, nil, nil)
	for i := range m2.Homes {
		o := make([]float64, T)
		for k, imp := range imports {
			if st.Links != nil && !slices.Contains(st.Links, [2]int{i, len(n.Homes) + k}) && !slices.Contains(st.Links, [2]int{len(n.Homes) + k, i}) {
				continue
			}
			for t, v := range imp {
				o[t] += v / scale
			}
		}
		m2.Homes[i].OutsideLoad = o
	}
	var limits []float64
	if full := r.cfg.Neighbourhood.FeederLimit; full > 0 {
		if limits, blocked = roomOf(n, full, imports); blocked >= 0 {
			return values, blocked, nil
		}
		if w := capsOver(n, flows, limits); w >= 0 {
			return values, w, nil
		}
	}
	s, err := r.compiled.Decode(values)
	if err != nil {
		return nil, -1, err
	}
	d, err := baseline.Descend(ctx, &m2, s, baseline.ImproveOptions{Seed: r.seed, FeederLimits: limits, Options: baseline.Options{ExactEntries: improveEntries}}, rt, []int{home})
	if err != nil {
		return nil, -1, err
	}
	out = slices.Clone(values)
	if err := r.compiled.EncodeHome(out, home, &d.Schedule.Homes[home]); err != nil {
		return nil, -1, fmt.Errorf("home %d after its answer: %w", home, err)
	}
	return out, -1, nil
}

// roomOf is feederRoom with the energy homes' imports (kW) for their
// plans: their commitment in a window is their highest import there
// (street.Commitments).
func roomOf(n *devices.Neighbourhood, full float64, imports [][]float64) ([]float64, int) {
	scale := powerScale(n)
	out := make([]float64, len(n.Windows))
	for w, win := range n.Windows {
		out[w] = full
		for _, imp := range imports {
			c := 0.0
			for t := win.From; t < win.To; t++ {
				c = math.Max(c, imp[t])
			}
			out[w] -= c / scale
		}
		if n.FeederLimit > 0 {
			out[w] = math.Min(out[w], n.FeederLimit)
		}
		if out[w] <= 0 {
			return nil, w
		}
	}
	return out, -1
}

// capsOver is overRoom on the compiled homes' committed caps as the
// tightest of their levels over their loads that flow (kW): the first
// window where they exceed its limit, −1 for none.
func capsOver(n *devices.Neighbourhood, flows [][]float64, limits []float64) int {
	scale := powerScale(n)
	loads := make([][]float64, len(flows))
	for i, f := range flows {
		loads[i] = make([]float64, len(f))
		for t, v := range f {
			// A home feeding back commits to its lowest level, as to 0 kW.
			loads[i][t] = max(v/scale, 0)
		}
	}
	return baseline.StreetOver(n, limits, func(i int) []float64 { return loads[i] })
}

// powerScale is n's kW per model unit of power.
func powerScale(n *devices.Neighbourhood) float64 {
	if s := n.Units.PowerScale; s > 0 {
		return s
	}
	return 1
}

// homeSchedule decodes the values of a round and returns compiled home
// home's schedule.
func (r *Run) homeSchedule(values []int, home int) (*devices.HomeSchedule, error) {
	if n := len(r.Model().Homes); home < 0 || home >= n {
		return nil, fmt.Errorf("home %d of %d", home, n)
	}
	s, err := r.compiled.Decode(values)
	if err != nil {
		return nil, err
	}
	return &s.Homes[home], nil
}

// HomeCaps is compiled home home's committed cap per window (kW) for
// the values of a round (its own; the others' anything): the level its
// values commit to, else the tightest its load fits, as n.Evaluate
// counts it in the street's committed caps. The energy homes of `hearth
// run` take these for their share of the feeder limit.
func (r *Run) HomeCaps(values []int, home int) ([]float64, error) {
	n := r.Model()
	hs, err := r.homeSchedule(values, home)
	if err != nil {
		return nil, err
	}
	scale := powerScale(n)
	out := make([]float64, len(n.Windows))
	for w, win := range n.Windows {
		caps := n.LevelCaps(home, w)
		top := math.Inf(-1)
		for t := win.From; t < win.To; t++ {
			top = math.Max(top, n.Homes[home].Draw(t, func(d int) int { return hs.Actions[d][t] }))
		}
		k := devices.Tightest(caps, top)
		if hs.Levels != nil {
			k = hs.Levels[w]
		}
		if k < 0 || k >= len(caps) {
			return nil, fmt.Errorf("home %d: level %d of window %d is outside 0..%d", home, k, w, len(caps)-1)
		}
		out[w] = caps[k] * scale
	}
	return out, nil
}
