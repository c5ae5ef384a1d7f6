package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/refine"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/devices/street"
	"github.com/hearth-dcop/hearth/internal/energyround"
	"github.com/hearth-dcop/hearth/internal/live"
	"github.com/hearth-dcop/hearth/mqtt/sign"
	"github.com/hearth-dcop/hearth/mva/pipeline"
)

// This file is a mixed street's round in `hearth run` (with [live]):
// the compiled homes and the energy homes answer each other in phases
// (internal/energyround, Phases), as homesolve.Run.Answer alternates
// them in process for `hearth sim`. After the protocol the compiled
// homes publish their loads that flow as phase 0's finals; the energy
// homes answer them (energyround.Run) and publish theirs; then, phase by
// phase, the compiled homes answer the energy homes' imports by the
// distributed descent (homesolve.Run.AnswerHome over the round's MQTT
// runtime) and the energy homes answer the compiled homes' new loads,
// until a phase moves nobody, MaxAnswers, or the round's deadline.

// phaseWait bounds a compiled home's wait for the phases when its round
// has no deadline of its own.
const phaseWait = 10 * time.Minute

// answerHook is the compiled home's Answer (AgentConfig) for r, nil
// where there is nothing to answer: no [live] (hearth run refuses a mixed
// street without it), no energy home, or the street's peak term off.
func (st *homeState) answerHook(r *homesolve.Run) func(ctx context.Context, round string, values []int, group func(int) pipeline.Runtime) ([]int, error) {
	lh := st.live
	cfg := r.Config()
	n := r.Model()
	if lh == nil || lh.phases == nil || cfg == nil || r.EnergyHomes() == 0 {
		return nil
	}
	// Without a peak term the compiled homes do not answer the energy
	// homes (`hearth sim` does not), but with a feeder limit the energy
	// homes share it with their committed caps: phase 0 only.
	peak := n.Weights.Peak > 0 && len(n.Windows) > 0
	if full := cfg.Neighbourhood; !peak && (full.FeederLimit <= 0 || len(full.Windows) == 0) {
		return nil
	}
	energyHomes := r.EnergyNames()
	_, compiled := EnergyHomes(cfg)
	home := slices.Index(compiled, st.cfg.Home)
	if home < 0 || len(compiled) != len(n.Homes) {
		return nil
	}
	keys := st.cfg.MQTT.Keys
	log := st.log
	exact := refine.HasExact(n)
	return func(ctx context.Context, round string, values []int, group func(int) pipeline.Runtime) ([]int, error) {
		if !st.once && !slotRound(round, lh.hz.Slot) {
			// A round the compiled homes asked for among themselves
			// (inputs moved) or a controller's: the energy homes are
			// not in it.
			return values, nil
		}
		var signer *sign.Signer
		if keys != nil {
			if signer = keys.Signer(st.cfg.Home); signer == nil {
				return values, fmt.Errorf("no private key for home %s", st.cfg.Home)
			}
		}
		deadline, ok := ctx.Deadline()
		if !ok {
			deadline = time.Now().Add(phaseWait)
		}
		slot0 := lh.hz.Start
		want := energyround.Expect{Slots: n.Horizon.Slots, Slot0: slot0}
		publish := func(ctx context.Context, t string, b []byte) error {
			return lh.client.Publish(ctx, []report.Publication{{Topic: t, Payload: b}})
		}
		var again func()
		final := func(vals []int, k int) error {
			load, err := r.HomeLoad(vals, home)
			if err != nil {
				return err
			}
			for t, v := range load {
				load[t] = math.Max(v, 0)
			}
			// Its committed caps: the energy homes' share of the
			// feeder limit is what the street's leave.
			caps, err := r.HomeCaps(vals, home)
			if err != nil {
				return err
			}
			again, err = energyround.Final(ctx, lh.prefix, energyround.Load{Round: energyround.PhaseRound(round, k), Home: st.cfg.Home,
				Slot0: slot0.Format(time.RFC3339), ImportKW: load, CommittedKW: caps}, signer, publish, log)
			return err
		}
		await := func(k int, homes []string) (map[string]energyround.Load, error) {
			got, missing, err := lh.phases.Await(ctx, energyround.PhaseRound(round, k), homes, want, deadline, 0, again)
			if errors.Is(err, energyround.ErrPhaseTimedOut) {
				log.Warn("mixed street: the phase's loads did not come; the plan is the one before it", "round", round, "phase", k, "missing", strings.Join(missing, ","))
			}
			return got, err
		}
		if err := final(values, 0); err != nil {
			return values, err
		}
		if !peak {
			// The energy homes' finals of phase 0 end the round, or
			// say that it failed.
			_, err := await(0, energyHomes)
			return values, err
		}
		prev, err := await(0, compiled)
		if err != nil {
			return values, err
		}
		moves := 0
		for k := 1; k <= energyround.MaxAnswers; k++ {
			ef, err := await(k-1, energyHomes)
			if err != nil {
				return values, err
			}
			if k > 1 && !energyround.AnyMoved(ef, energyHomes) {
				break
			}
			imports := make([][]float64, len(energyHomes))
			for i, h := range energyHomes {
				imports[i] = ef[h].ImportKW
			}
			flows := make([][]float64, len(compiled))
			for i, h := range compiled {
				flows[i] = prev[h].ImportKW
			}
			vals, blocked, err := r.AnswerHome(ctx, values, home, imports, flows, group(k))
			if err != nil {
				return values, fmt.Errorf("phase %d: %w", k, err)
			}
			if blocked >= 0 {
				log.Info("mixed street: the compiled homes do not answer: their committed caps and the energy homes' exceed the feeder limit", "round", round, "phase", k, "window", blocked)
			}
			if !slices.Equal(vals, values) {
				moves++
			}
			values = vals
			if err := final(values, k); err != nil {
				return values, err
			}
			cur, err := await(k, compiled)
			if err != nil {
				return values, err
			}
			if energyround.SameLoads(prev, cur, compiled) {
				log.Info("mixed street: the compiled homes answered the energy homes", "round", round, "phases", k, "moved", moves)
				break
			}
			prev = cur
		}
		if exact {
			// The refined plan's load, which the energy homes score
			// the street on (refinedPhase).
			load, err := r.HomeRefinedLoad(values, home)
			if err != nil {
				return values, err
			}
			for t, v := range load {
				load[t] = math.Max(v, 0)
			}
			caps, err := r.HomeCaps(values, home)
			if err != nil {
				return values, err
			}
			if _, err := energyround.Final(ctx, lh.prefix, energyround.Load{Round: energyround.PhaseRound(round, refinedPhase), Home: st.cfg.Home,
				Slot0: slot0.Format(time.RFC3339), ImportKW: load, CommittedKW: caps}, signer, publish, log); err != nil {
				return values, err
			}
		}
		return values, nil
	}
}

// refinedPhase is the phase of a mixed street's round on which, with a
// peak term, the compiled homes with devices to refine publish the load
// of their refined plans (devices/refine) once the phases are over: the
// energy homes score the street on it, as `hearth sim` scores it on the
// refined compiled homes (homesolve's refineMixed). It follows the
// last phase the answers can reach.
const refinedPhase = energyround.MaxAnswers + 1

// compiledExact reports whether a compiled home of cfg (compiled names
// them) has a device with exact actions, which its plan refines.
func compiledExact(cfg *config.Config, compiled []string) bool {
	for _, h := range cfg.Neighbourhood.Homes {
		if !slices.Contains(compiled, h.Name) {
			continue
		}
		for d := range h.Devices {
			if h.Devices[d].Exact != nil {
				return true
			}
		}
	}
	return false
}

// newPhases returns the holder of a mixed street's final loads for a
// live home of cfg, subscribed on client; nil for a street of one kind.
func newPhases(client *live.Client, prefix string, keys *sign.Keyring, energyHomes, compiled []string, log *slog.Logger) *energyround.Phases {
	if len(energyHomes) == 0 || len(compiled) == 0 {
		return nil
	}
	p := energyround.NewPhases(prefix, keys, log)
	client.HandleMessages(energyround.Filter(prefix), func(t string, retained bool, payload []byte) {
		p.Receive(t, retained, payload) // a drop is logged there
	})
	return p
}

// answerPhases is the energy home's part in a mixed street's phases
// after its first answer (round x.Round, res): it publishes its final
// load of each phase and answers the compiled homes' loads of the next
// (energyround.Run from the plan it holds, m), until they keep their
// loads, its phase moves nobody, MaxAnswers, or x.Deadline. res gathers
// the sweeps and moves; its objective is the last phase's.
func (e *EnergyHome) answerPhases(ctx context.Context, res *EnergyRound, cfg *config.Config, m *street.Member, x energyround.Config, compiled []string) error {
	var signer *sign.Signer
	if x.Keys != nil {
		signer = x.Keys.Signer(e.cfg.Home)
	}
	want := energyround.Expect{Slots: len(m.Plan.Import), Slot0: x.Slot0}
	var again func()
	final := func(k int, moved bool) error {
		var err error
		again, err = energyround.Final(ctx, e.prefix, energyround.Load{Round: energyround.PhaseRound(res.Round, k), Home: e.cfg.Home,
			Slot0: x.Slot0.Format(time.RFC3339), ImportKW: slices.Clone(m.Plan.Import), Cost: m.Plan.Cost() - m.Plan.Coordination, Moved: moved}, signer, x.Publish, e.log)
		return err
	}
	await := func(k int) (map[string]energyround.Load, bool, error) {
		got, missing, err := e.phases.Await(ctx, energyround.PhaseRound(res.Round, k), compiled, want, x.Deadline, 0, again)
		if errors.Is(err, energyround.ErrPhaseTimedOut) {
			e.log.Warn("mixed street: the compiled homes' loads of the phase did not come; the plan is the one before it", "round", res.Round, "phase", k, "missing", strings.Join(missing, ","))
			res.CompiledMissing = missing
			return nil, false, nil
		}
		return got, err == nil, err
	}
	if err := final(0, res.Street.Moves > 0); err != nil {
		return err
	}
	if pk := street.PeakOf(cfg.Neighbourhood); pk.Weight <= 0 || len(pk.Slots) == 0 {
		// Without a peak term the compiled homes do not answer (as in
		// `hearth sim`): phase 0 is the round.
		return nil
	}
	prev, ok, err := await(0)
	if !ok {
		return err
	}
	loads := res.Street.Loads
	for k := 1; k <= energyround.MaxAnswers; k++ {
		cur, ok, err := await(k)
		if !ok {
			return err
		}
		if energyround.SameLoads(prev, cur, compiled) {
			break
		}
		res.Answers = k
		base := make([]float64, len(m.Plan.Import))
		for _, h := range compiled {
			for t, v := range cur[h].ImportKW {
				base[t] += v
			}
		}
		xk := x
		xk.Round, xk.Base = energyround.PhaseRound(res.Round, k), base
		if x.Street != nil {
			xk.Street = streetOfLoads(cfg, x.Energy, compiled, cur)
			res.street = xk.Street
		}
		r, err := energyround.Run(ctx, e.exch, m, xk)
		if err != nil {
			e.failPhase(ctx, x, k, m, err)
			return err
		}
		res.Street.Sweeps += r.Sweeps
		res.Street.Moves += r.Moves
		res.Street.Dropped += r.Dropped
		res.Street.Objective, res.Street.Others, res.Street.OthersCost, res.Street.Missing = r.Objective, r.Others, r.OthersCost, r.Missing
		loads = r.Loads
		if len(r.Missing) > 0 {
			return nil
		}
		if err := final(k, r.Moves > 0); err != nil {
			return err
		}
		if r.Moves == 0 {
			break
		}
		prev = cur
	}
	if !compiledExact(cfg, compiled) || x.Street == nil {
		return nil
	}
	// The compiled homes' refined loads: the street's objective on
	// them, as `hearth sim` reports it.
	got, ok, err := await(refinedPhase)
	if !ok {
		return err
	}
	st := streetOfLoads(cfg, x.Energy, compiled, got)
	s, ms, _ := energyround.View(st, x.Energy, m, loads)
	res.Street.Objective, res.street = s.Objective(ms), st
	return nil
}

// failPhase tells the street that phase k of round x.Round failed with
// err, when err says the street cannot keep a hard feeder limit
// (energy.ErrInfeasible): a final load of the phase with the reason
// (energyround.Infeasible), on which every home waiting for the phase
// fails its round with the same reason, as `hearth sim` fails the
// street. Other errors are this home's own and are not published.
func (e *EnergyHome) failPhase(ctx context.Context, x energyround.Config, k int, m *street.Member, err error) {
	if !errors.Is(err, energy.ErrInfeasible) {
		return
	}
	var signer *sign.Signer
	if x.Keys != nil {
		signer = x.Keys.Signer(e.cfg.Home)
	}
	l := energyround.Load{Round: energyround.PhaseRound(x.Round, k), Home: e.cfg.Home, Slot0: x.Slot0.Format(time.RFC3339), ImportKW: slices.Clone(m.Plan.Import)}
	if perr := energyround.Infeasible(ctx, e.prefix, l, err.Error(), signer, x.Publish); perr != nil {
		e.log.Warn("mixed street: the phase's failure not published", "round", x.Round, "phase", k, "err", perr)
	}
}

// slotRound reports whether round is the slot round of a boundary of
// slots of length slot (liveID), the live rounds the energy homes take
// part in besides --once.
func slotRound(round string, slot time.Duration) bool {
	at, ok := liveTime(round)
	return ok && slot > 0 && live.SlotStart(at, slot).Equal(at) && liveID(at) == round
}
