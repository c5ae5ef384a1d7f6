package config

import (
	"github.com/hearth-dcop/hearth/devices"
)

// meterKeys are a home's keys read here (docs/toml.md, "Home").
var meterKeys = []string{"prices", "grid", "pv_curtailable"}

// storageKeys are a device's keys read here (docs/toml.md, "[[device]]").
var storageKeys = []string{"charge_from_grid", "discharge_to_grid", "end_value"}

// meter reads a home's own connection: a [prices] table that replaces the
// street's tariff for this home, a [grid] table with its import and
// export limits, and pv_curtailable. A home with none of them has no
// devices.Meter and pays the street's tariff, as before.
func (r *homeReader) meter() {
	n := r.n
	m := &devices.Meter{}
	used := false
	if t, ok := n.table("prices"); ok {
		used = true
		for _, k := range []string{"currency", "import_file", "export_file"} {
			if t.has(k) {
				t.errorf(k, "%s is the street's: a home's own [prices] gives per_slot or default/periods and export_per_slot or export_default", k)
			}
		}
		m.Prices = make([]float64, r.hz.Slots)
		for i := range m.Prices {
			m.Prices[i] = DefaultPrice
		}
		m.ExportPrices = r.l.tariff(t, m.Prices, r.ck)
		t.done("per_slot", "default", "periods", "export_per_slot", "export_default", "currency", "import_file", "export_file")
	}
	if t, ok := n.table("grid"); ok {
		used = true
		for _, lim := range []struct {
			key string
			dst *float64
		}{{"import_limit_kw", &m.ImportLimit}, {"export_limit_kw", &m.ExportLimit}} {
			v, ok := t.num(lim.key)
			if !ok {
				continue
			}
			if !(v > 0) || v > 1e6 {
				t.errorf(lim.key, "%s = %g: want a positive power in kW (leave the key out for no limit)", lim.key, v)
				continue
			}
			*lim.dst = v
		}
		if v, ok := t.boolean("hard"); ok {
			m.HardLimits = v
		}
		t.done("import_limit_kw", "export_limit_kw", "hard")
	}
	if v, ok := n.boolean("pv_curtailable"); ok && v {
		used = true
		if r.hs.pv == nil {
			n.errorf("pv_curtailable", "pv_curtailable needs the home's PV forecast, pv_kw")
		} else {
			m.Curtail = append([]float64(nil), r.hs.pv...)
		}
	}
	if used {
		r.h.Meter = m
	}
}

// storage reads a device's grid permissions and the value of what it
// stores at the horizon's end. end_value needs a storage: a home_battery
// (its soc), an EV wallbox (its charge) or a custom device that stores
// one property with a range; it is that property's worth per unit left
// at the last slot boundary.
func (r *homeReader) storage(n *node, dev *devices.Device, props []devices.Property) {
	if v, ok := n.boolean("charge_from_grid"); ok {
		dev.NoGridCharge = !v
	}
	if v, ok := n.boolean("discharge_to_grid"); ok {
		dev.NoGridDischarge = !v
	}
	v, ok := n.num("end_value")
	if !ok {
		return
	}
	if v < -1e6 || v > 1e6 {
		n.errorf("end_value", "end_value = %g: want a value per kWh left in storage (currency per kWh)", v)
		return
	}
	if _, storage := devices.SizingDefaults(dev.Kind); dev.Kind != "" && !storage {
		n.errorf("end_value", "a %s stores no energy; end_value applies to a storage (a home_battery, an EV wallbox, a custom device with range)", dev.Kind)
		return
	}
	stored := -1
	for i := range props {
		if props[i].Min != nil || props[i].Max != nil {
			if stored >= 0 {
				n.errorf("end_value", "the device stores more than one property; end_value applies to a storage (a home_battery, an EV wallbox)")
				return
			}
			stored = i
		}
	}
	if stored < 0 {
		n.errorf("end_value", "the device stores nothing with a physical range; end_value applies to a storage (a home_battery, an EV wallbox, a custom device with range)")
		return
	}
	props[stored].EndValue = v
}
