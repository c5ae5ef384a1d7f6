package testhomes

import (
	"math/rand/v2"

	"github.com/hearth-dcop/hearth/devices"
)

// WithMeters gives each home of n, at random, a meter (devices.Meter):
// its own import and export prices (export prices below import, some
// negative), soft or hard import and export limits, PV netted out of its
// background and curtailable, grid permissions on its devices, and an
// end value on properties with a physical range (Soft draws those). A
// home may get none of it. The result stays valid.
func WithMeters(rng *rand.Rand, n *devices.Neighbourhood) {
	H := n.Horizon.Slots
	for hi := range n.Homes {
		h := &n.Homes[hi]
		for pi := range h.Properties {
			if p := &h.Properties[pi]; p.Min != nil && rng.IntN(4) != 0 && n.Horizon.Dynamics == devices.Full {
				p.EndValue = 0.1 * float64(1+rng.IntN(3))
			}
		}
		if rng.IntN(4) == 0 {
			continue
		}
		m := &devices.Meter{}
		if rng.IntN(2) == 0 {
			for range H {
				p := 0.1 + 0.1*float64(rng.IntN(5))
				m.Prices = append(m.Prices, p)
				m.ExportPrices = append(m.ExportPrices, p*0.25*float64(rng.IntN(5))-0.05*float64(rng.IntN(3)))
			}
		}
		if rng.IntN(2) == 0 {
			m.ImportLimit = 0.5 * float64(1+rng.IntN(3))
		}
		if rng.IntN(2) == 0 {
			m.ExportLimit = 0.5 * float64(1+rng.IntN(3))
		}
		m.HardLimits = rng.IntN(3) == 0
		if rng.IntN(2) == 0 {
			m.Curtail = make([]float64, H)
			for t := range H {
				m.Curtail[t] = 0.5 * float64(rng.IntN(7))
				h.Background[t] -= m.Curtail[t]
			}
		}
		h.Meter = m
		for d := range h.Devices {
			h.Devices[d].NoGridCharge = rng.IntN(5) == 0
			h.Devices[d].NoGridDischarge = rng.IntN(5) == 0
		}
	}
	if err := n.Validate(); err != nil {
		panic("testhomes: meters: " + err.Error())
	}
}
