package sampler

import (
	"fmt"
	"math"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler/philox"
)

// sweep is one Gibbs sweep over the interior variables of the local
// assignment z: every interior variable, in order, is drawn from its
// conditional given all the others (model.weights), with draw i of rng
// for interior variable i. Boundary values in z are left alone. It
// returns the table entries read; viol, cost and w are scratch of at
// least the largest interior domain.
func (m *model) sweep(z []int, beta float64, rng *philox.Stream, viol []int32, cost, w []float64) int64 {
	var checks int64
	for i := range m.n {
		k := m.nb + i
		d := m.dom[k]
		if d < 2 {
			continue
		}
		total, n := m.weights(k, z, beta, viol, cost, w)
		checks += n
		z[k] = pickWeight(w[:d], rng.Float64(uint32(i))*total)
	}
	return checks
}

// weights fills w[:d] with the Gibbs conditional weights of local variable
// k's d values given the rest of z, and returns their sum and the table
// entries read.
//
// The conditional is computed from the functions holding x_k only. With
// viol[y] and cost[y] their Hard count and other-cost sum at x_k = y, the
// values allowed are those of least viol (all feasible ones when the rest
// of the state is feasible, so the conditional is then exactly π's: Hard
// values get probability 0), and among them P(y) ∝ exp((cmin − cost[y])·β),
// β = 1/τ, cmin their least cost: every weight is in (0, 1] and the
// largest is 1, so nothing overflows. When the state is infeasible this is
// the τ → 0 limit on violations of the lexicographic energy, which lets a
// chain walk out of infeasibility.
func (m *model) weights(k int, z []int, beta float64, viol []int32, cost, w []float64) (float64, int64) {
	d := m.dom[k]
	checks := m.local(k, z, viol, cost)
	viol, cost, w = viol[:d], cost[:d], w[:d]
	vmin := viol[0]
	for _, v := range viol[1:] {
		vmin = min(vmin, v)
	}
	cmin := math.Inf(1)
	for y, c := range cost {
		if viol[y] == vmin {
			cmin = min(cmin, c)
		}
	}
	total := 0.0
	for y, c := range cost {
		w[y] = 0
		if a := (cmin - c) * beta; viol[y] == vmin && a > expUnderflow {
			w[y] = math.Exp(a)
			total += w[y]
		}
	}
	return total, checks
}

// pickWeight returns the value at which the running sum of the weights w
// first exceeds x ∈ [0, Σw), skipping zero weights; the last value of
// positive weight when rounding leaves x at or above the sum.
func pickWeight(w []float64, x float64) int {
	acc, pick := 0.0, -1
	for y, wy := range w {
		if wy == 0 {
			continue
		}
		pick = y
		if acc += wy; x < acc {
			break
		}
	}
	return pick
}

// Conditional gives callers that own a chain's state the sampler's Gibbs
// conditionals, one local variable at a time. MVA-D-Gibbs (package
// dgibbs, thesis Theorem 4) is the user: its protocol draws an agent's
// boundary variables from their conditionals, which add the functions
// shared with neighbours to the local ones (Energies), and between two of
// those draws Sweep resamples the interior conditioned on the local
// variables only, which is exact because interior variables share no
// function with another agent.
//
// The conditionals are those of Gibbs (same weights, same order, same
// handling of infeasible states), and so are the random numbers: Sweep(z,
// run, t) is, bit for bit, trial t of the Gibbs chain of run run of the
// row of z's boundary values, given the state z that chain had before the
// trial.
//
// A Conditional is not safe for concurrent use: it owns scratch space.
type Conditional struct {
	m      *model
	beta   float64
	key    [2]uint32
	rng    philox.Stream
	viol   []int32
	cost   []float64
	w      []float64
	checks int64
}

// NewConditional returns the conditionals of lp at temperature tau, with
// random numbers keyed by seed (as Options.Seed). Every local variable,
// boundary ones included, must have at most MaxDomain values.
func NewConditional(lp *mva.LocalProblem, tau float64, seed uint64) (*Conditional, error) {
	if !(tau > 0) || math.IsInf(tau, 1) {
		return nil, fmt.Errorf("conditional: temperature %v must be positive and finite", tau)
	}
	m, err := newModel(lp)
	if err != nil {
		return nil, fmt.Errorf("conditional: %w", err)
	}
	maxD := m.maxD
	for k, d := range m.dom[:m.nb] {
		if d > MaxDomain {
			return nil, fmt.Errorf("conditional: boundary variable %d has %d values, more than %d", k, d, MaxDomain)
		}
		maxD = max(maxD, d)
	}
	return &Conditional{
		m: m, beta: 1 / tau, key: philox.Key(seed),
		viol: make([]int32, maxD), cost: make([]float64, maxD), w: make([]float64, maxD),
	}, nil
}

// Energies returns, for every value y of local variable k, the energy of
// the local functions holding x_k when x_k = y and the other local
// variables are as in z (a full local assignment: boundary values first,
// then interior, as the LocalProblem orders them): viol[y] counts their
// Hard entries, cost[y] sums the others. The functions without x_k are
// the same for every y, so these differences are the local part of x_k's
// conditional. The slices are valid until the next call.
func (c *Conditional) Energies(k int, z []int) (viol []int32, cost []float64) {
	c.checks += c.m.local(k, z, c.viol, c.cost)
	d := c.m.dom[k]
	return c.viol[:d], c.cost[:d]
}

// Sweep resamples every interior variable of the full local assignment z
// once, in order, from its Gibbs conditional given the rest of z; the
// boundary values z[:NB] are held fixed. Draw i comes from the Philox
// counter (row, run, step, i/4) under the seed's key, row being the row
// index of z's boundary values (see the package documentation), so a
// caller that never repeats a (row, run, step) never reuses a number.
func (c *Conditional) Sweep(z []int, run, step uint32) {
	m := c.m
	c.rng.Reset(c.key, m.rowWord(z[:m.nb]), run, step)
	c.checks += m.sweep(z, c.beta, &c.rng, c.viol, c.cost, c.w)
}

// Eval returns the energy of the full local assignment z: the number of
// local functions at a Hard entry and the sum of the others (bit for bit
// lp.Eval(z) when there are none).
func (c *Conditional) Eval(z []int) (viol int, cost float64) {
	c.checks += int64(len(c.m.funcs))
	return c.m.eval(z)
}

// Checks returns the cost-table entries read so far (counted as the
// samplers count them).
func (c *Conditional) Checks() int64 { return c.checks }
