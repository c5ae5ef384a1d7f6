package devices

import (
	"math"
	"slices"
	"strconv"
)

// maxDistinctDraws bounds the distinct draws enumerated for one slot; past
// it LevelCaps spreads the caps evenly instead of snapping them to draws.
const maxDistinctDraws = 1 << 16

// Draw returns home h's draw in slot t when device d runs action(d): the
// background first, then the devices in order. LevelCaps sums in the same
// order, so a schedule's draw and the cap it was snapped to are the same
// float64.
func (h *Home) Draw(t int, action func(d int) int) float64 {
	v := h.Background[t]
	for d := range h.Devices {
		v += h.Devices[d].Act(action(d)).Power
	}
	return v
}

// SlotDraws returns the distinct draws home h can have in slot t,
// ascending, and false (with only the least and the greatest) when there
// are more than maxDistinctDraws.
func (h *Home) SlotDraws(t int) ([]float64, bool) {
	sums := map[float64]bool{h.Background[t]: true}
	lo, hi := h.Background[t], h.Background[t]
	exact := true
	for d := range h.Devices {
		acts := h.Devices[d].Actions
		pmin, pmax := acts[0].Power, acts[0].Power
		for _, a := range acts {
			pmin, pmax = math.Min(pmin, a.Power), math.Max(pmax, a.Power)
		}
		lo, hi = lo+pmin, hi+pmax
		if !exact {
			continue
		}
		next := make(map[float64]bool, len(sums)*len(acts))
		for v := range sums {
			for _, a := range acts {
				next[v+a.Power] = true
			}
		}
		sums = next
		if len(sums) > maxDistinctDraws {
			exact = false
		}
	}
	if !exact {
		return []float64{lo, hi}, false
	}
	out := make([]float64, 0, len(sums))
	for v := range sums {
		out = append(out, v)
	}
	slices.Sort(out)
	return out, true
}

// LevelCaps returns the caps of home h's energy levels in window w,
// ascending. Level k means: in every slot of the window the home draws at
// most caps[k] (Fits). The caps are chosen from the draws the home can
// actually have, so a level is never looser than needed:
//
//   - the candidates are the achievable maxima of the window's draws — the
//     draws of its slots that are not below the largest minimum draw —
//     clamped at 0 (a home feeding power back commits to 0, never to a
//     negative cap, so that a looser cap always costs more peak);
//   - when there are at most n.Levels candidates, every one is a level and
//     the peak term is exact;
//   - otherwise the caps aim at n.Levels evenly spaced values from the
//     least to the greatest candidate and each is lowered to the greatest
//     candidate not above it (duplicates dropped, so there may be fewer).
//
// The last cap is the greatest possible draw, so every schedule fits some
// level.
func (n *Neighbourhood) LevelCaps(h, w int) []float64 {
	home := &n.Homes[h]
	win := n.Windows[w]
	floor := math.Inf(-1)
	var cand []float64
	exact := true
	for t := win.From; t < win.To; t++ {
		d, ok := home.SlotDraws(t)
		exact = exact && ok
		floor = math.Max(floor, d[0])
		cand = append(cand, d...)
	}
	var c []float64
	for _, v := range cand {
		if v >= floor {
			c = append(c, math.Max(v, 0))
		}
	}
	slices.Sort(c)
	c = mergeClose(c)
	k := max(n.Levels, 1)
	if !exact {
		lo, hi := c[0], c[len(c)-1]
		if k == 1 || hi == lo {
			return []float64{hi}
		}
		out := make([]float64, k)
		for i := range out {
			out[i] = lo + (hi-lo)*float64(i)/float64(k-1)
		}
		out[k-1] = hi
		return out
	}
	if len(c) <= k {
		return c
	}
	if k == 1 {
		return []float64{c[len(c)-1]}
	}
	lo, hi := c[0], c[len(c)-1]
	var out []float64
	for i := range k {
		target := lo + (hi-lo)*float64(i)/float64(k-1)
		if i == k-1 {
			target = hi
		}
		// The greatest candidate not above target.
		j, _ := slices.BinarySearch(c, target)
		if j == len(c) || c[j] > target && !near(c[j], target) {
			j--
		}
		j = max(j, 0)
		if len(out) == 0 || c[j] > out[len(out)-1] {
			out = append(out, c[j])
		}
	}
	return out
}

// mergeClose drops values within rounding error of the next one, keeping
// the larger, so that two schedules whose draws differ by float noise
// share a level.
func mergeClose(sorted []float64) []float64 {
	out := sorted[:0]
	for i, v := range sorted {
		if i+1 < len(sorted) && near(v, sorted[i+1]) {
			continue
		}
		out = append(out, v)
	}
	return out
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// Fits reports whether a draw respects a cap, allowing for float rounding.
func Fits(draw, limit float64) bool { return draw <= limit || near(draw, limit) }

// Tightest returns the lowest level whose cap the draw fits, or −1.
func Tightest(caps []float64, draw float64) int {
	for k, c := range caps {
		if Fits(draw, c) {
			return k
		}
	}
	return -1
}

// LevelLabels names the levels "lo-cap" in natural units, lo being the
// previous cap (0 for the first level): level k admits draws in (lo, cap].
func LevelLabels(caps []float64, u Units) []string {
	scale, unit := u.PowerScale, u.Power
	if scale == 0 {
		scale = 1
	}
	for prec := 2; ; prec++ {
		labels := make([]string, len(caps))
		seen := map[string]bool{}
		unique := true
		prev := 0.0
		for k, c := range caps {
			lo := math.Min(prev, c)
			if k == 0 {
				lo = math.Min(0, c)
			}
			labels[k] = strconv.FormatFloat(lo*scale, 'f', prec, 64) + "-" + strconv.FormatFloat(c*scale, 'f', prec, 64) + unit
			unique = unique && !seen[labels[k]]
			seen[labels[k]] = true
			prev = c
		}
		if unique || prec >= 12 {
			if !unique {
				for k := range labels {
					labels[k] += "#" + strconv.Itoa(k)
				}
			}
			return labels
		}
	}
}
