// Package compile turns a neighbourhood of homes (package devices) into an
// mva.Problem with one agent per home, as docs/DESIGN.md "Homes" describes.
//
// # Variables
//
// For home h (agent h):
//
//   - h/DEVICE@t: the action of each device in each slot t; the domain is
//     the device's actions, labelled by name.
//   - h/level@w: the energy level the home commits to in coordination
//     window w; the domain is the levels of devices.LevelCaps, labelled
//     "lo-capkW". These are the boundary variables: the only ones that
//     appear in functions with other homes.
//   - h/LOCATION.PROPERTY#i: the state of a modelled property at trajectory
//     index i = 1..Last (index 0 is the fixed initial state): its value and
//     which of its before/after goals have held so far, labelled "42.5" or
//     "42.5|10" (bit k: the property's k-th goal has held). The domain is
//     devices.Space's exact state set: only states that some schedule
//     reaches while keeping every bound, and from which every goal can
//     still be met in time.
//
// # Functions
//
// Inside a home:
//
//   - price: for each action variable, Weights.Price·price(t)·power·Δ; the
//     background's price is a constant folded into the home's first
//     function, so that every agent's MVA table holds its whole cost.
//     Where the neighbourhood has export prices and the home can feed
//     back in slot t, the bill is not linear in the powers: slot t gets
//     one meter function over all the home's actions instead,
//     Weights.Price·Bill(t, draw)·Δ with the background inside (the level
//     link's scope, so the width does not grow);
//   - away (hard): where a device is away (devices.Device.Away: an EV
//     outside its plugged-in window), every action but its idle one is
//     Hard in the slot's price or meter function, and the property's
//     transitions (devices.Space.Step) refuse it;
//   - transitions (hard): for each property and index i, the function
//     over (state i−1, the actions in slot Mover(i) of the devices that move
//     the property, state i) that is 0 where state i is state i−1 plus drift
//     plus the actions' effects, and Hard elsewhere. Because the state
//     domains hold only admissible states, these functions encode every
//     rule: bounds and within/at goals by the states left out, before/after
//     goals by the goal bits that must be set when their window closes.
//     Tables are |Z(i−1)|·Π|A|·|Z(i)| entries, linear in the horizon rather
//     than exponential in it;
//   - misses: for each soft rule (devices.Rule.Soft), Weights.Miss per
//     unit it misses by, as unary functions of the property's states: a
//     before/after goal's on the state at its window's last index, charged
//     where its goal bit says it never held; an at/within rule's (or one
//     without a time) on every state of its window. Soft rules exclude no
//     state, so the exact solvers find the schedule that misses least;
//     devices.Neighbourhood.Evaluate charges the same amounts;
//   - cycling: Weights.Price·CycleCost·|power|·Δ added to each action's
//     price (Device.CycleCost), which breaks the ties between charging and
//     discharging a battery at equal prices;
//   - level link (hard): for each slot of a window, the function over all
//     the home's actions in the slot and the window's level that is Hard
//     when the draw exceeds the level's cap (Π|A|·levels entries); it is
//     left out where every level fits every draw;
//   - demand charge (devices.Meter.DemandCharge): a variable h/demand over
//     the home's possible peaks (Neighbourhood.DemandLevels: the
//     threshold and every draw above it), the unary cost Weights.Price·
//     DemandCharge·(peak − threshold) on it, and for each slot that can
//     draw above the threshold the hard function over the slot's actions
//     and h/demand that is Hard where the import exceeds the peak. The
//     cost grows with the peak, so the optimum takes the tightest: the
//     horizon's highest import, exactly (Π|A|·|peaks| entries per slot);
//   - storages read from their states: in the meter, level link and
//     demand link of a slot, a storage of many actions (automatic power
//     levels) whose actions each move its state by a different amount
//     is read from its states before and after the slot instead of its
//     action variable (slotScope in slot.go): the same costs wherever the
//     transitions hold, and the action variable is left to its transition
//     and price, where bucket elimination removes it first;
//   - peak, own part: for each level variable, Weights.Peak·Δ²·Σ_{t∈w}
//     (cap + outside(t))².
//
// No penalty for unused headroom is needed: the peak term grows with every
// cap (caps are never negative), so an optimal solution always commits the
// tightest level; with Weights.Peak = 0 the level is free, and Decode's
// report still shows the draw.
//
// Between homes:
//
//   - peak, cross part: for each linked pair and window, Weights.Peak·Δ²·
//     |w|·2·cap_h·cap_g (|levels|² entries). With the own parts this is
//     Weights.Peak·Δ²·|w|·(Σ_h cap_h)² on a complete graph;
//   - feeder (optional): per window, the function over every home's
//     level that is Hard when the caps add up to more than the limit, or
//     with Neighbourhood.FeederSoft Weights.Miss per kW over per hour of
//     the window (levels^homes entries). Past Options.MaxTable (a street
//     of dozens of homes), or with Options.FeederBudgets, the limit is
//     split into per-home budgets that add up to it, one function of a
//     home's level each (compiler.feederBudgets): the limit still holds,
//     at the price of plans that would need one home's unused share.
//
// # Bounds
//
// Every table is checked against Options.MaxTable (default 1<<20 entries,
// 8 MiB). The sizes are small by construction: devices have 2–3 actions,
// levels are few (the configured count), and the largest transition of
// the SHDS dm files has 252,840 entries (a heater and an oven warming one
// room, about 200 temperatures on either side of a slot). What is exponential is exact solving: bucket elimination's
// width grows with the number of properties a home models, because the
// level link couples all of a slot's actions; that is the inherent
// difficulty of the SHDS local problem (shds-model.md §3.4), and the
// samplers exist for it.
package compile

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/mva"
)

// DefaultMaxTable bounds every function's table: 1<<20 float64 entries
// are 8 MiB.
const DefaultMaxTable = 1 << 20

// Options tune Compile.
type Options struct {
	// MaxTable bounds every table; 0 means DefaultMaxTable.
	MaxTable int
	// StateLimit bounds a property's states at one index; 0 means
	// devices.DefaultStateLimit.
	StateLimit int
	// FeederBudgets splits a feeder limit into per-home budgets
	// (compiler.feederBudgets) even where one table over every home's
	// level fits MaxTable; past it they are split anyway.
	FeederBudgets bool

	// actionsOnly makes every slot function read action variables
	// (slotScope), the encoding before storages were read from their
	// states: the baseline of BenchmarkReadStates.
	actionsOnly bool
}

// Compiled is a neighbourhood compiled to a problem, with the maps from
// the model to the problem's variables.
type Compiled struct {
	Problem *mva.Problem
	Model   *devices.Neighbourhood
	Homes   []Home
	// slots is the compiler's slotScope memo (SlotScope).
	slots [][]*slotActs
}

// Home holds one home's variables. Home i is agent i of the problem.
type Home struct {
	// Actions[d][t] is the variable of device d's action in slot t.
	Actions [][]int
	// Levels[w] is the variable of the level committed in window w.
	Levels []int
	// Caps[w][k] is the cap of level k in window w (power units).
	Caps [][]float64
	// Models are the home's modelled properties.
	Models []Model
	// Demand is the variable of the peak the home's demand charge is
	// levied on (−1 without one); DemandLevels its values, ascending.
	Demand       int
	DemandLevels []float64
}

// Model is a modelled property and its state variables.
type Model struct {
	Space *devices.Space
	// Vars[i] is the variable of the state at index i; Vars[0] is −1
	// (the initial state is fixed).
	Vars []int
}

// ErrTooLarge is wrapped when a table exceeds Options.MaxTable.
var ErrTooLarge = devices.ErrTooLarge

type compiler struct {
	n     *devices.Neighbourhood
	opts  Options
	p     *mva.Problem
	c     *Compiled
	first []int // per home: its first function, −1 while none
	// meter[h][t]: slot t of home h is priced by a meter function.
	meter [][]bool
	// slots[h][t] is what the functions of home h's actions in slot t
	// read (slotScope), computed on first use.
	slots [][]*slotActs
	// extra[h] is home h's constant cost besides its background's: the
	// penalties of soft rules missed by the initial state.
	extra []float64
}

// manyActions reports whether a device of n has substMinActions actions
// or more (automatic power levels): its problem lets bucket elimination
// search its order (mva.Problem.SearchOrder), which on such homes costs
// a tenth of min-fill's (BenchmarkBEOrder:
// cedar's MVA table of the README's street with automatic levels
// 7.4·10^8 entries read against 8.9·10^7). Homes of the catalogue's
// fixed levels (two or three actions) and SHDS homes keep min-fill's
// order, and so every plan and figure they gave.
func manyActions(n *devices.Neighbourhood) bool {
	for _, h := range n.Homes {
		for _, d := range h.Devices {
			if len(d.Actions) >= substMinActions {
				return true
			}
		}
	}
	return false
}

// Compile builds the problem. It fails on a malformed model
// (devices.Neighbourhood.Validate), on rules that no schedule can satisfy
// (errors.Is(err, devices.ErrInfeasible), with a *devices.Error per
// offending rule) and on tables beyond the limits (ErrTooLarge).
func Compile(n *devices.Neighbourhood, opts Options) (*Compiled, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if opts.MaxTable <= 0 {
		opts.MaxTable = DefaultMaxTable
	}
	p := &mva.Problem{Name: n.Name, Sense: mva.Minimize, SearchOrder: manyActions(n)}
	k := &compiler{n: n, opts: opts, p: p, c: &Compiled{Problem: p, Model: n, Homes: make([]Home, len(n.Homes))}, first: make([]int, len(n.Homes)), meter: make([][]bool, len(n.Homes)), slots: make([][]*slotActs, len(n.Homes)), extra: make([]float64, len(n.Homes))}
	for hi := range n.Homes {
		p.Agents = append(p.Agents, mva.Agent{Name: n.Homes[hi].Name})
		k.first[hi] = -1
	}
	for hi := range n.Homes {
		if err := k.home(hi); err != nil {
			return nil, err
		}
	}
	if err := k.between(); err != nil {
		return nil, err
	}
	if err := k.foldBase(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	k.c.slots = k.slots
	return k.c, nil
}

// home adds home hi's variables and local functions.
func (k *compiler) home(hi int) error {
	n, h, hc := k.n, &k.n.Homes[hi], &k.c.Homes[hi]
	hz := n.Horizon
	models, err := h.Models()
	if err != nil {
		return err
	}
	spaces, err := h.Spaces(hz, models, k.opts.StateLimit)
	if err != nil {
		return err
	}
	for _, comp := range devices.Components(models) {
		if ok, decided := h.JointFeasible(spaces, comp, 0); decided && !ok {
			return errors.Join(h.Check(hz, k.opts.StateLimit)...)
		}
	}
	hc.Actions = make([][]int, len(h.Devices))
	for d := range h.Devices {
		dev := &h.Devices[d]
		labels := make([]string, len(dev.Actions))
		for a := range dev.Actions {
			labels[a] = dev.Actions[a].Name
		}
		hc.Actions[d] = make([]int, hz.Slots)
		for t := range hz.Slots {
			hc.Actions[d][t] = k.variable(hi, fmt.Sprintf("%s/%s@%d", h.Name, dev.Name, t), labels)
		}
	}
	hc.Levels = make([]int, len(n.Windows))
	hc.Caps = make([][]float64, len(n.Windows))
	for w := range n.Windows {
		hc.Caps[w] = n.LevelCaps(hi, w)
		hc.Levels[w] = k.variable(hi, fmt.Sprintf("%s/level@%d", h.Name, w), devices.LevelLabels(hc.Caps[w], n.Units))
	}
	for _, s := range spaces {
		m := Model{Space: s, Vars: make([]int, s.Last+1)}
		m.Vars[0] = -1
		p := &h.Properties[s.Model.Property]
		for i := 1; i <= s.Last; i++ {
			m.Vars[i] = k.variable(hi, fmt.Sprintf("%s/%s.%s#%d", h.Name, p.Location, p.Name, i), stateLabels(p, s, i))
		}
		hc.Models = append(hc.Models, m)
	}
	if err := k.prices(hi); err != nil {
		return err
	}
	if err := k.links(hi); err != nil {
		return err
	}
	if err := k.demand(hi); err != nil {
		return err
	}
	k.ownPeak(hi)
	for mi := range hc.Models {
		if err := k.transitions(hi, &hc.Models[mi]); err != nil {
			return err
		}
		k.misses(hi, &hc.Models[mi])
	}
	return k.endValues(hi)
}

func (k *compiler) variable(agent int, name string, labels []string) int {
	k.p.Variables = append(k.p.Variables, mva.Variable{Name: name, Domain: labels, Agent: agent})
	return len(k.p.Variables) - 1
}

// add appends a function owned by home hi (−1 between homes) after
// checking its size.
func (k *compiler) add(hi int, name string, scope []int, costs []float64) {
	if hi >= 0 && k.first[hi] < 0 {
		k.first[hi] = len(k.p.Functions)
	}
	k.p.Functions = append(k.p.Functions, mva.Function{Name: name, Scope: scope, Costs: costs})
}

// table allocates a table over scope, or fails past MaxTable.
func (k *compiler) table(what string, scope []int, fill float64) ([]float64, error) {
	size := 1
	for _, v := range scope {
		size *= k.p.DomainSize(v)
		if size > k.opts.MaxTable {
			return nil, fmt.Errorf("%s needs a table of more than %d entries (the limit); use fewer levels, actions or states: %w", what, k.opts.MaxTable, ErrTooLarge)
		}
	}
	t := make([]float64, size)
	if fill != 0 {
		for i := range t {
			t[i] = fill
		}
	}
	return t, nil
}

// stateLabels names the states of space s at index i.
func stateLabels(p *devices.Property, s *devices.Space, i int) []string {
	dec := 0
	for x := p.Scale; dec < 6 && math.Abs(x-math.Round(x)) > 1e-9; x *= 10 {
		dec++
	}
	out := make([]string, len(s.States[i]))
	seen := map[string]bool{}
	for j, st := range s.States[i] {
		l := strconv.FormatFloat(float64(st.Value)*p.Scale, 'f', dec, 64)
		if len(s.AnyRules) > 0 {
			var b strings.Builder
			for r := range s.AnyRules {
				if st.Flags&(1<<r) != 0 {
					b.WriteByte('1')
				} else {
					b.WriteByte('0')
				}
			}
			l += "|" + b.String()
		}
		if seen[l] {
			l += "~" + strconv.FormatInt(st.Value, 10)
		}
		seen[l] = true
		out[j] = l
	}
	return out
}
