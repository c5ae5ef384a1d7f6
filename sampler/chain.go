package sampler

import (
	"context"
	"math"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler/philox"
)

// chain is one worker's state for running chains one after another: the
// current local assignment, the best interior found, and scratch space.
type chain struct {
	e      *engine
	z      []int // current values of all local variables
	best   []int // best interior values of the current chain
	old    []int // interior values before a normal proposal
	viol   []int32
	cost   []float64
	w      []float64
	rng    philox.Stream
	v      int     // Hard entries of z
	c      float64 // sum of z's other entries
	checks int64
}

func (e *engine) newChain() *chain {
	m := e.m
	return &chain{
		e:    e,
		z:    make([]int, m.nb+m.n),
		best: make([]int, m.n),
		old:  make([]int, m.n),
		viol: make([]int32, m.maxD),
		cost: make([]float64, m.maxD),
		w:    make([]float64, m.maxD),
	}
}

// run runs chain number run of a row whose boundary values the caller
// has put in ch.z[:nb]: start, repair, Trials transitions. It returns the
// best feasible cost seen (Hard if none), its interior assignment left in
// ch.best. The Philox counter of every draw is (row, run, step, index):
// step 0 draws the starting point, step t the t-th transition (see the
// package documentation).
func (ch *chain) run(ctx context.Context, row, run uint32) (float64, error) {
	e, m := ch.e, ch.e.m
	z := ch.z
	clear(ch.best)
	ch.checks += int64(len(m.consts))
	if m.constHard(z) {
		return mva.Hard, nil
	}

	ch.rng.Reset(e.key, row, run, 0)
	for i := range m.n {
		z[m.nb+i] = int(philox.IntN(ch.rng.Uint32(uint32(i)), uint32(m.dom[m.nb+i])))
	}
	ch.v, ch.c = m.eval(z)
	ch.checks += int64(len(m.funcs))
	if ch.v > 0 && e.o.RepairSweeps > 0 {
		ch.repair()
	}
	best := mva.Hard
	if ch.v == 0 {
		best = ch.c
		copy(ch.best, z[m.nb:])
	}

	for t := 1; t <= e.o.Trials; t++ {
		if t&63 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		ch.rng.Reset(e.key, row, run, uint32(t))
		switch e.kind {
		case gibbsSweep:
			ch.gibbs()
		case mhNormal:
			ch.normal()
		case mhDiscrete:
			ch.discrete()
		}
		if ch.v == 0 && ch.c < best {
			if e.kind == mhDiscrete {
				// ch.c was kept by differences; re-add it exactly.
				ch.v, ch.c = m.eval(z)
				ch.checks += int64(len(m.funcs))
			}
			if ch.c < best {
				best = ch.c
				copy(ch.best, z[m.nb:])
			}
		}
		if e.trace != nil {
			e.trace(int(row), int(run), t, z[m.nb:])
		}
	}
	return best, nil
}

// repair is greedy min-conflict descent from an infeasible start: sweep
// the interior variables in order, moving each to the value of least
// lexicographic energy (Hard entries first, then the other costs) over
// the functions that hold it, keeping its value on ties. It stops as soon
// as the state is feasible, after a sweep that changed nothing (a local
// minimum), or after RepairSweeps sweeps. Energy never rises, so it
// cannot cycle. It uses no random numbers.
func (ch *chain) repair() {
	m := ch.e.m
	z := ch.z
	v := ch.v
	for s := 0; s < ch.e.o.RepairSweeps && v > 0; s++ {
		changed := false
		for i := 0; i < m.n && v > 0; i++ {
			k := m.nb + i
			d := m.dom[k]
			if d < 2 {
				continue
			}
			ch.checks += m.local(k, z, ch.viol, ch.cost)
			x := z[k]
			b := x
			for y := range d {
				if ch.viol[y] < ch.viol[b] || ch.viol[y] == ch.viol[b] && ch.cost[y] < ch.cost[b] {
					b = y
				}
			}
			if b != x {
				v += int(ch.viol[b] - ch.viol[x])
				z[k] = b
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	ch.v, ch.c = m.eval(z)
	ch.checks += int64(len(m.funcs))
}

// expUnderflow is below the point (≈ −745.13) where math.Exp rounds to
// 0, so skipping exp beyond it changes no weight: at low temperatures
// most values are that unlikely, and exp is the sweep's largest cost.
const expUnderflow = -746.0

// gibbs is one Gibbs sweep of the chain (model.sweep) followed by the
// evaluation of the new state.
func (ch *chain) gibbs() {
	m := ch.e.m
	ch.checks += m.sweep(ch.z, ch.e.beta, &ch.rng, ch.viol, ch.cost, ch.w)
	ch.v, ch.c = m.eval(ch.z)
	ch.checks += int64(len(m.funcs))
}

// accept decides a Metropolis-Hastings move by the lexicographic energy:
// fewer Hard entries always wins, more always loses (so a feasible chain
// never leaves feasibility: π is 0 there), and at equal counts the move
// is taken with probability min(1, exp(−Δc·β + h)), where h is the log
// Hastings ratio log q(z* → z) − log q(z → z*), drawing uniform j only
// when needed.
func (ch *chain) accept(dv int, dc, h float64, j uint32) bool {
	switch {
	case dv < 0:
		return true
	case dv > 0:
		return false
	}
	// The explicit conversion keeps the product rounded on its own (Go
	// may otherwise fuse it with the sum), as the GPU kernel does.
	a := float64(-dc*ch.e.beta) + h
	return a >= 0 || ch.rng.Float64(j) < math.Exp(a)
}

// normal is one trial with the paper's normal proposal: every interior
// variable i takes a rounded, clamped normal step from draw i, and
// draw n decides acceptance. The move is evaluated in full (the paper's
// n-dimensional proposal changes most variables at once).
func (ch *chain) normal() {
	e, m := ch.e, ch.e.m
	z := ch.z
	in := z[m.nb:]
	copy(ch.old, in)
	h, moved := 0.0, false
	for i, s := range e.steps {
		if s == nil {
			continue
		}
		x := in[i]
		y := s.sample(x, ch.rng.Float64(uint32(i)))
		if y != x {
			h += s.logQ(y, x) - s.logQ(x, y)
			in[i] = y
			moved = true
		}
	}
	if !moved {
		return
	}
	if e.noHastings {
		h = 0
	}
	v, c := m.eval(z)
	ch.checks += int64(len(m.funcs))
	if ch.accept(v-ch.v, c-ch.c, h, uint32(m.n)) {
		ch.v, ch.c = v, c
		return
	}
	copy(in, ch.old)
}

// discrete is one trial with the one-variable proposal: draw 0 picks the
// variable among those with two values or more, draw 1 one of its other
// values, draw 2 decides acceptance. The proposal is symmetric, so h = 0;
// only the functions holding the variable are read.
func (ch *chain) discrete() {
	e, m := ch.e, ch.e.m
	if len(e.movable) == 0 {
		return
	}
	i := e.movable[philox.IntN(ch.rng.Uint32(0), uint32(len(e.movable)))]
	k := m.nb + i
	x := ch.z[k]
	y := int(philox.IntN(ch.rng.Uint32(1), uint32(m.dom[k]-1)))
	if y >= x {
		y++
	}
	dv, dc := m.delta(i, ch.z, y)
	ch.checks += int64(2 * len(m.touch[k]))
	if ch.accept(dv, dc, 0, 2) {
		ch.z[k] = y
		ch.v += dv
		ch.c += dc
	}
}
