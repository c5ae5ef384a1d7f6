package afb

import (
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/mva/wire"
)

// maxStamp bounds timestamps read from the network; a real counter never
// gets near it.
const maxStamp = 1 << 62

// cpa is a current partial assignment (notes §1.3): positions 0..last hold
// a row index (the agent's joint boundary assignment) and the assigning
// agent's counter at that moment; later positions hold −1 and 0.
type cpa struct {
	vals []int
	ts   []uint64
	last int
	// cost is the shifted cost of the prefix: the rows of positions
	// 0..last plus every external function owned by one of them.
	cost float64
	// shift is the sum of the cost shifts of positions 0..last, so that
	// cost+shift is the prefix's cost in the original scale.
	shift float64
}

func newCPA(m int) cpa {
	c := cpa{vals: make([]int, m), ts: make([]uint64, m), last: -1}
	for i := range c.vals {
		c.vals[i] = -1
	}
	return c
}

// truncate clears positions p and later.
func (c *cpa) truncate(p int) {
	for i := p; i < len(c.vals); i++ {
		c.vals[i] = -1
		c.ts[i] = 0
	}
	c.last = min(c.last, p-1)
}

// compareTS compares x and y lexicographically on positions 0..p−1.
func compareTS(x, y []uint64, p int) int {
	return slices.Compare(x[:p], y[:p])
}

// write encodes the CPA: the assigned prefix's rows and stamps, then the
// cost and, when non-zero, the shift.
func (c *cpa) write(w *wire.Writer) {
	w.Int(int64(c.last + 1))
	for p := 0; p <= c.last; p++ {
		w.Int(int64(c.vals[p]))
		w.Uint(c.ts[p])
	}
	w.Float(c.cost)
	w.Bool(c.shift != 0)
	if c.shift != 0 {
		w.Float(c.shift)
	}
}

// readCPA decodes a CPA for an order whose positions have rows[p] rows.
// Indices are range-checked by the reader; the caller checks r.Err and
// then validate once the whole body is read.
func readCPA(r *wire.Reader, rows []int) cpa {
	m := len(rows)
	c := newCPA(m)
	n := r.IntIn(0, m+1)
	for p := range n {
		c.vals[p] = r.IntIn(0, rows[p])
		c.ts[p] = r.Uint()
	}
	c.last = n - 1
	c.cost = r.Float()
	if r.Bool() {
		c.shift = r.Float()
	}
	return c
}

// validate checks what the reader cannot: assigned stamps are positive
// and bounded, the cost is a finite non-negative (shifted) cost and the
// shift is finite and non-positive.
func (c *cpa) validate() error {
	for p := 0; p <= c.last; p++ {
		if c.ts[p] == 0 || c.ts[p] > maxStamp {
			return fmt.Errorf("%w: stamp %d at position %d", wire.ErrMalformed, c.ts[p], p)
		}
	}
	if c.cost < 0 || math.IsInf(c.cost, 1) || c.shift > 0 || math.IsInf(c.shift, 0) {
		return fmt.Errorf("%w: CPA cost %v, shift %v", wire.ErrMalformed, c.cost, c.shift)
	}
	return nil
}
