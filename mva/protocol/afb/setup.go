package afb

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// Orders of the agents (parameter afb_order).
const (
	OrderID     = 0 // ascending agent id
	OrderDegree = 1 // maximum agent degree first, ties by id
	OrderLinks  = 2 // FRODO-like: most links to ordered agents, fewer rows, id
)

// agentOrder returns the position → agent order every agent computes
// identically from the problem's structure (who shares a function with
// whom and how many rows each agent has), never from local functions.
func agentOrder(d *mva.Decomposition, mode int, rows []int) ([]int, error) {
	m := len(d.Subs)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	nb := d.Neighbours()
	switch mode {
	case OrderID:
	case OrderDegree:
		slices.SortStableFunc(order, func(a, b int) int {
			return cmp.Or(cmp.Compare(len(nb[b]), len(nb[a])), cmp.Compare(a, b))
		})
	case OrderLinks:
		placed := make([]bool, m)
		links := make([]int, m) // neighbours already placed
		for p := range m {
			best := -1
			for a := range m {
				if placed[a] {
					continue
				}
				if best < 0 || links[a] > links[best] ||
					links[a] == links[best] && rows[a] < rows[best] {
					best = a
				}
			}
			order[p] = best
			placed[best] = true
			for _, j := range nb[best] {
				links[j]++
			}
		}
	default:
		return nil, fmt.Errorf("afb_order %d unknown (valid: 0 id, 1 degree, 2 links)", mode)
	}
	return order, nil
}

// agentRows returns each agent's number of MVA-table rows (the product of
// its boundary domains, 1 when it has none).
func agentRows(d *mva.Decomposition) ([]int, error) {
	p := d.Problem
	rows := make([]int, len(d.Subs))
	for a := range d.Subs {
		n := 1
		for _, v := range d.Subs[a].Boundary {
			dom := p.DomainSize(v)
			if dom <= 0 || n > math.MaxInt32/dom {
				return nil, fmt.Errorf("agent %d: MVA table too large", a)
			}
			n *= dom
		}
		rows[a] = n
	}
	return rows, nil
}

// extVar locates one scope variable of an external function: the position
// of its agent, where its value sits in that agent's row index
// (value = row/div % dom), and its stride in the function's table.
type extVar struct {
	pos, div, dom, stride int
}

// extFunc is an external function as this agent evaluates it: shifted so
// that every entry is ≥ 0, with its scope resolved to CPA positions.
type extFunc struct {
	costs []float64
	vars  []extVar
	// first and owner are the smallest and largest positions of the
	// agents in the scope; before is the largest position other than the
	// owner's, so the function is fully known once it is assigned.
	first, owner, before int
	// shift is min(0, smallest finite entry), subtracted from every entry.
	shift float64
}

// eval returns f for the rows in vals, with position k's row replaced by b.
func (f *extFunc) eval(vals []int, k, b int) float64 {
	idx := 0
	for _, v := range f.vars {
		row := vals[v.pos]
		if v.pos == k {
			row = b
		}
		idx += row / v.div % v.dom * v.stride
	}
	return f.costs[idx]
}

// negShift returns min(0, the smallest finite entry of costs): the
// constant that makes a table non-negative without touching tables that
// already are.
func negShift(costs []float64) float64 {
	s := 0.0
	for _, c := range costs {
		if !mva.IsHard(c) && c < s {
			s = c
		}
	}
	return s
}

// newExtFunc resolves function fi for an agent; pos maps agent id to
// position.
func newExtFunc(d *mva.Decomposition, fi int, pos []int) (*extFunc, error) {
	p := d.Problem
	f := &p.Functions[fi]
	e := &extFunc{costs: f.Costs, first: math.MaxInt, owner: -1, before: -1, shift: negShift(f.Costs)}
	if e.shift != 0 {
		e.costs = make([]float64, len(f.Costs))
		for i, c := range f.Costs {
			e.costs[i] = c - e.shift
		}
	}
	strides := p.Strides(f.Scope)
	for i, v := range f.Scope {
		a := p.Variables[v].Agent
		b := d.Subs[a].Boundary
		bi, ok := slices.BinarySearch(b, v)
		if !ok {
			return nil, fmt.Errorf("function %d: variable %d is not on agent %d's boundary", fi, v, a)
		}
		div := 1
		for _, w := range b[bi+1:] {
			div *= p.DomainSize(w)
		}
		e.vars = append(e.vars, extVar{pos: pos[a], div: div, dom: p.DomainSize(v), stride: strides[i]})
		e.first = min(e.first, pos[a])
		e.owner = max(e.owner, pos[a])
	}
	for _, v := range e.vars {
		if v.pos != e.owner {
			e.before = max(e.before, v.pos)
		}
	}
	return e, nil
}

// futureBound returns h_k over this agent's rows: for every external
// function whose scope holds position k and otherwise only later agents,
// the minimum of the function over the later agents' values with k's
// values fixed by the row (notes §1.2.3). It also returns the number of
// entries read, for the NCCC metric.
func futureBound(fs []*extFunc, k, rows int) ([]float64, int64) {
	h := make([]float64, rows)
	var checks int64
	for _, f := range fs {
		if f.first != k || f.owner == k {
			continue
		}
		// mine are the scope positions of this agent's variables; the key
		// of an entry is its values on them, in scope order.
		var mine []extVar
		for _, v := range f.vars {
			if v.pos == k {
				mine = append(mine, v)
			}
		}
		size := 1
		for _, v := range mine {
			size *= v.dom
		}
		g := make([]float64, size)
		for i := range g {
			g[i] = math.Inf(1)
		}
		for e, c := range f.costs {
			key := 0
			for _, v := range mine {
				key = key*v.dom + e/v.stride%v.dom
			}
			g[key] = min(g[key], c)
		}
		checks += int64(len(f.costs))
		for b := range h {
			key := 0
			for _, v := range mine {
				key = key*v.dom + b/v.div%v.dom
			}
			h[b] += g[key]
		}
	}
	return h, checks
}
