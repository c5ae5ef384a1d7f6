// Package testhomes generates small seeded random neighbourhoods for the
// tests of package devices and its compiler: few slots, few devices with
// two or three actions, random rules of every prefix and relation, so
// that schedules can be enumerated exhaustively.
package testhomes

import (
	"fmt"
	"math/rand/v2"

	"github.com/hearth-dcop/hearth/devices"
)

// Options size a random neighbourhood.
type Options struct {
	Homes   int
	Slots   int
	Devices int // per home, at most
	Actions int // per device, at most (2 or 3)
	// Dynamics picks SHDS dynamics for odd seeds when Mixed is set.
	Mixed bool
	// Feeder draws a feeder limit for some seeds.
	Feeder bool
	// Soft makes about half the rules soft (devices.Rule.Soft) with a
	// small miss penalty, so that missing a goal competes with the bill;
	// and draws export prices, cycle costs, physical ranges and a soft
	// feeder limit. Its draws come from a stream of their own, so the
	// neighbourhood is otherwise the one drawn without it.
	Soft bool
	// Uneven gives full-dynamics neighbourhoods slots of different
	// lengths (devices.Horizon.Lengths: the first slot's length, twice
	// it or half it) and some actions effects of their own for a length
	// (devices.Action.ByLength). Its draws come from a stream of their
	// own, as Soft's.
	Uneven bool
	// Away makes about three in four devices with an idle action leave in
	// about a third of the slots (devices.Device.Away: an EV outside its
	// plugged-in window), and three in four of those under full dynamics come
	// back with a charge of their own (devices.Property.Reset). Its
	// draws come from a stream of their own.
	Away bool
}

// Random returns a valid neighbourhood drawn from seed.
func Random(seed uint64, o Options) *devices.Neighbourhood {
	rng := rand.New(rand.NewPCG(seed, 0x40e5))
	hz := devices.Horizon{Slots: o.Slots, SlotMinutes: 60}
	if o.Mixed && seed%2 == 1 {
		hz.Dynamics = devices.SHDS
	}
	if rng.IntN(3) == 0 {
		hz.SlotMinutes = 30
	}
	n := &devices.Neighbourhood{
		Name:    fmt.Sprintf("random-%d", seed),
		Horizon: hz,
		Levels:  1 + rng.IntN(3),
		Weights: devices.Weights{Price: 1, Peak: float64(rng.IntN(4)) * 0.25},
		Units:   devices.Units{Power: "kW", PowerScale: 1, Currency: "$", PriceScale: 1},
	}
	for range o.Slots {
		n.Prices = append(n.Prices, 0.1+0.1*float64(rng.IntN(5)))
	}
	// One or two windows over a prefix or the whole horizon.
	cut := 1 + rng.IntN(o.Slots)
	n.Windows = append(n.Windows, devices.Window{From: 0, To: cut})
	if cut < o.Slots && rng.IntN(2) == 0 {
		n.Windows = append(n.Windows, devices.Window{From: cut, To: o.Slots})
	}
	for h := range o.Homes {
		n.Homes = append(n.Homes, home(rng, fmt.Sprintf("h%d", h), hz, o))
	}
	if o.Homes > 2 && rng.IntN(2) == 0 {
		n.Links = [][2]int{{0, 1}, {1, 2}}
	}
	if o.Feeder && rng.IntN(2) == 0 {
		n.FeederLimit = 1 + float64(rng.IntN(6*o.Homes))
	}
	if o.Soft {
		soften(rand.New(rand.NewPCG(seed, 0x50f7)), n)
	}
	if o.Uneven && n.Horizon.Dynamics == devices.Full {
		uneven(rand.New(rand.NewPCG(seed, 0x0e7e)), n)
	}
	if o.Away {
		away(rand.New(rand.NewPCG(seed, 0xa3a7)), n)
	}
	if err := n.Validate(); err != nil {
		panic(fmt.Sprintf("testhomes: seed %d: %v", seed, err))
	}
	return n
}

// away draws the Away option's slots away.
func away(rng *rand.Rand, n *devices.Neighbourhood) {
	for hi := range n.Homes {
		for d := range n.Homes[hi].Devices {
			dev := &n.Homes[hi].Devices[d]
			if dev.Idle() < 0 || rng.IntN(4) == 0 {
				continue
			}
			dev.Away = make([]bool, n.Horizon.Slots)
			for t := range dev.Away {
				dev.Away[t] = rng.IntN(3) == 0
			}
			// Under full dynamics, three in four come back with a
			// charge of their own (devices.Property.Reset) to the
			// property they alone keep, at each arrival.
			pi := n.Homes[hi].Property(dev.Name, "p")
			if n.Horizon.Dynamics != devices.Full || pi < 0 || rng.IntN(4) == 0 {
				continue
			}
			p := &n.Homes[hi].Properties[pi]
			v := float64(rng.IntN(4)) * p.Scale
			for i := 1; i < len(dev.Away); i++ {
				if dev.Away[i-1] && !dev.Away[i] {
					if p.Reset == nil {
						p.Reset = map[int]float64{}
					}
					p.Reset[i] = v
				}
			}
		}
	}
}

// uneven draws the Uneven option's slot lengths and per-length effects.
func uneven(rng *rand.Rand, n *devices.Neighbourhood) {
	hz := &n.Horizon
	m := hz.SlotMinutes
	hz.Lengths = []int{m}
	for range hz.Slots - 1 {
		hz.Lengths = append(hz.Lengths, []int{m, 2 * m, m / 2}[rng.IntN(3)])
	}
	for hi := range n.Homes {
		for d := range n.Homes[hi].Devices {
			for a := range n.Homes[hi].Devices[d].Actions {
				act := &n.Homes[hi].Devices[d].Actions[a]
				if len(act.Effects) == 0 || rng.IntN(3) != 0 {
					continue
				}
				// Its own effects for slots of twice the length, as a
				// storage's rounding gives (Entry.Instantiate).
				var own []devices.Effect
				for _, e := range act.Effects {
					own = append(own, devices.Effect{Property: e.Property, Delta: 2*e.Delta - float64(rng.IntN(2))})
				}
				act.ByLength = map[int][]devices.Effect{2 * m: own}
			}
		}
	}
}

// soften draws the Soft options' extras.
func soften(rng *rand.Rand, n *devices.Neighbourhood) {
	n.Weights.Miss = 0.25 * float64(1+rng.IntN(8))
	if rng.IntN(2) == 0 {
		for _, p := range n.Prices {
			n.ExportPrices = append(n.ExportPrices, p*0.25*float64(rng.IntN(5)))
		}
	}
	n.FeederSoft = rng.IntN(2) == 0
	for hi := range n.Homes {
		h := &n.Homes[hi]
		for ri := range h.Rules {
			h.Rules[ri].Soft = rng.IntN(2) == 0
		}
		for d := range h.Devices {
			if rng.IntN(3) == 0 {
				h.Devices[d].CycleCost = 0.05 * float64(rng.IntN(3))
			}
		}
		for pi := range h.Properties {
			p := &h.Properties[pi]
			if rng.IntN(2) == 0 && affected(h, *p) {
				lo := p.Initial - p.Scale*float64(rng.IntN(6))
				hi := p.Initial + p.Scale*float64(rng.IntN(6))
				p.Min, p.Max = &lo, &hi
				// The range is physics: hard bounds, as the loader adds them.
				for _, b := range []devices.Rule{{Rel: devices.Geq, Goal: lo}, {Rel: devices.Leq, Goal: hi}} {
					b.Location, b.Property = p.Location, p.Name
					b.Text = b.String() + " (range)"
					h.Rules = append(h.Rules, b)
				}
			}
		}
	}
}

func home(rng *rand.Rand, name string, hz devices.Horizon, o Options) devices.Home {
	h := devices.Home{Name: name}
	for range hz.Slots {
		h.Background = append(h.Background, 0.1*float64(rng.IntN(6)))
	}
	if rng.IntN(4) == 0 {
		for range hz.Slots {
			h.OutsideLoad = append(h.OutsideLoad, 0.5*float64(rng.IntN(4)))
		}
	}
	nd := 1 + rng.IntN(o.Devices)
	for d := range nd {
		dev := devices.Device{Name: fmt.Sprintf("d%d", d), Location: fmt.Sprintf("d%d", d)}
		shared := d > 0 && rng.IntN(3) == 0
		if shared {
			dev.Location = "room"
		}
		na := 2 + rng.IntN(o.Actions-1)
		for a := range na {
			act := devices.Action{Name: fmt.Sprintf("a%d", a), Power: 0.5 * float64(rng.IntN(5))}
			if a == 0 {
				act.Power = 0
				if rng.IntN(4) == 0 {
					act.Power = -1 // a battery-like device may feed the home
				}
			}
			prop := "p"
			if shared {
				prop = "temp"
			}
			if a > 0 || rng.IntN(2) == 0 {
				act.Effects = append(act.Effects, devices.Effect{Property: prop, Delta: float64(rng.IntN(7) - 2)})
			}
			if shared && rng.IntN(2) == 0 {
				// The device also moves its own property: two models share it.
				act.Effects = append(act.Effects, devices.Effect{Property: "p", Delta: float64(rng.IntN(5) - 1)})
			}
			dev.Actions = append(dev.Actions, act)
		}
		devices.SortActions(dev.Actions)
		h.Devices = append(h.Devices, dev)
		if h.Property(dev.Name, "p") < 0 {
			h.Properties = append(h.Properties, devices.Property{Location: dev.Name, Name: "p", Initial: float64(rng.IntN(4)), Drift: float64(rng.IntN(2)) * -1, Scale: 1})
		}
		if shared && h.Property("room", "temp") < 0 {
			h.Properties = append(h.Properties, devices.Property{Location: "room", Name: "temp", Initial: 2, Drift: -1, Scale: 0.5})
		}
	}
	rels := []devices.Relation{devices.Eq, devices.Neq, devices.Lt, devices.Leq, devices.Gt, devices.Geq}
	for _, p := range h.Properties {
		if !affected(&h, p) || rng.IntN(4) == 0 {
			continue
		}
		for range 1 + rng.IntN(2) {
			r := devices.Rule{Location: p.Location, Property: p.Name, Rel: rels[rng.IntN(len(rels))], Goal: float64(rng.IntN(9)) * p.Scale * 2}
			r.Prefix = devices.Prefix(rng.IntN(5))
			r.T1, r.T2 = times(rng, hz, r.Prefix)
			r.Text = r.String()
			h.Rules = append(h.Rules, r)
		}
	}
	return h
}

func affected(h *devices.Home, p devices.Property) bool {
	for i := range h.Devices {
		if h.Devices[i].Affects(p.Location, p.Name) {
			return true
		}
	}
	return false
}

// times draws a valid time for the prefix.
func times(rng *rand.Rand, hz devices.Horizon, pf devices.Prefix) (int, int) {
	H := hz.Slots
	if hz.Dynamics == devices.SHDS {
		switch pf {
		case devices.Before:
			return 1 + rng.IntN(H), 0
		case devices.After:
			return rng.IntN(H - 1), 0
		case devices.At:
			return rng.IntN(H), 0
		case devices.Within:
			a := rng.IntN(H)
			return a, a + 1 + rng.IntN(H-a)
		}
		return 0, 0
	}
	switch pf {
	case devices.Within:
		a := rng.IntN(H + 1)
		return a, a + rng.IntN(H+1-a)
	case devices.Passive:
		return 0, 0
	}
	return rng.IntN(H + 1), 0
}

// Schedules calls f with every schedule of home h of n (tightest levels).
func Schedules(n *devices.Neighbourhood, h int, f func(devices.HomeSchedule)) {
	home := &n.Homes[h]
	var vars [][2]int
	for d := range home.Devices {
		for t := range n.Horizon.Slots {
			vars = append(vars, [2]int{d, t})
		}
	}
	s := devices.HomeSchedule{Actions: make([][]int, len(home.Devices))}
	for d := range home.Devices {
		s.Actions[d] = make([]int, n.Horizon.Slots)
	}
	var rec func(i int)
	rec = func(i int) {
		if i == len(vars) {
			f(s)
			return
		}
		d, t := vars[i][0], vars[i][1]
		for a := range home.Devices[d].Actions {
			s.Actions[d][t] = a
			rec(i + 1)
		}
	}
	rec(0)
}

// RandomSchedule draws a schedule with random actions and, half of the
// time, random levels.
func RandomSchedule(rng *rand.Rand, n *devices.Neighbourhood) *devices.Schedule {
	s := &devices.Schedule{Homes: make([]devices.HomeSchedule, len(n.Homes))}
	for hi := range n.Homes {
		h := &n.Homes[hi]
		hs := &s.Homes[hi]
		hs.Actions = make([][]int, len(h.Devices))
		for d := range h.Devices {
			hs.Actions[d] = make([]int, n.Horizon.Slots)
			for t := range hs.Actions[d] {
				hs.Actions[d][t] = rng.IntN(len(h.Devices[d].Actions))
			}
		}
		if rng.IntN(2) == 0 {
			hs.Levels = make([]int, len(n.Windows))
			for w := range hs.Levels {
				hs.Levels[w] = rng.IntN(len(n.LevelCaps(hi, w)))
			}
		}
	}
	return s
}
