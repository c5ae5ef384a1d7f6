package street

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mva"
)

// Split returns the neighbourhood of cfg without its energy homes (the
// homes whose file says planner = "energy"), to be compiled, and the
// energy homes mapped to energy models (FromHome). Links that name an
// energy home are dropped, the others renumbered: an energy home answers
// the whole street's load. The returned neighbourhood is cfg's where
// there is no energy home.
func Split(cfg *config.Config) (*devices.Neighbourhood, []*Member, error) {
	n := cfg.Neighbourhood
	energy := func(i int) bool { return i < len(cfg.Planners) && cfg.Planners[i] == config.PlannerEnergy }
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
		if !energy(i) {
			newIndex[i] = len(rest.Homes)
			rest.Homes = append(rest.Homes, *h)
			continue
		}
		newIndex[i] = -1
		var pv []float64
		if i < len(cfg.PV) {
			pv = cfg.PV[i]
		}
		var sz map[string]devices.Sizing
		if i < len(cfg.Sizes) {
			sz = cfg.Sizes[i]
		}
		eh, err := FromHome(n, h, pv, sz)
		if err != nil {
			file := cfg.File
			if i < len(cfg.HomeFiles) {
				file = cfg.HomeFiles[i]
			}
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		ms = append(ms, &Member{Home: eh})
	}
	if n.Links != nil {
		rest.Links = [][2]int{}
		for _, l := range n.Links {
			if a, b := newIndex[l[0]], newIndex[l[1]]; a >= 0 && b >= 0 {
				rest.Links = append(rest.Links, [2]int{a, b})
			}
		}
	}
	return &rest, ms, nil
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
// term, and returns the result's part about them.
func Plan(ctx context.Context, n *devices.Neighbourhood, ms []*Member, base []float64, o Options) (*report.EnergyStreet, error) {
	if err := PlanAlone(ctx, ms, o); err != nil {
		return nil, err
	}
	pk := PeakOf(n)
	res, err := Coordinate(ctx, ms, base, pk, o)
	if err != nil {
		return nil, err
	}
	return Summary(ms, base, base, pk, res.Rounds, res.Moves), nil
}

// Summary is the result's part about the members: their plans against
// the rest of the street's load base, and their alone plans against
// aloneBase (the rest of the street as it was when they planned alone);
// rounds and moves are the best responses' counts.
func Summary(ms []*Member, base, aloneBase []float64, pk Peak, rounds, moves int) *report.EnergyStreet {
	out := &report.EnergyStreet{Rounds: rounds, Moves: moves, LoadKW: streetLoad(ms, base, -1), Objective: Objective(ms, base, pk)}
	alone := make([]*Member, len(ms))
	for i, m := range ms {
		alone[i] = &Member{Home: m.Home, Plan: m.Alone}
	}
	out.AloneObjective = Objective(alone, aloneBase, pk)
	for _, v := range out.LoadKW {
		out.PeakKW = math.Max(out.PeakKW, v)
	}
	for _, v := range streetLoad(alone, aloneBase, -1) {
		out.AlonePeakKW = math.Max(out.AlonePeakKW, v)
	}
	for _, m := range ms {
		out.Homes = append(out.Homes, homeReport(m))
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
	es, err := Plan(ctx, cfg.Neighbourhood, ms, nil, o)
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
