package mqtt

import (
	"fmt"
	"slices"
)

// This file is termination detection for runs whose agents read the
// statuses of their neighbours only (Config.Neighbours). The quiescent
// rule needs one status of every agent, so every agent would read every
// status: n² deliveries and n statuses kept per agent, which is what kept
// a 1,000-home street of 20-home feeders from scaling. Instead the agents
// count, along a spanning tree of the neighbour graph, the messages the
// whole run sent and delivered, in waves started by the tree's root
// (agent 0), and stop when two waves in a row find every agent done and
// the same totals of sent and delivered messages: Mattern's four-counter
// method (F. Mattern, "Algorithms for distributed termination detection",
// Distributed Computing 2(3), 1987).
//
// A wave w: the root joins it; an agent joins it once its parent's status
// says the parent joined it and the agent is done (a running agent holds
// the wave back, so waves do not spin while the protocol works), taking
// then its own counters — messages sent, messages delivered to the
// protocol, over all its links — and whether it is done; it reports, in
// its status, the sums of its own and its children's reports once every
// child reported wave w. When the root has its sums of wave w it starts
// wave w+1 (once it is done itself).
//
// Why two equal waves suffice. Say agent i joined wave w at t_i and wave
// w+1 at t'_i. Every agent joined w before the root completed it, and
// joined w+1 after the root started it, so some instant T lies after every
// t_i and before every t'_i. Counters only grow, so equal totals in the
// two waves mean that no agent's counters changed between t_i and t'_i:
// at T each agent's counters are those of its wave-w report. Each agent
// was done at t_i and delivered nothing since, so it was still done at T
// (a done agent sends and changes only when a message is delivered). On
// every link the receiver has delivered at most what the sender sent, so
// equal totals at T mean equal counts on every link: nothing in flight.
// Every agent done and nothing in flight at T: the run is over, for good.
// The root then marks its status terminated; an agent that sees its
// parent's terminated status marks its own, and stops once that status
// has reached the broker, so the mark travels down the tree.
//
// Statuses may arrive late, twice or out of order: an agent keeps its
// neighbours' latest version only (status.Ver), and a late report can
// only hold a wave back, never complete one with numbers from another
// wave, since a report names its wave.

// waveReport is what a status tells of the waves: the latest wave its
// agent joined, the latest wave whose sums it reports, the sums, and
// whether the run is over.
type waveReport struct {
	Join, Rep       uint64
	Sent, Delivered uint64
	Done            bool // every agent of the subtree was done when wave Rep reached it
	Term            bool // the run is over
}

// waveFields is the number of numbers a waveReport takes in a status.
const waveFields = 6

// encode is the report as the status's "wave" array.
func (r waveReport) encode() []uint64 {
	b := func(v bool) uint64 {
		if v {
			return 1
		}
		return 0
	}
	return []uint64{r.Join, r.Rep, r.Sent, r.Delivered, b(r.Done), b(r.Term)}
}

// decodeWave reads a status's "wave" array.
func decodeWave(v []uint64) (waveReport, error) {
	if len(v) != waveFields {
		return waveReport{}, fmt.Errorf("status wave of %d numbers, want %d", len(v), waveFields)
	}
	if v[4] > 1 || v[5] > 1 {
		return waveReport{}, fmt.Errorf("status wave flags %d, %d: want 0 or 1", v[4], v[5])
	}
	if v[1] > v[0] {
		return waveReport{}, fmt.Errorf("status reports wave %d but joined only wave %d", v[1], v[0])
	}
	return waveReport{Join: v[0], Rep: v[1], Sent: v[2], Delivered: v[3], Done: v[4] == 1, Term: v[5] == 1}, nil
}

// spanTree is a spanning tree of the neighbour graph, the same for every
// agent of the run: breadth first from agent 0, neighbours in increasing
// order; the first agent of each component the search did not reach
// becomes a child of agent 0, so a graph of separate feeders still has
// one tree (its depth, not the number of agents, is what a wave waits).
type spanTree struct {
	parent   []int // -1 for the root
	children [][]int
}

func newSpanTree(nb [][]int) *spanTree {
	n := len(nb)
	t := &spanTree{parent: make([]int, n), children: make([][]int, n)}
	seen := make([]bool, n)
	queue := make([]int, 0, n)
	for s := range n {
		if seen[s] {
			continue
		}
		seen[s] = true
		t.parent[s] = -1
		if s != 0 {
			t.parent[s] = 0
			t.children[0] = append(t.children[0], s)
		}
		queue = append(queue[:0], s)
		for len(queue) > 0 {
			i := queue[0]
			queue = queue[1:]
			for _, j := range nb[i] {
				if !seen[j] {
					seen[j] = true
					t.parent[j] = i
					t.children[i] = append(t.children[i], j)
					queue = append(queue, j)
				}
			}
		}
	}
	for i := range t.children {
		slices.Sort(t.children[i])
	}
	return t
}

// checkNeighbours validates Config.Neighbours for n agents: one sorted
// list per agent, of other agents, symmetric.
func checkNeighbours(nb [][]int, n int) error {
	if len(nb) != n {
		return fmt.Errorf("mqtt: neighbour lists for %d agents, the run has %d", len(nb), n)
	}
	for i, l := range nb {
		for k, j := range l {
			switch {
			case j < 0 || j >= n:
				return fmt.Errorf("mqtt: agent %d's neighbour %d outside 0..%d", i, j, n-1)
			case j == i:
				return fmt.Errorf("mqtt: agent %d lists itself as a neighbour", i)
			case k > 0 && j <= l[k-1]:
				return fmt.Errorf("mqtt: agent %d's neighbours are not in increasing order", i)
			}
			if _, ok := slices.BinarySearch(nb[j], i); !ok {
				return fmt.Errorf("mqtt: agent %d lists %d as a neighbour, but %d does not list %d", i, j, j, i)
			}
		}
	}
	return nil
}

// waveState is one agent's part in the waves.
type waveState struct {
	parent   int // -1 at the root
	children []int
	me       waveReport // what the agent's status tells
	// own is the agent's own share of wave me.Join, taken when it
	// joined.
	ownSent, ownDelivered uint64
	ownDone               bool
	// The root's previous complete wave: its sums, when it found every
	// agent done and the sums equal (prevOK).
	prevSent, prevDelivered uint64
	prevOK                  bool
}

// advance moves the agent's waves on: done and the counters are the
// agent's now (between batches, everything delivered processed), and
// report returns the latest report of a tree neighbour (false: no status
// seen yet). It returns whether the agent's report changed, which its
// status must then tell.
func (w *waveState) advance(done bool, sent, delivered uint64, report func(j int) (waveReport, bool)) bool {
	before := w.me
	for !w.me.Term {
		if w.parent >= 0 {
			if p, ok := report(w.parent); ok && p.Term {
				w.me.Term = true
				break
			}
		}
		if w.me.Rep < w.me.Join {
			if !w.collect(report) {
				break
			}
			if w.parent < 0 && w.complete() {
				break
			}
			continue
		}
		// Every wave joined is reported: join the next one, if there
		// is one and the agent is done.
		next := w.me.Join + 1
		if w.parent >= 0 {
			p, ok := report(w.parent)
			if !ok || p.Join < next {
				break
			}
			next = p.Join
		}
		if !done {
			break
		}
		w.me.Join = next
		w.ownSent, w.ownDelivered, w.ownDone = sent, delivered, done
	}
	return w.me != before
}

// collect completes the agent's report of the wave it joined when every
// child has reported it, and reports whether it did.
func (w *waveState) collect(report func(j int) (waveReport, bool)) bool {
	s, d, ok := w.ownSent, w.ownDelivered, w.ownDone
	for _, c := range w.children {
		r, seen := report(c)
		if !seen || r.Rep != w.me.Join {
			return false
		}
		s, d, ok = s+r.Sent, d+r.Delivered, ok && r.Done
	}
	w.me.Rep, w.me.Sent, w.me.Delivered, w.me.Done = w.me.Join, s, d, ok
	return true
}

// complete is the root's decision on the wave it just completed: the run
// is over when this wave and the previous one both found every agent done
// and the same totals, sent equal to delivered. It reports whether the
// run is over.
func (w *waveState) complete() bool {
	r := w.me
	quiet := r.Done && r.Sent == r.Delivered
	if quiet && w.prevOK && w.prevSent == r.Sent && w.prevDelivered == r.Delivered {
		w.me.Term = true
		return true
	}
	w.prevOK, w.prevSent, w.prevDelivered = quiet, r.Sent, r.Delivered
	return false
}
