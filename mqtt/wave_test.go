package mqtt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// waveNet simulates a run for the waves alone: agents that work for a
// while after each delivery, sending messages to random neighbours from
// a shared budget (so the run ends), over a network that delays
// messages and statuses at random, delivers statuses twice, out of order
// and late. It knows the global state, which the agents do not: the
// truth the waves' decision is checked against.
type waveNet struct {
	rng    *rand.Rand
	nb     [][]int
	agents []*waveAgent
	now    int
	events []waveEvent
	budget int
	// inFlight counts protocol messages sent and not yet delivered.
	inFlight int
	// faults
	dupProb, lateProb float64
	// msgSpread, when above 0, draws message delays from 1..msgSpread
	// (statuses keep theirs): messages that overtake waves, and agents
	// that send on every delivery, which is what a wrong decision needs.
	msgSpread int
	// err is the first early decision seen.
	err error
}

type waveAgent struct {
	w               waveState
	busyUntil       int // running until then (done after)
	sent, delivered uint64
	// reports are the latest tree neighbours' reports seen, by version.
	reports map[int]waveReport
	vers    map[int]int
	ver     int
	termAt  int
}

type waveEvent struct {
	at   int
	kind int // 0: message to, 1: status from→to, 2: wake
	to   int
	from int
	rep  waveReport
	ver  int
}

func newWaveNet(seed uint64, nb [][]int, budget int, dup, late float64) *waveNet {
	n := &waveNet{rng: rand.New(rand.NewPCG(seed, 7)), nb: nb, budget: budget, dupProb: dup, lateProb: late}
	t := newSpanTree(nb)
	for i := range nb {
		a := &waveAgent{w: waveState{parent: t.parent[i], children: t.children[i]},
			reports: map[int]waveReport{}, vers: map[int]int{}, termAt: -1}
		a.busyUntil = n.rng.IntN(5)
		n.agents = append(n.agents, a)
		n.push(waveEvent{at: 0, kind: 2, to: i})
	}
	return n
}

func (n *waveNet) push(e waveEvent) {
	n.events = append(n.events, e)
}

// pop takes a random event among the earliest few, so that delivery
// order varies beyond the delays.
func (n *waveNet) pop() (waveEvent, bool) {
	if len(n.events) == 0 {
		return waveEvent{}, false
	}
	slices.SortStableFunc(n.events, func(x, y waveEvent) int { return x.at - y.at })
	k := n.rng.IntN(min(3, len(n.events)))
	e := n.events[k]
	n.events = slices.Delete(n.events, k, k+1)
	return e, true
}

func (n *waveNet) delay() int {
	d := 1 + n.rng.IntN(10)
	if n.rng.Float64() < n.lateProb {
		d += 50 + n.rng.IntN(200)
	}
	return d
}

// step runs agent i after an event: it works (sending messages while
// running), then advances its waves and publishes its report when it
// changed.
func (n *waveNet) step(i int) {
	a := n.agents[i]
	done := n.now >= a.busyUntil
	if !done && n.budget > 0 && len(n.nb[i]) > 0 && (n.msgSpread > 0 || n.rng.IntN(2) == 0) {
		n.budget--
		j := n.nb[i][n.rng.IntN(len(n.nb[i]))]
		a.sent++
		n.inFlight++
		d := n.delay()
		if n.msgSpread > 0 {
			d = 1 + n.rng.IntN(n.msgSpread)
		}
		n.push(waveEvent{at: n.now + d, kind: 0, to: j, from: i})
	}
	if !done {
		n.push(waveEvent{at: a.busyUntil, kind: 2, to: i})
	}
	report := func(j int) (waveReport, bool) {
		r, ok := a.reports[j]
		return r, ok
	}
	if a.w.advance(done, a.sent, a.delivered, report) {
		a.ver++
		if a.w.me.Term && a.termAt < 0 {
			a.termAt = n.now
			n.checkQuiescent(i)
		}
		var tree []int
		if a.w.parent >= 0 {
			tree = append(tree, a.w.parent)
		}
		tree = append(tree, a.w.children...)
		for _, j := range tree {
			e := waveEvent{at: n.now + n.delay(), kind: 1, to: j, from: i, rep: a.w.me, ver: a.ver}
			n.push(e)
			if n.rng.Float64() < n.dupProb {
				e.at = n.now + n.delay()
				n.push(e)
			}
		}
	}
}

// checkQuiescent records an error when agent i decided the run is over
// while it is not.
func (n *waveNet) checkQuiescent(i int) {
	if n.inFlight > 0 {
		n.err = fmt.Errorf("agent %d declared termination at %d with %d messages in flight", i, n.now, n.inFlight)
	}
	for j, a := range n.agents {
		if n.now < a.busyUntil {
			n.err = fmt.Errorf("agent %d declared termination at %d while agent %d runs until %d", i, n.now, j, a.busyUntil)
		}
	}
}

func (n *waveNet) run(limit int) error {
	n.err = nil
	for n.now < limit {
		e, ok := n.pop()
		if !ok {
			break
		}
		n.now = max(n.now, e.at)
		a := n.agents[e.to]
		switch e.kind {
		case 0:
			n.inFlight--
			a.delivered++
			if n.now >= a.busyUntil {
				a.busyUntil = n.now + 1 + n.rng.IntN(8)
				if n.msgSpread > 0 {
					a.busyUntil = n.now + 1
				}
			}
		case 1:
			if e.ver > a.vers[e.from] {
				a.vers[e.from], a.reports[e.from] = e.ver, e.rep
			}
		}
		n.step(e.to)
		if n.err != nil {
			return n.err
		}
	}
	for i, a := range n.agents {
		if a.termAt < 0 {
			return fmt.Errorf("agent %d never learnt that the run ended (time %d, budget left %d, in flight %d)", i, n.now, n.budget, n.inFlight)
		}
	}
	return nil
}

// feeders is the neighbour graph of k complete feeders of size m.
func feeders(k, m int) [][]int {
	nb := make([][]int, k*m)
	for i := range nb {
		lo := i / m * m
		for j := lo; j < lo+m; j++ {
			if j != i {
				nb[i] = append(nb[i], j)
			}
		}
	}
	return nb
}

// randomGraph is a random graph of n agents with about deg neighbours
// each (possibly disconnected).
func randomGraph(seed uint64, n, deg int) [][]int {
	rng := rand.New(rand.NewPCG(seed, 9))
	set := make([]map[int]bool, n)
	for i := range set {
		set[i] = map[int]bool{}
	}
	for range n * deg / 2 {
		i, j := rng.IntN(n), rng.IntN(n)
		if i != j {
			set[i][j], set[j][i] = true, true
		}
	}
	nb := make([][]int, n)
	for i, s := range set {
		for j := range s {
			nb[i] = append(nb[i], j)
		}
		slices.Sort(nb[i])
	}
	return nb
}

// TestWavesDetectTermination: on chains, stars, feeders and random
// graphs, with statuses delayed, duplicated, reordered and very late, no
// agent ever decides the run is over while a message is in flight or an
// agent works (the simulator's global view), and every agent learns it
// once it is.
func TestWavesDetectTermination(t *testing.T) {
	chain := func(n int) [][]int {
		nb := make([][]int, n)
		for i := range n - 1 {
			nb[i] = append(nb[i], i+1)
			nb[i+1] = append(nb[i+1], i)
		}
		return nb
	}
	graphs := map[string][][]int{
		"one":     {nil},
		"chain12": chain(12),
		"feeders": feeders(4, 5),
		"random":  randomGraph(1, 30, 3),
		"sparse":  randomGraph(2, 25, 1),
		"clique":  feeders(1, 8),
	}
	for name, nb := range graphs {
		if err := checkNeighbours(nb, len(nb)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for seed := range uint64(15) {
			for _, f := range []struct {
				dup, late float64
				spread    int
			}{{0, 0, 0}, {0.3, 0.1, 0}, {0.5, 0.4, 0}, {0, 0, 60}, {0.3, 0.2, 200}} {
				n := newWaveNet(seed, nb, 20*len(nb), f.dup, f.late)
				n.msgSpread = f.spread
				if err := n.run(1 << 30); err != nil {
					t.Fatalf("%s seed %d %+v: %v", name, seed, f, err)
				}
			}
		}
	}
}

// TestWaveTwoWavesNeeded: a single wave that finds every agent done with
// equal totals is not enough (a message may have been sent after its
// sender was counted and delivered before its receiver was); the root
// decides only on the second equal wave.
func TestWaveTwoWavesNeeded(t *testing.T) {
	w := waveState{parent: -1, children: []int{1}}
	child := waveReport{}
	report := func(int) (waveReport, bool) { return child, true }
	w.advance(true, 0, 1, report) // the root delivered 1 before the wave
	child = waveReport{Join: 1, Rep: 1, Sent: 1, Delivered: 0, Done: true}
	w.advance(true, 0, 1, report)
	if w.me.Term || w.me.Join != 2 {
		t.Fatalf("after one equal wave: %+v", w.me)
	}
	child = waveReport{Join: 2, Rep: 2, Sent: 1, Delivered: 0, Done: true}
	w.advance(true, 0, 1, report)
	if !w.me.Term {
		t.Fatalf("after two equal waves: %+v", w.me)
	}
}

func TestCheckNeighbours(t *testing.T) {
	for _, tc := range []struct {
		nb   [][]int
		n    int
		fail bool
	}{
		{[][]int{{1}, {0}}, 2, false},
		{[][]int{{1}, {}}, 2, true},          // one-sided
		{[][]int{{0}, {}}, 2, true},          // itself
		{[][]int{{2}, {}}, 2, true},          // out of range
		{[][]int{{1}}, 2, true},              // too few lists
		{[][]int{{2, 1}, {0}, {0}}, 3, true}, // unsorted
	} {
		if err := checkNeighbours(tc.nb, tc.n); (err != nil) != tc.fail {
			t.Errorf("%v: err %v", tc.nb, err)
		}
	}
}
