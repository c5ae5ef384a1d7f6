package local

import (
	"math/bits"
	"sync"
)

// TablePool lends bucket elimination's tables (output costs and argmin
// indices) to solvers that would otherwise allocate them for every row
// and drop them after it: the SH-MGM-style baseline solves thousands of
// one-home problems whose buckets are too large to keep between rows
// (transientEntries), and a fresh Go slice is zeroed on allocation and
// scanned by the collector, a tenth of that baseline's CPU on 251 homes.
// The kernel writes every entry of the tables it fills (join.JoinProject
// writes every row and every argmin), so a lent table is not cleared.
//
// Tables are kept by capacity class (powers of two) up to a bound on the
// bytes held; a table given back past it is left to the garbage
// collector. One pool may be shared by solvers that run concurrently.
// The zero value is not usable: NewTablePool.
type TablePool struct {
	mu sync.Mutex
	// least is the smallest table lent (minPooled; tests lower it).
	least int
	// poison fills every lent table with garbage (tests: the kernel
	// must write every entry).
	poison   bool
	maxBytes int64
	held     int64
	floats   map[int][][]float64
	ints     map[int][][]int32
}

// NewTablePool returns a pool that keeps at most maxBytes of tables
// between loans (at least 0).
func NewTablePool(maxBytes int64) *TablePool {
	return &TablePool{least: minPooled, maxBytes: max(maxBytes, 0), floats: map[int][][]float64{}, ints: map[int][][]int32{}}
}

// minPooled is the smallest table the pool lends: below it an allocation
// costs less than the lock.
const minPooled = 1 << 10

// class returns the capacity class of a table of n entries.
func class(n int) int { return 1 << bits.Len(uint(n-1)) }

// Held returns the bytes of tables kept for later loans.
func (p *TablePool) Held() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

// floatsOf returns a table of n entries whose contents are unspecified.
func (p *TablePool) floatsOf(n int) []float64 {
	if p == nil {
		return make([]float64, n)
	}
	return lend(p, p.floats, n, 8, func(i int) float64 { return float64(-7 - i%5) })
}

// intsOf returns an argmin table of n entries whose contents are
// unspecified.
func (p *TablePool) intsOf(n int) []int32 {
	if p == nil {
		return make([]int32, n)
	}
	return lend(p, p.ints, n, 4, func(i int) int32 { return int32(1000 + i%3) })
}

// putFloats gives s back; the caller must not use it afterwards. Tables
// the pool did not lend (another capacity) are left to the collector.
func (p *TablePool) putFloats(s []float64) {
	if p != nil {
		give(p, p.floats, s, 8)
	}
}

// putInts is putFloats for argmin tables.
func (p *TablePool) putInts(s []int32) {
	if p != nil {
		give(p, p.ints, s, 4)
	}
}

// lend takes a table of n entries of size bytes each from free (p's
// shelf of that kind), or allocates one of n's capacity class; with
// p.poison it fills the table with garbage(i).
func lend[T float64 | int32](p *TablePool, free map[int][][]T, n int, size int64, garbage func(int) T) []T {
	if n < p.least {
		return make([]T, n)
	}
	c := class(n)
	var s []T
	p.mu.Lock()
	if f := free[c]; len(f) > 0 {
		s = f[len(f)-1][:n]
		free[c] = f[:len(f)-1]
		p.held -= size * int64(c)
	}
	p.mu.Unlock()
	if s == nil {
		s = make([]T, n, c)
	}
	if p.poison {
		for i := range s {
			s[i] = garbage(i)
		}
	}
	return s
}

// give puts s back on free (p's shelf of its kind, size bytes an entry)
// where p lent it and the pool's bound leaves room.
func give[T float64 | int32](p *TablePool, free map[int][][]T, s []T, size int64) {
	c := cap(s)
	if c < p.least || c != class(c) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held+size*int64(c) > p.maxBytes {
		return
	}
	free[c] = append(free[c], s[:c])
	p.held += size * int64(c)
}
