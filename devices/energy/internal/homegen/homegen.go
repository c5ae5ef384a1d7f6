// Package homegen generates seeded random energy homes for the planner's
// tests and benchmarks: PV, one to three home batteries, an EV with a
// plugged-in window and goals, time-of-use import and export prices,
// limits, permissions, and quarter-hour, hourly or mixed slots.
package homegen

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hearth-dcop/hearth/devices/energy"
)

// Shape picks the slots.
type Shape int

// The slot shapes.
const (
	Hourly  Shape = iota // 24 one-hour slots
	Quarter              // 48 quarter-hour slots (12 h)
	Mixed                // 16 quarter-hours, then 20 hours
	Day96                // 96 quarter-hour slots (a day)
)

// Home returns a random home for seed.
func Home(seed uint64, shape Shape) *energy.Home {
	r := rand.New(rand.NewPCG(seed, 0x17))
	h := &energy.Home{Name: fmt.Sprintf("gen%d", seed), Wear: -1}
	switch shape {
	case Hourly:
		h.Dt = fill(24, 1)
	case Quarter:
		h.Dt = fill(48, 0.25)
	case Mixed:
		h.Dt = append(fill(16, 0.25), fill(20, 1)...)
	case Day96:
		h.Dt = fill(96, 0.25)
	}
	T := len(h.Dt)
	// Clock hour at the middle of each slot, starting at a random hour.
	start := float64(r.IntN(24))
	hour := make([]float64, T)
	at := start
	for t, d := range h.Dt {
		hour[t] = math.Mod(at+d/2, 24)
		at += d
	}
	base := 0.2 + r.Float64()*0.6
	h.Load = make([]float64, T)
	h.Tariff.Import = make([]float64, T)
	h.Tariff.Export = make([]float64, T)
	peakPV := 0.0
	if r.Float64() < 0.85 {
		peakPV = 2 + r.Float64()*8
	}
	pv := energy.PV{Name: "roof", Forecast: make([]float64, T), Curtailable: r.Float64() < 0.5}
	exportBase := r.Float64() * 0.1
	for t := range T {
		x := hour[t]
		h.Load[t] = round(base+0.8*bump(x, 7.5, 1.5)+1.2*bump(x, 19, 2)+0.2*r.Float64(), 3)
		p := 0.22 + 0.1*r.Float64()
		switch {
		case x >= 17 && x < 21:
			p += 0.15
		case x >= 23 || x < 6:
			p -= 0.1
		}
		h.Tariff.Import[t] = round(p, 4)
		sun := math.Max(0, math.Sin(math.Pi*(x-6)/14))
		pv.Forecast[t] = round(peakPV*sun*(0.7+0.3*r.Float64()), 3)
		e := exportBase
		if sun > 0.8 && r.Float64() < 0.15 {
			e = -0.02 // a negative midday export price
		}
		h.Tariff.Export[t] = math.Min(round(e, 4), h.Tariff.Import[t])
	}
	if peakPV > 0 {
		h.PV = append(h.PV, pv)
	}
	nb := 1 + r.IntN(3)
	for b := range nb {
		cp := 4 + r.Float64()*12
		s := energy.Storage{
			Name: fmt.Sprintf("battery%d", b), Capacity: cp, Max: round(cp, 2), Min: round(cp*0.1*r.Float64(), 2),
			MaxCharge: round(1.5+r.Float64()*4, 2), EtaC: round(0.9+0.08*r.Float64(), 3), EtaD: round(0.9+0.08*r.Float64(), 3),
			EndValue: round(0.05+0.12*r.Float64(), 3),
		}
		s.MaxDischarge = round(s.MaxCharge*(0.8+0.4*r.Float64()), 2)
		s.Initial = round(s.Min+(s.Max-s.Min)*r.Float64(), 2)
		s.NoGridCharge = r.Float64() < 0.2
		s.NoGridDischarge = r.Float64() < 0.3
		if r.Float64() < 0.3 {
			s.Goals = append(s.Goals, energy.Goal{Index: 1 + r.IntN(T), Energy: round(s.Min+(s.Max-s.Min)*r.Float64(), 2), Text: "reserve"})
		}
		h.Storage = append(h.Storage, s)
	}
	cp := 40 + r.Float64()*40
	ev := energy.Storage{
		Name: "ev", Capacity: cp, Max: round(cp, 1), MaxCharge: []float64{3.7, 7.4, 11}[r.IntN(3)],
		MinCharge: 1.4, EtaC: 0.9, EtaD: 1, Initial: round(cp*(0.1+0.4*r.Float64()), 1),
		EndValue: round(0.1*r.Float64(), 3), Available: make([]bool, T),
	}
	from, to := r.IntN(T/2), T/2+r.IntN(T/2)
	for t := from; t <= to && t < T; t++ {
		ev.Available[t] = true
	}
	goal := ev.Initial + (ev.Max-ev.Initial)*(0.2+0.9*r.Float64())
	ev.Goals = append(ev.Goals, energy.Goal{Index: min(to+1, T), Energy: round(math.Min(goal, ev.Max), 1), Text: "departure"})
	if r.Float64() < 0.3 {
		ev.Goals = append(ev.Goals, energy.Goal{Index: min(from+2, T), Energy: round(ev.Initial+3, 1), Text: "early"})
	}
	h.Storage = append(h.Storage, ev)
	if r.Float64() < 0.5 {
		h.Grid.ImportLimit = round(6+r.Float64()*10, 1)
	}
	if r.Float64() < 0.5 && peakPV > 0 {
		h.Grid.ExportLimit = round(2+r.Float64()*4, 1)
	}
	if r.Float64() < 0.15 {
		h.Grid.DemandCharge = round(0.2+r.Float64()*0.5, 2)
		h.Grid.DemandThreshold = round(2+r.Float64()*3, 1)
	}
	return h
}

// Trips returns Home(seed, shape) with its EV away twice: plugged in
// from the start to a first departure, back at an arrival with a charge
// of its own (energy.Storage.Arrivals), away again, and back for the
// horizon's end with another. Its goals are at each departure, soft or
// hard, counting from what it came back with; some ask more than a
// stretch can charge (a soft miss, or on a hard goal an infeasible home),
// and some arrivals bring more than the goal after them.
func Trips(seed uint64, shape Shape) *energy.Home {
	h := Home(seed, shape)
	r := rand.New(rand.NewPCG(seed, 0x18))
	ev := &h.Storage[len(h.Storage)-1]
	T := len(h.Dt)
	// Cuts: leave1 < back1 < leave2 < back2 < T.
	q := T / 5
	leave1 := 1 + r.IntN(q)
	back1 := leave1 + 1 + r.IntN(q)
	leave2 := back1 + 1 + r.IntN(q)
	back2 := leave2 + 1 + r.IntN(q)
	ev.Available = make([]bool, T)
	for t := range T {
		ev.Available[t] = t < leave1 || t >= back1 && t < leave2 || t >= back2
	}
	charge := func() float64 { return round(ev.Max*(0.05+0.6*r.Float64()), 1) }
	ev.Arrivals = []energy.Arrival{{Index: back1, Energy: charge()}, {Index: back2, Energy: charge()}}
	ev.Goals = nil
	for k, at := range []int{leave1, leave2, T} {
		from := ev.Initial
		if k > 0 {
			from = ev.Arrivals[k-1].Energy
		}
		g := energy.Goal{Index: at, Energy: round(math.Min(from+ev.Max*(0.6*r.Float64()-0.05), ev.Max), 1), Text: fmt.Sprintf("departure %d", k)}
		g.Hard = r.IntN(6) == 0
		ev.Goals = append(ev.Goals, g)
	}
	return h
}

func fill(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func bump(x, mu, sd float64) float64 { return math.Exp(-(x - mu) * (x - mu) / (2 * sd * sd)) }

func round(v float64, dec int) float64 {
	p := math.Pow(10, float64(dec))
	return math.Round(v*p) / p
}
