package localsearch

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hearth-dcop/hearth/mva"
)

// param is params[name], def when absent.
func param(params map[string]float64, name string, def float64) float64 {
	if v, ok := params[name]; ok {
		return v
	}
	return def
}

// Int reads an integer parameter of params (mva.Node.Params), def when
// absent, and checks lo ≤ v ≤ hi.
func Int(params map[string]float64, name string, def, lo, hi int) (int, error) {
	v := param(params, name, float64(def))
	if v != math.Trunc(v) || v < float64(lo) || v > float64(hi) {
		return 0, fmt.Errorf("parameter %s = %v: want an integer in %d..%d", name, v, lo, hi)
	}
	return int(v), nil
}

// Prob reads a probability parameter, def when absent.
func Prob(params map[string]float64, name string, def float64) (float64, error) {
	v := param(params, name, def)
	if !(v >= 0 && v <= 1) {
		return 0, fmt.Errorf("parameter %s = %v: want a probability in [0, 1]", name, v)
	}
	return v, nil
}

// Bool reads a 0/1 parameter, def when absent.
func Bool(params map[string]float64, name string, def bool) (bool, error) {
	d := 0.0
	if def {
		d = 1
	}
	switch v := param(params, name, d); v {
	case 0:
		return false, nil
	case 1:
		return true, nil
	default:
		return false, fmt.Errorf("parameter %s = %v: want 0 or 1", name, v)
	}
}

// Init is how an agent chooses its first boundary assignment.
type Init int

const (
	// InitFirst takes the first value of every boundary variable (row 0),
	// D-Gibbs's ValInit.
	InitFirst Init = iota
	// InitRandom draws a row uniformly with the agent's PRNG, as FRODO's
	// and pyDCOP's MGM do.
	InitRandom
	// InitBestRow takes the agent's cheapest row, its unconstrained local
	// optimum; it solves every row first.
	InitBestRow
	// InitStart takes the row the local solver suggests (mva.Starter),
	// and row 0 when it suggests none.
	InitStart
)

// InitNames name the values of "init" (-p init=start reads as init=3).
var InitNames = map[string]Init{"first": InitFirst, "random": InitRandom, "best": InitBestRow, "start": InitStart}

// InitParam reads parameter "init" (0 first, 1 random, 2 best row, 3 the
// local solver's start).
func InitParam(params map[string]float64, def Init) (Init, error) {
	v, err := Int(params, "init", int(def), int(InitFirst), int(InitStart))
	return Init(v), err
}

// InitialRow returns the agent's first row under mode.
func InitialRow(ctx context.Context, mode Init, v *mva.LocalView, rows int, rng *rand.Rand) (int, error) {
	switch mode {
	case InitRandom:
		return rng.IntN(rows), nil
	case InitStart:
		if s, ok := v.Solver.(mva.Starter); ok {
			if b, ok := s.Start(); ok && len(b) == v.LP.NB {
				return v.LP.EncodeRow(b), nil
			}
		}
		return 0, nil
	case InitBestRow:
		best, bestCost := 0, Cost{}
		for row := range rows {
			c, err := RowCost(ctx, v, row)
			if err != nil {
				return 0, err
			}
			if row == 0 || c.Less(bestCost) {
				best, bestCost = row, c
			}
		}
		return best, nil
	}
	return 0, nil
}

// NewRand returns the agent's PRNG: PCG seeded from the node's seed, so
// that the same seed and delivery order give the same run.
func NewRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x6c6f63616c736561)) // "localsea"
}
