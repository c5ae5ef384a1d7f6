// Package devices is hearth's model of homes: actuators with actions, the
// properties they change (a water tank's temperature, an EV's charge), rules
// over those properties, time-of-use prices and background load, and a
// neighbourhood of homes that share a peak cost. The compiler in
// devices/compile turns a Neighbourhood into an mva.Problem; devices/shds
// imports the public SHDS data set into the same model; package config reads
// it from TOML.
//
// # Time
//
// A horizon has Slots slots of SlotMinutes minutes, or slots of their own
// lengths (Horizon.Lengths, fine first and coarse later). Every actuator
// picks one action per slot; an action draws Power (kW, the average over
// the slot) and changes properties by its Effects (natural units per slot
// of SlotMinutes; a slot of another length scales them, and the drift, by
// Horizon.Ratio, unless Action.ByLength gives the action's own effects for
// that length).
//
// A property's trajectory is a sequence of integer steps of the property's
// Scale (0.1 °C, 0.1 kWh, …): values, effects, drifts and goals are rounded
// to the nearest step once, when the model is analysed, so that `eq` is
// exact and the set of reachable values is finite. Index 0 is the initial
// value; index i ≥ 1 is
//
//	s(i) = s(i−1) + drift + Σ_a δ(a, x_a(slot(i)))
//
// summed over the actuators wired to the property (see Affects). Two
// dynamics fix slot(i) and the rule windows:
//
//   - Full (the default for TOML homes): indices are the slot boundaries
//     0..Slots; index i is the value after slot i−1, so every slot acts.
//     Rule times are boundaries: `before T` holds at some boundary in
//     [0, T], `after T` at some boundary in [T, Slots], `at T` at boundary
//     T, `within T1 T2` at every boundary in [T1, T2], a passive bound at
//     every boundary.
//   - SHDS (the data set and the SH-MGM simulator, notes/shds-model.md §2.4
//     and §3.3): indices 0..Slots−1, slot(i) = i, so slot 0's actions have
//     no effect and index Slots−1 is checked only by `before Slots`;
//     windows are half-open: passive [0, H−1), before [0, T), after
//     [T, H−1), at {T} (empty with AtVacuous, the simulator's bug I3),
//     within [T1, T2).
//
// `before`/`after` goals hold at *some* index of their window (ANY);
// `at`, `within` and passive bounds at *every* index (ALL). A rule is hard
// unless Rule.Soft: a soft rule excludes no schedule; what it misses by
// (Relation.Shortfall, in the property's unit: at the window's last index
// for a before/after goal that never held, summed over the window for the
// others) costs Weights.Miss per unit. SHDS rules are hard; TOML rules
// are soft unless written hard = true.
//
// # Load, price and peak
//
// A home's draw in slot t is its background load plus the power of the
// actions it runs. The objective of a neighbourhood is
//
//	Weights.Price · Σ_h Σ_t [ bill(t, draw_h(t)) + Σ_d CycleCost_d · |power_d(t)| ] · Δ
//	  + Weights.Miss · (what the soft rules and a soft feeder limit miss by)
//	  + Weights.Peak · Σ_w Σ_{t∈w} Δ² · [ Σ_h (cap_h,w + outside_h(t))² + Σ_{(h,g) linked} 2·cap_h,w·cap_g,w ]
//
// with Δ the slot length in hours (on uneven slots each slot's own Δ_t in
// the bill and cycling, and Δ_t·Δ_0 for Δ² in the peak term:
// Horizon.PeakHours) and bill(t, x) = price(t)·x, or
// ExportPrices(t)·x where the home feeds back (x < 0). cap_h,w is the level the home commits to
// in coordination window w: level k of a window means "in every slot of the
// window the home draws at most cap_k" (see LevelCaps). On a complete
// neighbour graph the bracket is (Σ_h cap_h,w)², the square of the
// neighbourhood's committed peak; outside_h is the fixed load of neighbours
// outside the problem (SH-MGM's N_i), nil normally.
package devices
