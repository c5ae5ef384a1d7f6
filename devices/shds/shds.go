// Package shds imports the Smart Home Device Scheduling (SHDS) data set
// (github.com/nandofioretto/SHDS_dataset) into hearth's neighbourhood
// model, exactly as notes/shds-model.md specifies.
//
// Units are the data set's: power and background load in deci-kWh per
// slot (q10, truncated), prices in cents per kWh at the file's exact
// prices (0.198 $/kWh is 19.8), property values, deltas and goals in
// tenths (q10). The simulator truncates prices to whole cents (q100: 19
// for 0.198, every bill about 2% low); Options.CentPrices, and Profile
// SHMGM, do the same, so that a compiled home's cost is the simulator's
// objective J_i to the unit. Every rule is hard;
// the neighbour lists become the links of the peak term; every slot is a
// coordination window (the per-slot peak of SHDS); the weights are α_price
// and α_power divided by Δ and Δ² so that the Δ factors of the model
// cancel at any granularity.
//
// Two profiles (shds-model.md §6.2): Profile SHDS, the default, restricts
// each model's actuators to the home's `actuators` list and gives `at T`
// its window {T}; Profile SHMGM reproduces the Java simulator: every
// dictionary actuator wired to a model, and empty `at` windows.
//
// Homes whose rules no schedule satisfies (29 of the 8661 homes, all large
// houses whose Roomba battery cannot last, §4.3) are handled by Policy:
// Drop (default) removes every rule of the infeasible component of models
// and reports it, Strict fails, Keep leaves them (the compiler then
// refuses the home).
package shds

import (
	"encoding/json"

	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hearth-dcop/hearth/devices"
)

// Profile selects the interpretation (shds-model.md §0, §6.2).
type Profile int

const (
	// SHDS is the recommended model with the simulator's bugs fixed.
	SHDS Profile = iota
	// SHMGM reproduces the SH-MGM Java simulator where it can.
	SHMGM
)

// Policy says what to do with infeasible homes.
type Policy int

const (
	// Drop removes every rule of an infeasible component and reports it.
	Drop Policy = iota
	// Strict fails the import.
	Strict
	// Keep leaves the rules in place.
	Keep
)

// Options tune Import. The zero value is the recommended default.
type Options struct {
	Profile    Profile
	Infeasible Policy
	// Levels is the number of energy levels per slot (0 means 4). Levels
	// at least the number of distinct draws of a home make its peak term
	// exact.
	Levels int
	// PricePeak are α_price and α_power (0, 0 means 1, 1).
	Weights devices.Weights
	// Dictionary replaces the embedded DeviceDictionary.json.
	Dictionary devices.Dictionary
	// CentPrices truncates prices to whole cents as the simulator does
	// (q100); Profile SHMGM implies it. The default keeps the file's
	// prices, so that bills are what the file's tariff charges.
	CentPrices bool
}

// Dropped records the rules removed from an infeasible home.
type Dropped struct {
	Home  string
	Rules []string
}

// Result is an imported instance.
type Result struct {
	Neighbourhood *devices.Neighbourhood
	// HouseTypes[h] is home h's house type (0 small, 1 medium, 2 large).
	HouseTypes []int
	Dropped    []Dropped
	// Warnings are repairs made on the way (one-sided neighbour lists).
	Warnings []string
}

type instance struct {
	Horizon     *int             `json:"horizon"`
	Granularity *int             `json:"granularity"`
	PriceSchema []float64        `json:"priceSchema"`
	Agents      map[string]agent `json:"agents"`
}

type agent struct {
	Neighbors      []string  `json:"neighbors"`
	BackgroundLoad []float64 `json:"backgroundLoad"`
	HouseType      *int      `json:"houseType"`
	Rules          []string  `json:"rules"`
	Actuators      *[]string `json:"actuators"`
	Sensors        []string  `json:"sensors"`
}

// ReadFile imports an instance file; the neighbourhood is named after it.
func ReadFile(path string, opts Options) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	r, err := Import(data, name, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// q10 is the simulator's integer scaling: the double product, truncated
// toward zero. The explicit conversion keeps the product a separate
// rounding step (no fused multiply-add).
func q10(v float64) int64 { return int64(float64(v * 10)) }

// q100 scales prices to cents the same way.
func q100(v float64) int64 { return int64(float64(v * 100)) }

// cents is a price in $/kWh in cents per kWh, untruncated: 0.198 is 19.8.
func cents(v float64) float64 { return float64(v * 100) }

// tenths turns a q10 integer into the model's natural value (Scale 0.1):
// devices.Steps recovers the integer exactly.
func tenths(q int64) float64 { return float64(q) / 10 }

// Import reads an SHDS instance.
func Import(data []byte, name string, opts Options) (*Result, error) {
	var in instance
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("shds: %w", err)
	}
	dict := opts.Dictionary
	if dict == nil {
		var err error
		if dict, err = devices.ParseDictionary(devices.SHDSDictionary()); err != nil {
			return nil, err
		}
	}
	if in.Horizon == nil || in.Granularity == nil {
		return nil, fmt.Errorf("shds: horizon and granularity are required")
	}
	H, g := *in.Horizon, *in.Granularity
	if H < 2 || H > 10000 {
		return nil, fmt.Errorf("shds: horizon %d: want 2..10000 slots", H)
	}
	if g < 1 || g > 24*60 {
		return nil, fmt.Errorf("shds: granularity %d: want 1..1440 minutes", g)
	}
	if len(in.PriceSchema) != H {
		return nil, fmt.Errorf("shds: priceSchema has %d values for horizon %d", len(in.PriceSchema), H)
	}
	if len(in.Agents) == 0 {
		return nil, fmt.Errorf("shds: no agents")
	}
	levels := opts.Levels
	if levels <= 0 {
		levels = 4
	}
	w := opts.Weights
	if w == (devices.Weights{}) {
		w = devices.Weights{Price: 1, Peak: 1}
	}
	dt := float64(g) / 60
	n := &devices.Neighbourhood{
		Name:    name,
		Horizon: devices.Horizon{Slots: H, SlotMinutes: g, Dynamics: devices.SHDS, AtVacuous: opts.Profile == SHMGM},
		Levels:  levels,
		Weights: devices.Weights{Price: w.Price / dt, Peak: w.Peak / (dt * dt)},
		Units:   devices.Units{Power: "kWh", PowerScale: 0.1, Currency: "$", PriceScale: 0.01},
	}
	for t, p := range in.PriceSchema {
		if !finite(p) {
			return nil, fmt.Errorf("shds: priceSchema[%d] is not a number", t)
		}
		if opts.CentPrices || opts.Profile == SHMGM {
			n.Prices = append(n.Prices, float64(q100(p)))
		} else {
			n.Prices = append(n.Prices, cents(p))
		}
	}
	for t := range H {
		n.Windows = append(n.Windows, devices.Window{From: t, To: t + 1})
	}
	names := homeOrder(in.Agents)
	res := &Result{Neighbourhood: n}
	for _, hn := range names {
		a := in.Agents[hn]
		if a.HouseType == nil || *a.HouseType < 0 || *a.HouseType >= len(dict) {
			return nil, fmt.Errorf("shds: home %s: houseType must be 0..%d", hn, len(dict)-1)
		}
		if len(a.BackgroundLoad) != H {
			return nil, fmt.Errorf("shds: home %s: backgroundLoad has %d values for horizon %d", hn, len(a.BackgroundLoad), H)
		}
		b := &builder{name: hn, a: a, dict: dict[*a.HouseType], hz: n.Horizon, opts: opts, g: g}
		h, dropped, err := b.build()
		if err != nil {
			return nil, fmt.Errorf("shds: home %s: %w", hn, err)
		}
		if len(dropped) > 0 {
			res.Dropped = append(res.Dropped, Dropped{Home: hn, Rules: dropped})
		}
		n.Homes = append(n.Homes, *h)
		res.HouseTypes = append(res.HouseTypes, *a.HouseType)
	}
	links, warn, err := neighbours(in.Agents, names)
	if err != nil {
		return nil, fmt.Errorf("shds: %w", err)
	}
	n.Links, res.Warnings = links, warn
	if err := n.Validate(); err != nil {
		return nil, fmt.Errorf("shds: %w", err)
	}
	return res, nil
}

func finite(v float64) bool { return v == v && v-v == 0 }

// homeOrder sorts home names by their numeric suffix (h1, h2, …, h10), the
// agent ids of shds-model.md §5.1; other names follow, sorted.
func homeOrder(agents map[string]agent) []string {
	names := make([]string, 0, len(agents))
	for k := range agents {
		names = append(names, k)
	}
	num := func(s string) (int, bool) {
		if len(s) < 2 || s[0] != 'h' {
			return 0, false
		}
		v, err := strconv.Atoi(s[1:])
		return v, err == nil && v >= 0
	}
	slices.SortFunc(names, func(a, b string) int {
		na, oka := num(a)
		nb, okb := num(b)
		switch {
		case oka && okb && na != nb:
			return na - nb
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return names
}

// neighbours turns the neighbour lists into links, symmetrising one-sided
// entries with a warning.
func neighbours(agents map[string]agent, names []string) ([][2]int, []string, error) {
	idx := make(map[string]int, len(names))
	for i, n := range names {
		idx[n] = i
	}
	set := map[[2]int]bool{}
	dir := map[[2]int]bool{}
	for _, n := range names {
		i := idx[n]
		for _, m := range agents[n].Neighbors {
			j, ok := idx[m]
			if !ok {
				return nil, nil, fmt.Errorf("home %s: neighbour %q is not a home of the file", n, m)
			}
			if j == i {
				return nil, nil, fmt.Errorf("home %s lists itself as a neighbour", n)
			}
			dir[[2]int{i, j}] = true
			set[[2]int{min(i, j), max(i, j)}] = true
		}
	}
	links := make([][2]int, 0, len(set))
	for l := range set {
		links = append(links, l)
	}
	slices.SortFunc(links, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	var warn []string
	for _, l := range links {
		if !dir[l] || !dir[[2]int{l[1], l[0]}] {
			warn = append(warn, fmt.Sprintf("neighbours %s and %s listed on one side only; linked both ways", names[l[0]], names[l[1]]))
		}
	}
	return links, warn, nil
}

// ErrInfeasible is wrapped under Policy Strict.
var ErrInfeasible = devices.ErrInfeasible
