package baseline

import (
	"math"

	"github.com/hearth-dcop/hearth/devices"
)

// FlowObjective is the objective of an evaluated schedule on the load
// that flows, rather than on committed levels: the weighted bill plus the
// peak weight times Σ over the coordinated slots of
// Δ²·[Σ_h (d_h(t) + o_h(t))² + Σ_{linked h,g} 2·d_h(t)·d_g(t)], d_h being
// home h's draw (its positive part: power fed back does not offset a
// neighbour's peak) and o_h its outside load. On a complete graph the
// bracket is the street's squared load L_t², the SHDS peak term
// (shds-model.md §4.1). It is the potential of the SH-MGM-style best
// responses: a home's move changes it by exactly the change of the home's
// J_i, so every improving move lowers it.
func FlowObjective(n *devices.Neighbourhood, ev *devices.Evaluation) float64 {
	dt := n.Horizon.Hours()
	links := n.Linked()
	peak := 0.0
	for _, t := range coordinated(n) {
		sum := 0.0
		for hi := range n.Homes {
			v := drawOf(ev, hi, t)
			if o := n.Homes[hi].OutsideLoad; o != nil {
				v += o[t]
			}
			sum += v * v
		}
		for _, l := range links {
			sum += 2 * drawOf(ev, l[0], t) * drawOf(ev, l[1], t)
		}
		peak += dt * dt * n.Horizon.Ratio(t) * sum
	}
	return ev.PriceCost + n.Weights.Peak*peak
}

// ratios returns each slot's Horizon.Ratio, the factor of its squared
// load in the peak term against Δ², or nil on a horizon of one slot
// length.
func ratios(hz devices.Horizon) []float64 {
	if !hz.Uneven() {
		return nil
	}
	out := make([]float64, hz.Slots)
	for t := range out {
		out[t] = hz.Ratio(t)
	}
	return out
}

func drawOf(ev *devices.Evaluation, hi, t int) float64 {
	return math.Max(ev.Homes[hi].Load[t], 0)
}
