package devices

// The built-in appliance models. Figures are typical values with the
// reasoning or public source behind them; a home that knows its own
// appliance should describe it as a custom device instead. Power is the
// average draw over a slot while the action runs; effects are per hour.
//
// Progress properties (dishwasher, washer, dryer) count percent of one
// programme: a rule such as `dishwasher progress geq 100 before 07:00`
// asks for a whole programme by 07:00. The model lets a programme pause
// between slots, which real appliances tolerate only at some stages; use
// slots of the programme's length when that matters.
var builtin = []Entry{
	{
		// Single-phase wallbox: 230 V × 32 A = 7.36 kW, the usual home
		// maximum on one phase (IEC 61851-1 mode 3); 230 V × 16 A =
		// 3.7 kW is the reduced rate. AC charging loses roughly 10 %
		// between the wall and the battery (on-board charger and battery);
		// we use 89 % so that the half rate adds exactly half (3.3 and
		// 6.6 kWh per hour), which keeps the charge lattice — and the
		// state variables — small. 60 kWh is a common mid-size EV battery
		// (e.g. VW ID.3 Pro 58 kWh, Tesla Model 3 RWD about 60 kWh
		// usable).
		Kind:        "ev_wallbox_7kw",
		Description: "EV charger, single-phase 7.4 kW wallbox, 60 kWh car",
		Actions: []Action{
			{Name: "off"},
			{Name: "charge_16a", Power: 3.7, Effects: []Effect{{"charge", 3.3}}},
			{Name: "charge_32a", Power: 7.4, Effects: []Effect{{"charge", 6.6}}},
		},
		Properties: []EntryProperty{{Name: "charge", Unit: "kWh", Initial: 20, Scale: 0.1, Min: bound(0), Max: bound(60)}},
	},
	{
		// Three-phase wallbox: √3 × 400 V × 16 A = 11.1 kW (the common
		// 11 kW home unit); 3 × 8 A gives 5.5 kW. Same 89 % charging
		// efficiency (4.9 and 9.8 kWh per hour) and 60 kWh battery as
		// above.
		Kind:        "ev_wallbox_11kw",
		Description: "EV charger, three-phase 11 kW wallbox, 60 kWh car",
		Actions: []Action{
			{Name: "off"},
			{Name: "charge_8a", Power: 5.5, Effects: []Effect{{"charge", 4.9}}},
			{Name: "charge_16a", Power: 11.0, Effects: []Effect{{"charge", 9.8}}},
		},
		Properties: []EntryProperty{{Name: "charge", Unit: "kWh", Initial: 20, Scale: 0.1, Min: bound(0), Max: bound(60)}},
	},
	{
		// 200 L heat-pump water heater. Heating 200 kg of water by 1 K
		// takes 200 × 4.186 kJ = 0.2326 kWh. The compressor draws about
		// 0.5 kW at a COP near 3 (typical of integrated heat-pump water
		// heaters at 15–20 °C air), i.e. 1.5 kW of heat: +6.45 K/h, which
		// we round to 6.4. The boost adds a 2 kW resistive element: 3.5 kW
		// of heat for 2.5 kW, +15.05 K/h, rounded to 15. A standing loss
		// of about 1.6 kWh/day (EU ErP labels of 200 L tanks are around
		// 60–70 W) cools it by about 0.3 K/h;
		// hot-water draws are not modelled (express them as rules). 65 °C
		// is a usual heat-pump maximum.
		Kind:        "hp_water_heater",
		Description: "heat-pump water heater, 200 L tank",
		Actions: []Action{
			{Name: "off"},
			{Name: "heat_pump", Power: 0.5, Effects: []Effect{{"water_temp", 6.4}}},
			{Name: "boost", Power: 2.5, Effects: []Effect{{"water_temp", 15}}},
		},
		Properties: []EntryProperty{{Name: "water_temp", Unit: "°C", Initial: 50, Drift: -0.3, Scale: 0.1, Min: bound(10), Max: bound(65)}},
	},
	{
		// Dishwasher: a programme takes about 2 h and 1.0–1.5 kWh (EU
		// energy-label eco programmes for 12–14 place settings use about
		// 0.75–1.0 kWh, normal programmes 1.0–1.5 kWh); 0.7 kW for two
		// hours is 1.4 kWh.
		Kind:        "dishwasher",
		Description: "dishwasher, 2 h programme, 1.4 kWh",
		Actions: []Action{
			{Name: "off"},
			{Name: "run", Power: 0.7, Effects: []Effect{{"progress", 50}}},
		},
		Properties: []EntryProperty{{Name: "progress", Unit: "%", Scale: 0.5, Min: bound(0), Max: bound(100)}},
	},
	{
		// Washing machine, 40–60 °C cotton: about 0.6–1.0 kWh per 2 h
		// programme (EU energy-label figures for 8 kg machines are
		// 0.5–0.9 kWh per eco 40-60 cycle); 0.45 kW for two hours is
		// 0.9 kWh.
		Kind:        "washer",
		Description: "washing machine, 2 h programme, 0.9 kWh",
		Actions: []Action{
			{Name: "off"},
			{Name: "run", Power: 0.45, Effects: []Effect{{"progress", 50}}},
		},
		Properties: []EntryProperty{{Name: "progress", Unit: "%", Scale: 0.5, Min: bound(0), Max: bound(100)}},
	},
	{
		// Heat-pump tumble dryer: about 1–2 kWh per full 8 kg load in
		// about 2 h (vented and condenser dryers use 3–5 kWh); 0.8 kW for
		// two hours is 1.6 kWh.
		Kind:        "dryer",
		Description: "heat-pump tumble dryer, 2 h programme, 1.6 kWh",
		Actions: []Action{
			{Name: "off"},
			{Name: "run", Power: 0.8, Effects: []Effect{{"progress", 50}}},
		},
		Properties: []EntryProperty{{Name: "progress", Unit: "%", Scale: 0.5, Min: bound(0), Max: bound(100)}},
	},
	{
		// Electric oven: a 2.5–3.5 kW element cycles on its thermostat,
		// so an hour of baking averages about 1.1 kWh (EU energy-label
		// standard loads take 0.7–1.1 kWh); grilling keeps the element on
		// longer, about 2 kW, and cooks faster. bake counts minutes of
		// cooking, as in SHDS.
		Kind:        "oven",
		Description: "electric oven",
		Actions: []Action{
			{Name: "off"},
			{Name: "bake", Power: 1.1, Effects: []Effect{{"bake", 60}}},
			{Name: "grill", Power: 2.0, Effects: []Effect{{"bake", 75}}},
		},
		Properties: []EntryProperty{{Name: "bake", Unit: "min", Scale: 1, Min: bound(0)}},
	},
	{
		// Home battery with the figures of the Tesla Powerwall 2 data
		// sheet: 13.5 kWh usable, 5 kW continuous, 90 % round trip,
		// i.e. about 95 % each way: charging at 5 kW stores 4.75 kWh per
		// hour, discharging 5 kW into the home takes 5.26 kWh out. A
		// discharging battery has a negative draw; a home's committed
		// cap never goes below 0 (see LevelCaps).
		Kind:        "home_battery",
		Description: "home battery, 13.5 kWh, 5 kW",
		Actions: []Action{
			{Name: "discharge", Power: -5, Effects: []Effect{{"soc", -5.26}}},
			{Name: "idle"},
			{Name: "charge", Power: 5, Effects: []Effect{{"soc", 4.75}}},
		},
		Properties: []EntryProperty{{Name: "soc", Unit: "kWh", Initial: 6.7, Scale: 0.1, Min: bound(0), Max: bound(13.5)}},
		CycleCost:  DefaultBatteryCycleCost,
	},
}

// DefaultBatteryCycleCost is a home_battery's default cycle_cost,
// currency per kWh through it: a small wear cost (far below a battery's
// real wear of 0.05–0.10 per kWh, so that it never outweighs a real price
// difference) that breaks the ties between charging and discharging at
// equal prices, and between storing and feeding back.
const DefaultBatteryCycleCost = 0.01
