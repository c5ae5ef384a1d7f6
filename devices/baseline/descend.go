package baseline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
	"github.com/hearth-dcop/hearth/mva/protocol/flowbr"
)

// Descent is what Descend found.
type Descent struct {
	// Schedule holds the owned homes' schedules after the descent and
	// the start's for the others.
	Schedule *devices.Schedule
	// Rounds is the most rounds a home ran, Moves the moves of the owned
	// homes.
	Rounds, Moves int
	// Metrics are the runtime's counters (messages, bytes).
	Metrics mva.Metrics
	// Approximate counts the owned homes whose best responses are block
	// descent.
	Approximate int
	Wall        time.Duration
}

// ErrDescentFeeder is returned by Descend for a street with a feeder
// limit whose homes are not all neighbours: Improve keeps the limit by
// refusing a round's moves that break it, a test on the whole street that
// a home can make only where it sees every home's load.
var ErrDescentFeeder = errors.New("the distributed descent keeps a feeder limit only where every home is every other's neighbour; the in-process improvement phase keeps it on any street")

// Complete reports whether every pair of n's homes is linked.
func Complete(n *devices.Neighbourhood) bool {
	H := len(n.Homes)
	seen := map[[2]int]bool{}
	for _, l := range n.Linked() {
		a, b := min(l[0], l[1]), max(l[0], l[1])
		if a != b {
			seen[[2]int{a, b}] = true
		}
	}
	return len(seen) == H*(H-1)/2
}

// Descend is Improve's descent — rounds of joint best responses on the
// load that flows, without escapes — as the flowbr protocol between the
// homes, carried by rt (the simulated runtime, mqtt.Group, or one home's
// agents in `hearth run`): each home knows only its own schedule and its
// neighbours' per-slot loads. owned lists the homes this process runs
// (nil: all of them); every home of the street must run somewhere.
//
// From the same start it moves the same homes to the same schedules, round
// by round, as Improve with Kicks < 0 (TestDescendMatchesImprove): the
// joint-move rule decides each home from its higher-ranked neighbours'
// decisions only, so the distributed decisions are the centralised ones.
// A feeder limit is kept as Improve keeps it (a round's moves that break
// it shrink to the highest-ranked mover's, and end the descent where that
// breaks it too) where every home is every other's neighbour, and
// refused elsewhere (ErrDescentFeeder); o.FeederLimits gives each window
// its own limit, as for Improve (`hearth run`'s compiled homes answering
// a mixed street's energy homes). The start must keep every rule
// and the limit. When ctx ends before the homes finish, the start is
// returned with an error.
func Descend(ctx context.Context, n *devices.Neighbourhood, start *devices.Schedule, o ImproveOptions, rt pipeline.Runtime, owned []int) (*Descent, error) {
	began := time.Now()
	fail := func(err error) (*Descent, error) { return nil, fmt.Errorf("distributed descent: %w", err) }
	if err := n.Validate(); err != nil {
		return fail(err)
	}
	fits, err := descentFits(n, &o)
	if err != nil {
		return fail(err)
	}
	H := len(n.Homes)
	if len(start.Homes) != H {
		return fail(fmt.Errorf("the start has %d homes, the street %d", len(start.Homes), H))
	}
	if owned == nil {
		owned = make([]int, H)
		for i := range owned {
			owned[i] = i
		}
	}
	for k, i := range owned {
		if i < 0 || i >= H || k > 0 && i <= owned[k-1] {
			return fail(fmt.Errorf("owned homes %v: want increasing indices below %d", owned, H))
		}
	}
	out := &Descent{Schedule: cloneSchedule(start)}
	rounds := o.Rounds
	if rounds == 0 {
		rounds = max(DefaultRounds, 2*H)
	}
	if H == 0 || n.Weights.Peak <= 0 || rounds < 0 {
		out.Wall = time.Since(began)
		return out, nil
	}
	links := n.Linked()
	diam, err := flowbr.Diameter(H, links)
	if err != nil {
		return fail(err)
	}
	nbrs := neighbourLists(n)
	slots := coordinated(n)
	dt := n.Horizon.Hours()
	T := n.Horizon.Slots
	p := &mva.Problem{Name: n.Name + "/descent", Agents: make([]mva.Agent, H)}
	owner := make([]int, H)
	for i := range H {
		p.Agents[i].Name = n.Homes[i].Name
		owner[i] = i
	}
	o.Options = o.Options.withPool()
	homes := make([]*flowHome, len(owned))
	exact := make([]bool, len(owned))
	if err := parallel(ctx, o.workers(), len(owned), func(k int) error {
		i := owned[k]
		r, ok, err := newResponder(n, i, &o.Options)
		if err != nil {
			return err
		}
		if err := r.set(start.Homes[i]); err != nil {
			return err
		}
		homes[k], exact[k] = &flowHome{r: r, h: &n.Homes[i], T: T}, ok
		return nil
	}); err != nil {
		return fail(err)
	}
	run := pipeline.Run{Problem: p, Owner: owner, Seed: o.Seed, Agents: make([]pipeline.Agent, len(owned))}
	agents := make([]*flowbr.Agent, len(owned))
	for k, i := range owned {
		if !exact[k] {
			out.Approximate++
		}
		a, err := flowbr.New(flowbr.Config{ID: i, Neighbours: nbrs[i], Load: loadOf(&n.Homes[i], &start.Homes[i], T),
			Slots: slots, PeakW: n.Weights.Peak * dt * dt, Ratio: ratios(n.Horizon), Rounds: rounds, Diameter: diam[i], Fits: fits, Homes: H}, homes[k])
		if err != nil {
			return fail(err)
		}
		agents[k] = a
		run.Agents[k] = pipeline.Agent{Node: &mva.Node{ID: i, NumAgents: H, Neighbours: slices.Sorted(slices.Values(nbrs[i]))}, Protocol: a}
	}
	res, err := rt.Run(ctx, run)
	if err != nil {
		return fail(err)
	}
	for k, i := range owned {
		out.Schedule.Homes[i] = homes[k].r.schedule()
		out.Rounds = max(out.Rounds, agents[k].Rounds())
		out.Moves += agents[k].Moves()
	}
	out.Metrics = res.Metrics
	out.Wall = time.Since(began)
	return out, nil
}

// flowHome is a responder as the protocol sees it: gains and per-slot
// loads.
type flowHome struct {
	r responder
	h *devices.Home
	T int
}

func (f *flowHome) Respond(ctx context.Context, N []float64) (float64, []float64, error) {
	g, err := f.r.respond(ctx, N)
	if err != nil || g <= 0 || math.IsNaN(g) {
		return 0, nil, err
	}
	hs := f.r.candidate()
	return g, loadOf(f.h, &hs, f.T), nil
}

func (f *flowHome) Adopt() { f.r.adopt() }

// descentFits is the test of the street's feeder limit that every home
// of the distributed descent applies: n's one limit in every window, or
// o.FeederLimits' own per window (nil where there is neither). Either
// needs every home to see every other's load (Complete).
func descentFits(n *devices.Neighbourhood, o *ImproveOptions) (func(load func(int) []float64) bool, error) {
	limits, err := o.limits(n)
	if err != nil || limits == nil {
		return nil, err
	}
	if !Complete(n) {
		return nil, ErrDescentFeeder
	}
	if o.FeederLimits == nil {
		return func(load func(int) []float64) bool { return streetFits(n, load) }, nil
	}
	return func(load func(int) []float64) bool { return StreetOver(n, limits, load) < 0 }, nil
}
