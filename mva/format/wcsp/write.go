package wcsp

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/hearth-dcop/hearth/mva"
)

// maxBound caps the upper bound, leaving room below MaxInt64.
const maxBound = 1 << 62

// Write writes p's internal costs as a wcsp file (see the package
// documentation for the mapping). It fails, writing nothing, when p is
// invalid or holds a cost that is not an integer.
func Write(w io.Writer, p *mva.Problem) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("wcsp: %w", err)
	}
	plan, err := planProblem(p)
	if err != nil {
		return fmt.Errorf("wcsp: %w", err)
	}
	bw := bufio.NewWriter(w)
	plan.write(bw, p)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("wcsp: %w", err)
	}
	return nil
}

// plan holds what writing needs beyond the problem: each function's shift
// and the file-wide constant and bound.
type plan struct {
	shift    []int64 // per function: subtracted from its costs
	constant int64
	ub       int64
	nfun     int
}

func funcName(p *mva.Problem, i int) string {
	if n := p.Functions[i].Name; n != "" {
		return strconv.Quote(n)
	}
	return "#" + strconv.Itoa(i)
}

// integer converts a finite cost, refusing fractions and magnitudes a
// float64 cannot hold exactly.
func integer(c float64) (int64, bool) {
	if c != math.Trunc(c) || math.Abs(c) >= maxExact {
		return 0, false
	}
	return int64(c), true
}

func planProblem(p *mva.Problem) (*plan, error) {
	pl := &plan{shift: make([]int64, len(p.Functions))}
	offset, ok := integer(p.Offset)
	if !ok {
		return nil, fmt.Errorf("the offset %v is not an integer (of at most 2^53)", p.Offset)
	}
	pl.constant = offset
	var sumMax int64
	for i := range p.Functions {
		f := &p.Functions[i]
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, c := range f.Costs {
			if mva.IsHard(c) {
				continue
			}
			v, ok := integer(c)
			if !ok {
				return nil, fmt.Errorf("function %s: cost %v is not an integer (of at most 2^53)", funcName(p, i), c)
			}
			lo, hi = min(lo, v), max(hi, v)
		}
		if lo > hi {
			// Only hard entries, written as they are (an infeasible
			// constant stays a function).
			pl.nfun++
			continue
		}
		if len(f.Scope) == 0 {
			pl.constant += lo // its one entry
		} else {
			pl.nfun++
			if lo < 0 {
				pl.shift[i] = lo
				pl.constant += lo
				hi -= lo
			}
			sumMax += hi
		}
		// Each step adds less than 2^53: checking each keeps clear of
		// overflow.
		if sumMax > maxBound || pl.constant > maxBound || pl.constant < -maxBound {
			return nil, fmt.Errorf("the costs add up to more than 2^62")
		}
	}
	bound := sumMax + max(pl.constant, 0) + 1
	if bound > maxBound || bound < 0 {
		return nil, fmt.Errorf("the costs add up to more than 2^62")
	}
	pl.ub = bound
	if pl.constant > 0 {
		pl.nfun++
	}
	return pl, nil
}

// name returns the problem's name as one token: white space, which would
// split it, becomes "_"; other bytes, valid UTF-8 or not, stay.
func name(p *mva.Problem) string {
	if p.Name == "" {
		return "problem"
	}
	b := []byte(p.Name)
	for i, c := range b {
		if isSpace(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

func (pl *plan) write(w *bufio.Writer, p *mva.Problem) {
	maxDom := 0
	for v := range p.Variables {
		maxDom = max(maxDom, p.DomainSize(v))
	}
	fmt.Fprintf(w, "%s %d %d %d %d\n", name(p), len(p.Variables), maxDom, pl.nfun, pl.ub)
	for v := range p.Variables {
		if v > 0 {
			w.WriteByte(' ')
		}
		w.WriteString(strconv.Itoa(p.DomainSize(v)))
	}
	w.WriteByte('\n')
	if pl.constant > 0 {
		// A negative constant cannot be written (see the package doc).
		fmt.Fprintf(w, "0 %d 0\n", pl.constant)
	}
	vals := make([]int, 0, 8)
	for i := range p.Functions {
		f := &p.Functions[i]
		if len(f.Scope) == 0 {
			if mva.IsHard(f.Costs[0]) {
				fmt.Fprintf(w, "0 %d 0\n", pl.ub)
			}
			continue
		}
		// Integer costs, shifted, with hard entries at the bound.
		cost := func(c float64) int64 {
			if mva.IsHard(c) {
				return pl.ub
			}
			return int64(c) - pl.shift[i]
		}
		freq := make(map[int64]int)
		def, best := int64(0), 0
		for _, c := range f.Costs {
			v := cost(c)
			freq[v]++
			if n := freq[v]; n > best {
				def, best = v, n
			}
		}
		w.WriteString(strconv.Itoa(len(f.Scope)))
		for _, v := range f.Scope {
			w.WriteByte(' ')
			w.WriteString(strconv.Itoa(v))
		}
		fmt.Fprintf(w, " %d %d\n", def, len(f.Costs)-best)
		vals = vals[:0]
		for range f.Scope {
			vals = append(vals, 0)
		}
		for _, c := range f.Costs {
			// vals is the tuple of this entry: advance it after use.
			if v := cost(c); v != def {
				for _, x := range vals {
					w.WriteString(strconv.Itoa(x))
					w.WriteByte(' ')
				}
				w.WriteString(strconv.FormatInt(v, 10))
				w.WriteByte('\n')
			}
			for j := len(vals) - 1; j >= 0; j-- {
				vals[j]++
				if vals[j] < p.DomainSize(f.Scope[j]) {
					break
				}
				vals[j] = 0
			}
		}
	}
}
