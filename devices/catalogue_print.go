package devices

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteCatalogue prints every catalogue entry with its actions (power in
// kW, effects per hour) and the properties it brings (initial value,
// drift per hour, physical range), the text of `hearth help devices`.
// The figures are the defaults a TOML home changes with `initial`,
// `drift` and `resolution` (docs/toml.md).
func WriteCatalogue(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "Device kinds (kind = \"…\" in a [[device]] table). Power in kW, effects per hour.")
	fmt.Fprintln(tw, "A battery's and an EV charger's actions below are the catalogue's fixed levels (power_steps = \"fixed\");")
	fmt.Fprintln(tw, "by default a compiled home outside a [live] street plans them in levels chosen from the device (power_steps =")
	fmt.Fprintln(tw, "\"auto\": a wallbox's 1 A steps from 6 A, a battery's steps of whole quanta of energy; docs/toml.md, \"Automatic levels\").")
	for _, kind := range Kinds() {
		e, err := Lookup(kind, "")
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "\n%s\t%s\n", e.Kind, e.Description)
		for _, a := range e.Actions {
			var eff []string
			for _, x := range a.Effects {
				eff = append(eff, fmt.Sprintf("%s %+g", x.Property, x.Delta))
			}
			fmt.Fprintf(tw, "  action %s\t%g kW\t%s\n", a.Name, a.Power, strings.Join(eff, ", "))
		}
		if sz, ok := SizingDefaults(kind); ok {
			fmt.Fprintf(tw, "  parameters\tcapacity_kwh = %g, max_charge_kw = %g, min_charge_kw = %g, charge_efficiency = %g", sz.CapacityKWh, sz.MaxChargeKW, sz.MinChargeKW, sz.ChargeEff)
			if sz.MaxDischargeKW > 0 {
				fmt.Fprintf(tw, ", max_discharge_kw = %g, discharge_efficiency = %g, reserve_kwh = 0", sz.MaxDischargeKW, sz.DischargeEff)
			}
			fmt.Fprintf(tw, ", power_steps = \"auto\" (levels from the device's currents or quanta; \"fixed\": the actions above, or %d evenly spaced with other parameters; or 1 to 16 levels), cycle_cost = %g (defaults)\n", sz.Steps, e.CycleCost)
			fmt.Fprintf(tw, "  storage\tend_value = 0 (currency per kWh left at the end), charge_from_grid = true")
			if sz.MaxDischargeKW > 0 {
				fmt.Fprintf(tw, ", discharge_to_grid = true")
			}
			fmt.Fprintf(tw, " (defaults)\n")
			if strings.HasPrefix(e.Kind, "ev_") {
				fmt.Fprintf(tw, "  window\tarrival = \"HH:MM\", departure = \"HH:MM\": the car's daily plugged-in window, off while away (default: always plugged in); arrival_charge = kWh or \"N%%\": what it comes back with\n")
			}
		}
		for _, p := range e.Properties {
			rng := "no physical range"
			switch {
			case p.Min != nil && p.Max != nil:
				rng = fmt.Sprintf("range [%g, %g], always enforced", *p.Min, *p.Max)
			case p.Min != nil:
				rng = fmt.Sprintf("≥ %g, always enforced", *p.Min)
			case p.Max != nil:
				rng = fmt.Sprintf("≤ %g, always enforced", *p.Max)
			}
			at := "the device"
			if p.At != "" {
				at = "location " + p.At
			}
			fmt.Fprintf(tw, "  property %s (%s)\t%s\tinitial %s, drift %s/h, resolution %s, %s\n", p.Name, at, p.Unit,
				strconv.FormatFloat(p.Initial, 'g', -1, 64), strconv.FormatFloat(p.Drift, 'g', -1, 64), strconv.FormatFloat(p.Scale, 'g', -1, 64), rng)
		}
	}
	fmt.Fprintln(tw, "\nA home's own meter: [prices] (its tariff), [grid] import_limit_kw, export_limit_kw, hard, demand_charge, demand_threshold_kw, and pv_curtailable = true (docs/toml.md).")
	return tw.Flush()
}
