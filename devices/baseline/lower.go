package baseline

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/hearth-dcop/hearth/devices"
)

// ErrNoBound is returned by LowerBound for neighbourhoods it does not
// bound: not every pair of homes linked, slots outside the coordination
// windows, outside loads, export prices or power fed back.
var ErrNoBound = errors.New("no lower bound for this neighbourhood")

// LowerBound returns a number no schedule's FlowObjective is below, for
// a neighbourhood whose homes are all linked to each other and whose
// every slot is coordinated (the SHDS instances): there the objective is
// Σ_t f_t(L_t), f_t(L) = a·L² + b_t·L with a = peak·Δ² and b_t =
// price·Δ·p_t, L_t the street's load.
//
// The bound relaxes everything but two facts. Every home draws at least
// its background in every slot, so L_t ≥ B_t; and, for a set U of slots,
// the devices draw at least E_U in U, E_U being the sum over homes of the
// least device energy in U of any schedule that keeps the home's rules
// (each home solved exactly with a price of 1 in U and 0 elsewhere). With
// f_t increasing on L ≥ 0, the bound is Σ_{t∉U} f_t(B_t) plus the least
// Σ_{t∈U} f_t(L_t) with L_t ≥ B_t and Σ_U L_t ≥ B_U + E_U, a water
// filling: L_t = max(B_t, (λ − b_t)/2a). U = the whole horizon is always
// valid; so is any other U, and the bound is the best of the whole
// horizon and the horizon less its first and last slots (SHDS: actions in
// slot 0 change nothing and the last index is never checked, so no rule
// needs energy there).
func LowerBound(ctx context.Context, n *devices.Neighbourhood, o Options) (float64, error) {
	H, T := len(n.Homes), n.Horizon.Slots
	if len(n.Linked()) != H*(H-1)/2 || len(coordinated(n)) != T || n.ExportPrices != nil {
		return 0, ErrNoBound
	}
	B := make([]float64, T)
	for hi := range n.Homes {
		h := &n.Homes[hi]
		if h.OutsideLoad != nil || h.Meter != nil {
			return 0, ErrNoBound // a meter's bill is not the street's price × energy
		}
		for t := range T {
			if h.Background[t] < 0 {
				return 0, ErrNoBound
			}
			B[t] += h.Background[t]
		}
		for d := range h.Devices {
			for _, a := range h.Devices[d].Actions {
				if a.Power < 0 {
					return 0, ErrNoBound
				}
			}
		}
	}
	if n.Horizon.Uneven() {
		// The water filling spreads energy over slots of one length.
		return 0, ErrNoBound
	}
	dt := n.Horizon.Hours()
	a := n.Weights.Peak * dt * dt
	b := make([]float64, T)
	for t := range T {
		b[t] = n.Weights.Price * dt * n.Prices[t]
		if b[t] < 0 {
			return 0, ErrNoBound
		}
	}
	if a <= 0 {
		return 0, ErrNoBound
	}
	best := math.Inf(-1)
	sets := [][2]int{{0, T}}
	if T > 2 {
		sets = append(sets, [2]int{1, T - 1})
	}
	for _, u := range sets {
		E, err := leastEnergy(ctx, n, u[0], u[1], &o)
		if err != nil {
			return 0, err
		}
		lb := 0.0
		for t := range T {
			if t < u[0] || t >= u[1] {
				lb += a*B[t]*B[t] + b[t]*B[t]
			}
		}
		lb += waterFill(a, b[u[0]:u[1]], B[u[0]:u[1]], E)
		best = math.Max(best, lb)
	}
	return best, nil
}

// leastEnergy is Σ over homes of the least device energy (power units ×
// slots) in slots from..to−1 of a schedule that keeps the home's rules.
func leastEnergy(ctx context.Context, n *devices.Neighbourhood, from, to int, o *Options) (float64, error) {
	T := n.Horizon.Slots
	m := *n
	m.Prices = make([]float64, T)
	for t := from; t < to; t++ {
		m.Prices[t] = 1
	}
	m.Weights = devices.Weights{Price: 1}
	m.Windows, m.Links, m.FeederLimit = nil, nil, 0
	E := make([]float64, len(n.Homes))
	err := parallel(ctx, o.workers(), len(n.Homes), func(hi int) error {
		h := n.Homes[hi]
		h.Background = make([]float64, T)
		s, err := newHomeSolver(&m, h, false, o)
		if err != nil {
			return err
		}
		// The price-only problem of a home splits by component, so
		// bucket elimination solves even the widest SHDS homes.
		_, c, err := s.solve(ctx)
		if err != nil {
			return err
		}
		E[hi] = c / n.Horizon.Hours()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("lower bound: %w", err)
	}
	sum := 0.0
	for _, e := range E {
		sum += e
	}
	return sum, nil
}

// waterFill returns the least Σ_t a·L_t² + b_t·L_t over L_t ≥ lo_t with
// Σ L_t ≥ Σ lo_t + E (a > 0, b ≥ 0, E ≥ 0): L_t = max(lo_t, (λ − b_t)/2a)
// with λ found by bisection.
func waterFill(a float64, b, lo []float64, E float64) float64 {
	need := E
	for _, l := range lo {
		need += l
	}
	level := func(lam float64) float64 {
		s := 0.0
		for t := range b {
			s += math.Max(lo[t], (lam-b[t])/(2*a))
		}
		return s
	}
	lam, hi := 0.0, 1.0
	for level(hi) < need {
		hi *= 2
	}
	for range 200 {
		mid := (lam + hi) / 2
		if level(mid) < need {
			lam = mid
		} else {
			hi = mid
		}
	}
	out := 0.0
	for t := range b {
		L := math.Max(lo[t], (lam-b[t])/(2*a))
		out += a*L*L + b[t]*L
	}
	return out
}
