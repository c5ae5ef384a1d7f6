package gen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/hearth-dcop/hearth/mva"
)

// newRand returns the generator of a seed for one kind; the stream
// constant keeps kinds from sharing random numbers for the same seed.
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// maxTable bounds every generated table, so that options cannot ask for
// more memory than a test machine has.
const maxTable = 1 << 24

// tableSize returns d^k, or an error when it exceeds maxTable.
func tableSize(d, k int) (int, error) {
	n := 1
	for range k {
		if n > maxTable/d {
			return 0, fmt.Errorf("a table over %d variables of %d values has more than %d entries", k, d, maxTable)
		}
		n *= d
	}
	return n, nil
}

// round returns x rounded to the nearest integer, halves away from zero.
func round(x float64) int { return int(math.Round(x)) }

// checkUnit refuses a probability or density outside [0, 1], NaN included.
func checkUnit(name string, x float64) error {
	if !(x >= 0 && x <= 1) {
		return fmt.Errorf("%s %v is outside [0, 1]", name, x)
	}
	return nil
}

// choose returns k distinct integers of [0, n) drawn uniformly (Robert
// Floyd's algorithm, O(k) time and memory), in the order drawn.
func choose(r *rand.Rand, n, k int) []int {
	out := make([]int, 0, k)
	seen := make(map[int]bool, k)
	for j := n - k; j < n; j++ {
		t := r.IntN(j + 1)
		if seen[t] {
			t = j
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

// intLabels returns the labels lo, lo+1, ..., lo+n-1.
func intLabels(lo, n int) []string {
	l := make([]string, n)
	for i := range l {
		l[i] = strconv.Itoa(lo + i)
	}
	return l
}

// tight fills a table of size n with exactly round(p2·n) feasible entries,
// uniform whole costs in [lo, hi], the others Hard. When planted ≥ 0 that
// entry is one of the feasible ones (and at least one entry is feasible).
func tight(r *rand.Rand, n int, p2 float64, lo, hi, planted int) []float64 {
	costs := make([]float64, n)
	for i := range costs {
		costs[i] = mva.Hard
	}
	k := round(p2 * float64(n))
	draw := func() float64 { return float64(lo + r.IntN(hi-lo+1)) }
	if planted < 0 {
		for _, i := range choose(r, n, k) {
			costs[i] = draw()
		}
		return costs
	}
	k = max(k, 1)
	costs[planted] = draw()
	for _, i := range choose(r, n-1, k-1) {
		if i >= planted {
			i++
		}
		costs[i] = draw()
	}
	return costs
}

// index returns the table index of the values vals of a scope whose
// variables all have d values (row-major, last fastest).
func index(d int, vals []int) int {
	i := 0
	for _, v := range vals {
		i = i*d + v
	}
	return i
}

// unionFind tells whether edges connect a set of nodes.
type unionFind []int

func newUnionFind(n int) unionFind {
	u := make(unionFind, n)
	for i := range u {
		u[i] = i
	}
	return u
}

func (u unionFind) find(x int) int {
	for u[x] != x {
		u[x] = u[u[x]]
		x = u[x]
	}
	return x
}

// union joins the sets of a and b and reports whether they were apart.
func (u unionFind) union(a, b int) bool {
	a, b = u.find(a), u.find(b)
	if a == b {
		return false
	}
	u[a] = b
	return true
}

// edge is an undirected edge between nodes u < v.
type edge struct{ u, v int }

func newEdge(a, b int) edge {
	if a > b {
		a, b = b, a
	}
	return edge{a, b}
}

// connected reports whether edges connect all n nodes.
func connected(n int, edges []edge) bool {
	if n <= 1 {
		return true
	}
	u := newUnionFind(n)
	parts := n
	for _, e := range edges {
		if u.union(e.u, e.v) {
			parts--
		}
	}
	return parts == 1
}
