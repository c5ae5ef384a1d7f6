package street

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mva"
)

// Split returns the neighbourhood of cfg without its energy homes (the
// homes whose file says planner = "energy"), to be compiled, and the
// energy homes mapped to energy models (FromHome), each with its Index
// in cfg's neighbourhood. Links that name an energy home are left to
// StreetOf, the others renumbered. A feeder limit is lowered for the
// compiled homes by what the energy homes import in every plan
// (reserve), so that the protocol leaves them that room; a hard limit
// below it is refused (an error wrapping energy.ErrInfeasible and
// devices.ErrInfeasible). The
// returned neighbourhood is cfg's where there is no energy home.
func Split(cfg *config.Config) (*devices.Neighbourhood, []*Member, error) {
	n := cfg.Neighbourhood
	isEnergy := func(i int) bool { return i < len(cfg.Planners) && cfg.Planners[i] == config.PlannerEnergy }
	if !slices.Contains(cfg.Planners, config.PlannerEnergy) {
		return n, nil, nil
	}
	rest := *n
	rest.Homes = nil
	rest.Links = nil
	newIndex := make([]int, len(n.Homes))
	var ms []*Member
	for i := range n.Homes {
		h := &n.Homes[i]
		if !isEnergy(i) {
			newIndex[i] = len(rest.Homes)
			rest.Homes = append(rest.Homes, *h)
			continue
		}
		newIndex[i] = -1
		eh, err := FromConfigHome(cfg, i, h)
		if err != nil {
			file := cfg.File
			if i < len(cfg.HomeFiles) {
				file = cfg.HomeFiles[i]
			}
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		ms = append(ms, &Member{Home: eh, Index: i})
	}
	if n.Links != nil {
		rest.Links = [][2]int{}
		for _, l := range n.Links {
			if a, b := newIndex[l[0]], newIndex[l[1]]; a >= 0 && b >= 0 {
				rest.Links = append(rest.Links, [2]int{a, b})
			}
		}
	}
	if n.FeederLimit > 0 {
		scale := n.Units.PowerScale
		if scale <= 0 {
			scale = 1
		}
		need := 0.0
		for _, w := range n.Windows {
			sum := 0.0
			for _, m := range ms {
				sum += reserve(m.Home, w)
			}
			need = math.Max(need, sum)
		}
		lim := n.FeederLimit*scale - need
		if lim <= plancheck.Tolerance {
			if !n.FeederSoft {
				return nil, nil, fmt.Errorf("%s: the energy homes import %.3g kW together in some window whatever they plan, at or above the hard feeder limit %g kW: %w (%w)", cfg.File, need, n.FeederLimit*scale, energy.ErrInfeasible, devices.ErrInfeasible)
			}
			// No room left: every compiled kW is over.
			lim = plancheck.Tolerance
		}
		rest.FeederLimit = lim / scale
	}
	return &rest, ms, nil
}

// reserve is what energy home h imports in window w whatever it plans
// (kW): the most, over the window's slots, of its load less all its PV
// and every storage discharging at full power.
func reserve(h *energy.Home, w devices.Window) float64 {
	out := 0.0
	for t := w.From; t < w.To; t++ {
		v := h.Load[t]
		for _, p := range h.PV {
			v -= p.Forecast[t]
		}
		for _, st := range h.Storage {
			if st.Available == nil || st.Available[t] {
				v -= st.MaxDischarge
			}
		}
		out = math.Max(out, v)
	}
	return out
}

// StreetOf returns the street the members ms of neighbourhood full (as
// Split returned them) coordinate around: full's peak term; its links
// ([coordination] neighbours; nil for every pair) renumbered as Street
// numbers homes — the compiled homes in full's order, then the members;
// its feeder limit, with the compiled homes' committed caps per window
// (kW, nil for none); and compiled, the compiled homes' loads that flow
// (kW per slot, one per compiled home; nil for a street of energy homes
// only).
func StreetOf(full *devices.Neighbourhood, ms []*Member, compiled [][]float64, committed []float64) *Street {
	s := &Street{Peak: PeakOf(full), Compiled: compiled}
	if full.Links != nil {
		number := make([]int, len(full.Homes))
		member := make(map[int]int, len(ms))
		for i, m := range ms {
			member[m.Index] = i
		}
		c := 0
		for i := range full.Homes {
			if k, ok := member[i]; ok {
				number[i] = len(full.Homes) - len(ms) + k
				continue
			}
			number[i] = c
			c++
		}
		s.Links = [][2]int{}
		for _, l := range full.Links {
			s.Links = append(s.Links, [2]int{number[l[0]], number[l[1]]})
		}
		if compiled == nil && c > 0 {
			// The compiled homes' loads are unknown: none.
			s.Compiled = make([][]float64, c)
			for i := range s.Compiled {
				s.Compiled[i] = make([]float64, full.Horizon.Slots)
			}
		}
	}
	if full.FeederLimit > 0 {
		scale := full.Units.PowerScale
		if scale <= 0 {
			scale = 1
		}
		s.Feeder = Feeder{Limit: full.FeederLimit * scale, Hard: !full.FeederSoft, Miss: full.Weights.Miss, Windows: full.Windows, Committed: committed}
	}
	return s
}

// PeakOf returns n's peak term in the energy homes' currency: the
// [objective] peak weight over the price weight, on the slots of the
// coordination windows.
func PeakOf(n *devices.Neighbourhood) Peak {
	pk := Peak{Weight: n.Weights.Peak}
	if n.Weights.Price > 0 {
		pk.Weight /= n.Weights.Price
	}
	// Energy homes are in kW and currency; a model unit of power is
	// PowerScale kW.
	if s := n.Units.PowerScale; s > 0 && s != 1 {
		pk.Weight /= s * s
	}
	for _, w := range n.Windows {
		for t := w.From; t < w.To; t++ {
			pk.Slots = append(pk.Slots, t)
		}
	}
	return pk
}

// Plan plans the members alone, coordinates them with the rest of the
// street (base: its import per slot in kW, nil for none) under n's peak
// term, every pair linked and without a feeder limit, and returns the
// result's part about them; PlanStreet takes the whole street.
func Plan(ctx context.Context, n *devices.Neighbourhood, ms []*Member, base []float64, o Options) (*report.EnergyStreet, error) {
	return PlanStreet(ctx, ms, baseStreet(base, PeakOf(n)), o)
}

// PlanStreet plans the members alone, coordinates them with street s
// (StreetOf) and returns the result's part about them.
func PlanStreet(ctx context.Context, ms []*Member, s *Street, o Options) (*report.EnergyStreet, error) {
	if err := PlanAlone(ctx, ms, o); err != nil {
		return nil, err
	}
	res, err := CoordinateStreet(ctx, ms, s, o)
	if err != nil {
		return nil, err
	}
	return StreetSummary(ms, s, s, res.Rounds, res.Moves), nil
}

// Summary is the result's part about the members: their plans against
// the rest of the street's load base, and their alone plans against
// aloneBase (the rest of the street as it was when they planned alone);
// rounds and moves are the best responses' counts.
func Summary(ms []*Member, base, aloneBase []float64, pk Peak, rounds, moves int) *report.EnergyStreet {
	return StreetSummary(ms, baseStreet(base, pk), baseStreet(aloneBase, pk), rounds, moves)
}

// StreetSummary is Summary on streets: the members' plans in s, their
// alone plans in alone (the street as it was when they planned alone).
// The feeder's figures are the checker's (plancheck.CheckFeeder).
func StreetSummary(ms []*Member, s, alone *Street, rounds, moves int) *report.EnergyStreet {
	out := &report.EnergyStreet{Rounds: rounds, Moves: moves, LoadKW: s.load(ms), Objective: s.Objective(ms)}
	am := make([]*Member, len(ms))
	for i, m := range ms {
		am[i] = &Member{Home: m.Home, Plan: m.Alone, Index: m.Index}
	}
	out.AloneObjective = alone.Objective(am)
	for _, v := range out.LoadKW {
		out.PeakKW = math.Max(out.PeakKW, v)
	}
	for _, v := range alone.load(am) {
		out.AlonePeakKW = math.Max(out.AlonePeakKW, v)
	}
	for _, m := range ms {
		out.Homes = append(out.Homes, homeReport(m))
	}
	if f := &s.Feeder; s.feederOn() {
		plans := make([]*energy.Plan, len(ms))
		for i, m := range ms {
			plans[i] = m.Plan
		}
		fr := plancheck.CheckFeeder(f.Limit, f.Hard, f.Windows, f.Committed, plans)
		out.FeederLimitKW, out.CommittedKW = f.Limit, fr.CommittedKW
		if slices.ContainsFunc(fr.ExcessKW, func(v float64) bool { return v > plancheck.Tolerance }) {
			out.FeederExcessKW = fr.ExcessKW
		}
		for i := range ms {
			out.Homes[i].CommittedKW = fr.HomesKW[i]
		}
	}
	return out
}

func homeReport(m *Member) report.EnergyHome {
	p, a := m.Plan, m.Alone
	r := report.EnergyHome{
		Home:        m.Home.Name,
		Bill:        p.ImportCost - p.ExportRevenue + p.DemandCost,
		AloneBill:   a.ImportCost - a.ExportRevenue + a.DemandCost,
		StoredValue: p.StoredValue,
		ImportKW:    p.Import,
		ExportKW:    p.Export,
		GoalsMissed: []report.GoalMissed{},
	}
	r.SavedVsAlone = r.AloneBill - r.Bill
	for t := range p.Import {
		r.PeakKW = math.Max(r.PeakKW, p.Import[t])
		r.AlonePeakKW = math.Max(r.AlonePeakKW, a.Import[t])
	}
	for s, st := range m.Home.Storage {
		pw := make([]float64, len(p.Charge[s]))
		for t := range pw {
			pw[t] = p.Charge[s][t] - p.Discharge[s][t]
		}
		r.Storage = append(r.Storage, report.Storage{Name: st.Name, PowerKW: pw, EnergyKWh: p.Energy[s]})
		r.GoalsTotal += len(st.Goals)
	}
	// The checker's shortfalls, not the planner's own list: a soft
	// limit's (kW beyond it in one slot) is energy over the limits, as
	// for compiled homes, not a goal.
	for _, sf := range m.Check.Shortfalls {
		if sf.What == "import limit" || sf.What == "export limit" {
			r.OverLimitsKWh += sf.By * m.Home.Dt[sf.Slot]
			continue
		}
		r.GoalsMissed = append(r.GoalsMissed, report.GoalMissed{Home: m.Home.Name, Rule: sf.What, Missed: sf.By, Unit: "kWh"})
	}
	return r
}

// Report is the result of a street whose homes are all energy homes
// (cfg's planners all "energy"): no protocol runs; the homes are planned
// alone and coordinated by Plan, and the result carries only the energy
// homes' part.
func Report(ctx context.Context, cfg *config.Config, o Options) (*report.Homes, error) {
	n, ms, err := Split(cfg)
	if err != nil {
		return nil, err
	}
	if len(n.Homes) > 0 {
		return nil, fmt.Errorf("%s: %d homes are compiled: the street's report comes from the protocol", cfg.File, len(n.Homes))
	}
	es, err := PlanStreet(ctx, ms, StreetOf(cfg.Neighbourhood, ms, nil, nil), o)
	if err != nil {
		return nil, err
	}
	full := cfg.Neighbourhood
	h := &report.Homes{
		Neighbourhood: full.Name,
		SlotMinutes:   full.Horizon.SlotMinutes,
		SlotLengths:   full.Horizon.Lengths,
		Slots:         report.SlotTimes(full.Horizon),
		Currency:      full.Units.Currency,
		EnergyHomes:   es,
		GoalsMissed:   []report.GoalMissed{},
		Schedules:     []report.HomePlan{},
	}
	obj := es.Objective
	h.Instance, h.Sense, h.Objective = cfg.File, "min", &obj
	h.Feasible, h.Status = true, mva.StatusFeasible
	h.Algorithm = mva.Algorithm{Global: "none", Local: "energy"}
	for _, eh := range es.Homes {
		h.GoalsMissed = append(h.GoalsMissed, eh.GoalsMissed...)
	}
	h.Notes = []string{"every home is an energy home: each is planned by devices/energy and answers the street's load by best responses; no protocol runs"}
	return h, nil
}

// FromConfigHome is FromHome for h, home i of cfg's neighbourhood (or a
// copy of it with rules edited), with the PV forecast and device sizes
// cfg holds for that home.
func FromConfigHome(cfg *config.Config, i int, h *devices.Home) (*energy.Home, error) {
	var pv []float64
	if i < len(cfg.PV) {
		pv = cfg.PV[i]
	}
	var sz map[string]devices.Sizing
	if i < len(cfg.Sizes) {
		sz = cfg.Sizes[i]
	}
	return FromHome(cfg.Neighbourhood, h, pv, sz)
}
