package gen

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/hearth-dcop/hearth/mva"
)

// RadarOptions shape the radar coordination instances of the thesis
// (§3.5, "Radar Coordination Instances", Table 3.1, after Kim & Lesser,
// AAMAS 2013). The thesis gives the frame: radars equally spaced on a
// grid, each controller (agent) coordinating a 4×4 block of radars, four
// scanning directions per radar, phenomena with a size and a weight placed
// at random until the constraint graph is connected, one n-ary function
// per phenomenon over every radar that may detect it, utilities written as
// negative costs, and hard constraints. A configuration of Table 3.1 such
// as 12×8 is the radar grid: Cols×Rows = 12×8 radars in 4×4 blocks gives
// 3·2 = 6 agents, and 8×4, 8×8, 16×8, 20×8 give 2, 4, 8 and 10, as the
// table's second row says. The rest is this package's reading:
//
//   - Radars sit at the integer points (c, r) of the grid, c < Cols,
//     r < Rows. A radar's value is the direction it scans, "N" (+r), "E"
//     (+c), "S" or "W"; it scans the 90° sector around that direction
//     (the sector's edges belong to both neighbouring directions).
//   - A phenomenon lies at a uniform point of [0, Cols−1]×[0, Rows−1].
//     The radars within Range of it may detect it: the MaxArity nearest
//     of them (ties by index) form the scope of its function.
//   - Its size s, uniform in 1..MaxSize and at most the scope's size, is
//     the number of radars that must scan it at once for a useful
//     observation (a larger phenomenon needs more radars); its weight w
//     is uniform in [MinWeight, MaxWeight]. The function costs −w when at
//     least s radars of the scope point at it and 0 otherwise.
//   - With probability Critical a phenomenon is critical: not observing
//     it costs Hard instead of 0. These are the hard constraints that let
//     AFB prune (thesis) and that rule D-Gibbs out. With Plant, a random
//     configuration is drawn first and only phenomena it observes may be
//     critical, so the instance stays feasible.
//   - Phenomena are added until the radars' constraint graph (two radars
//     are linked when they share a phenomenon) is connected, which makes
//     the agent graph connected too, and until there are at least
//     Phenomena of them.
type RadarOptions struct {
	// Cols and Rows size the radar grid: Table 3.1's "12x8" is Cols 12,
	// Rows 8.
	Cols, Rows int
	// BlockCols and BlockRows size each controller's block of radars,
	// 4×4 in the thesis; they must divide Cols and Rows.
	BlockCols, BlockRows int
	// Range is the sensing range, in grid spacings.
	Range float64
	// MaxArity bounds the radars of one phenomenon.
	MaxArity int
	// MaxSize bounds a phenomenon's size.
	MaxSize int
	// MinWeight and MaxWeight bound a phenomenon's weight (its utility).
	MinWeight, MaxWeight int
	// Critical is the probability that a phenomenon must be observed.
	Critical float64
	// Phenomena is the least number of phenomena; more are added until
	// the radars are connected.
	Phenomena int
	// Plant keeps the instance feasible (see above).
	Plant bool
}

// DefaultRadar returns the thesis's 8×8 configuration (4 controllers of
// 4×4 radars) with this package's choices for the rest: range 1 (a
// phenomenon is seen by the 1–4 radars around it), sizes 1–2, weights
// 1–100, one phenomenon in five critical.
func DefaultRadar() RadarOptions {
	return RadarOptions{
		Cols: 8, Rows: 8, BlockCols: 4, BlockRows: 4,
		Range: 1, MaxArity: 4, MaxSize: 2, MinWeight: 1, MaxWeight: 100,
		Critical: 0.2, Plant: true,
	}
}

func (o RadarOptions) validate() error {
	switch {
	case o.BlockCols < 1 || o.BlockRows < 1:
		return fmt.Errorf("block %dx%d: a controller needs at least one radar", o.BlockCols, o.BlockRows)
	case o.Cols < 1 || o.Rows < 1 || o.Cols%o.BlockCols != 0 || o.Rows%o.BlockRows != 0:
		return fmt.Errorf("grid %dx%d: it must be a whole number of %dx%d blocks", o.Cols, o.Rows, o.BlockCols, o.BlockRows)
	case o.Cols > 1<<20 || o.Rows > 1<<20 || o.Cols*o.Rows > 1<<20:
		return fmt.Errorf("grid %dx%d has too many radars", o.Cols, o.Rows)
	case !(o.Range >= 0.75 && o.Range <= 100):
		return fmt.Errorf("range %v is outside [0.75, 100]: a shorter range can never link two radars", o.Range)
	case o.MaxArity < 2:
		return fmt.Errorf("max arity %d: at least 2 radars must share a phenomenon to link them", o.MaxArity)
	case o.MaxSize < 1:
		return fmt.Errorf("max size %d: a phenomenon needs at least one radar", o.MaxSize)
	case o.MinWeight > o.MaxWeight:
		return fmt.Errorf("weight range [%d, %d] is empty", o.MinWeight, o.MaxWeight)
	case o.Phenomena < 0 || o.Phenomena > 1<<22:
		return fmt.Errorf("phenomena %d is outside [0, %d]", o.Phenomena, 1<<22)
	}
	if err := checkUnit("critical", o.Critical); err != nil {
		return err
	}
	if _, err := tableSize(4, o.MaxArity); err != nil {
		return fmt.Errorf("max arity %d: %w", o.MaxArity, err)
	}
	return nil
}

// directions are the radar values: north, east, south, west.
var directions = [4]string{"N", "E", "S", "W"}

// scans reports whether a radar pointing in direction dir sees the point
// (dx, dy) away from it.
func scans(dir int, dx, dy float64) bool {
	switch dir {
	case 0:
		return dy >= math.Abs(dx)
	case 1:
		return dx >= math.Abs(dy)
	case 2:
		return -dy >= math.Abs(dx)
	}
	return -dx >= math.Abs(dy)
}

// Radar returns the radar instance of seed under o: controllers "c0",
// "c1", ... (row-major over the blocks), radars "r<col>_<row>" with values
// N, E, S, W, and one function "ph<k>" per phenomenon.
func Radar(seed uint64, o RadarOptions) (*mva.Problem, error) {
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("gen radar: %w", err)
	}
	r := newRand(seed, 0x7261_6461_72) // "radar"
	bc := o.Cols / o.BlockCols
	p := &mva.Problem{Name: fmt.Sprintf("radar-%dx%d-%d", o.Cols, o.Rows, seed)}
	for k := range bc * (o.Rows / o.BlockRows) {
		p.Agents = append(p.Agents, mva.Agent{Name: "c" + strconv.Itoa(k)})
	}
	n := o.Cols * o.Rows
	at := func(v int) (float64, float64) { return float64(v % o.Cols), float64(v / o.Cols) }
	for v := range n {
		c, row := v%o.Cols, v/o.Cols
		p.Variables = append(p.Variables, mva.Variable{
			Name:   "r" + strconv.Itoa(c) + "_" + strconv.Itoa(row),
			Domain: slices.Clone(directions[:]),
			Agent:  c/o.BlockCols + row/o.BlockRows*bc,
		})
	}
	var planted []int
	if o.Plant {
		planted = make([]int, n)
		for v := range planted {
			planted[v] = r.IntN(len(directions))
		}
	}
	links := newUnionFind(n)
	parts := n
	// Each attempt places a phenomenon; a connected grid needs about
	// n·ln n of them, so a hundredfold margin means the range is useless.
	for tries := 0; parts > 1 || len(p.Functions) < o.Phenomena; tries++ {
		if tries > 100*(n+o.Phenomena+10) {
			return nil, fmt.Errorf("gen radar: the radars are still not connected after %d phenomena: raise the range", len(p.Functions))
		}
		x, y := r.Float64()*float64(o.Cols-1), r.Float64()*float64(o.Rows-1)
		var scope []int // in index order: rows, then columns
		for row := max(0, int(math.Ceil(y-o.Range))); row <= min(o.Rows-1, int(y+o.Range)); row++ {
			for c := max(0, int(math.Ceil(x-o.Range))); c <= min(o.Cols-1, int(x+o.Range)); c++ {
				if math.Hypot(float64(c)-x, float64(row)-y) <= o.Range {
					scope = append(scope, row*o.Cols+c)
				}
			}
		}
		if len(scope) == 0 {
			continue
		}
		dist := func(v int) float64 { vx, vy := at(v); return math.Hypot(vx-x, vy-y) }
		slices.SortStableFunc(scope, func(a, b int) int { return cmp.Compare(dist(a), dist(b)) })
		scope = scope[:min(len(scope), o.MaxArity)]
		slices.Sort(scope)
		size := min(1+r.IntN(o.MaxSize), len(scope))
		weight := float64(o.MinWeight + r.IntN(o.MaxWeight-o.MinWeight+1))
		critical := r.Float64() < o.Critical
		seen := func(vals []int) int {
			k := 0
			for j, v := range scope {
				vx, vy := at(v)
				if scans(vals[j], x-vx, y-vy) {
					k++
				}
			}
			return k
		}
		if o.Plant {
			vals := make([]int, len(scope))
			for j, v := range scope {
				vals[j] = planted[v]
			}
			critical = critical && seen(vals) >= size
		}
		costs := make([]float64, 1<<(2*len(scope)))
		vals := make([]int, len(scope))
		for e := range costs {
			for j := range vals {
				vals[j] = e >> (2 * (len(scope) - 1 - j)) & 3
			}
			switch {
			case seen(vals) >= size:
				costs[e] = -weight
			case critical:
				costs[e] = mva.Hard
			}
		}
		p.Functions = append(p.Functions, mva.Function{Name: "ph" + strconv.Itoa(len(p.Functions)), Scope: scope, Costs: costs})
		for _, v := range scope[1:] {
			if links.union(scope[0], v) {
				parts--
			}
		}
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("gen radar: %w", err)
	}
	return p, nil
}
