package solve

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hearth-dcop/hearth/internal/daemon"
	"github.com/hearth-dcop/hearth/internal/solvefile"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
	"github.com/hearth-dcop/hearth/mva/protocol"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/reform"
	"github.com/hearth-dcop/hearth/mva/sim"
	"github.com/hearth-dcop/hearth/sampler"
)

// Check validates the parsed flags and fills in --table's default. The
// error is a usage error, worded for the command line.
func (o *Options) Check() error {
	proto, ok := protocol.Lookup(o.Global)
	if !ok && o.Global != "none" {
		return fmt.Errorf("unknown --global %q (valid: %s)", o.Global, strings.Join(GlobalNames(), ", "))
	}
	if ok {
		if err := proto.Check(o.Params); err != nil {
			return fmt.Errorf("-p: %w", err)
		}
	}
	if o.Table == "" {
		// DMCMC: with a sampler, every agent fills its table as soon as
		// it starts, without waiting for its children.
		o.Table = "lazy"
		if o.Global == "dpop" && o.Local.Sampling() {
			o.Table = "eager"
		}
	}
	if o.Table != "lazy" && o.Table != "eager" {
		return fmt.Errorf("unknown --table %q (valid: lazy, eager)", o.Table)
	}
	if !slices.Contains(reform.Names(), o.Reform) {
		return fmt.Errorf("unknown --reform %q (valid: %s)", o.Reform, strings.Join(reform.Names(), ", "))
	}
	return o.Local.Validate()
}

// Distributed runs a protocol between the agents of p on the
// simulated runtime and reports the result in p's terms.
func Distributed(ctx context.Context, p *mva.Problem, o Options, dev *gpu.Device) (mva.Result, error) {
	d, err := Prepare(p, o, dev)
	if err != nil {
		return mva.Result{}, err
	}
	d.count()
	sol, err := pipeline.Solve(ctx, p, d.Pipeline, &sim.Runtime{Config: sim.Config{Delay: o.Delay}})
	if err != nil {
		return mva.Result{}, err
	}
	return d.Result(sol), nil
}

// Run is a protocol run chosen for a problem: the pipeline's
// options and the way from its solution to a result object. The
// simulated runtime (`hearth solve`) and the MQTT runtime (`hearth sim`,
// `hearth run`) share it, so that they run the very same agents.
type Run struct {
	p        *mva.Problem
	o        Options
	Pipeline pipeline.Options
	exact    bool
	gpu      bool

	// counters are the agents built for the run that count how their
	// best responses were computed (responseCounter), for Result's note.
	mu       sync.Mutex
	counters []responseCounter
}

// responseCounter is a protocol agent that counts its best responses
// computed by an exact solve and by block descent (mgm and mgm2 under
// response=3: localsearch.Responder.ResponseCounts).
type responseCounter interface {
	ResponseCounts() (exact, blocks int64)
}

// count makes the run keep the agents it builds that count their
// responses, for Result's note: for one run (hearth solve, hearth sim),
// not for a daemon's Prepared, whose rounds would pile up their agents.
func (d *Run) count() { d.Pipeline.Protocol = d.counting(d.Pipeline.Protocol) }

// counting wraps build so that the agents it builds that count their
// responses are kept for Result's note. Agents may be built concurrently.
func (d *Run) counting(build pipeline.ProtocolFactory) pipeline.ProtocolFactory {
	return func(n *mva.Node) (mva.Protocol, error) {
		a, err := build(n)
		if c, ok := a.(responseCounter); ok && err == nil {
			d.mu.Lock()
			d.counters = append(d.counters, c)
			d.mu.Unlock()
		}
		return a, err
	}
}

// responseNote says, when some agent computed a best response by an exact
// solve under response=3 (-p response_checks), how many agents stayed
// exact and how many block descent answered at least once: the option is
// exact only within its bounds (README, "Exact best responses for wide
// SHDS homes"). counts are each agent's (exact, blocks); agents that
// computed neither (bucket elimination or enumeration answers) are left
// out. Empty when no response was exact (-p response_checks=0: block
// descent only).
func responseNote(counts [][2]int64) string {
	var all, some, none, exact, blocks int64
	for _, c := range counts {
		switch {
		case c[0] == 0 && c[1] == 0:
			continue
		case c[1] == 0:
			all++
		case c[0] == 0:
			none++
		default:
			some++
		}
		exact += c[0]
		blocks += c[1]
	}
	if exact == 0 {
		return ""
	}
	return fmt.Sprintf("exact best responses (-p response_checks): %d of %d agents computed every response exactly, %d only some (block descent from a later question on, past -p response_checks or response_total), %d none (block descent from their first question on); %d exact and %d block-descent responses in all",
		all, all+some+none, some, none, exact, blocks)
}

// localDevice is the device the local solvers use: none for sampled rows
// computed one at a time (lazy tables), where a row's chains are too
// little work for the kernel launches: on an H100, D-Gibbs over SHDS
// dm_21_1_5 took 32.0 s with its rows sampled on the GPU and 9.8 s on the
// CPU (dm_21_1_6: 22.6 and 5.1 s). Eager tables (DMCMC) sample every row
// at once and keep the device.
func localDevice(dev *gpu.Device, o Options) *gpu.Device {
	if o.Table == "lazy" && o.Local.Sampling() {
		return nil
	}
	return dev
}

// Prepare chooses the protocol, the local solver and the
// reformulation o asks for.
func Prepare(p *mva.Problem, o Options, dev *gpu.Device) (*Run, error) {
	proto, ok := protocol.Lookup(o.Global)
	if !ok {
		return nil, fmt.Errorf("unknown --global %q", o.Global)
	}
	makeProto := proto.New
	if dev != nil && o.Global == "dpop" {
		makeProto = dpop.WithChains(gpuChains(dev))
	}
	if o.Reform == "" {
		o.Reform = "mva"
	}
	return &Run{
		p: p, o: o, exact: proto.Exact,
		gpu: dev != nil && (o.Global == "dpop" || o.Local.Name == "be"),
		Pipeline: pipeline.Options{
			Protocol:   makeProto,
			Solver:     StartSolver(o.Start, solvefile.GPUSolver(localDevice(dev, o), o.Local.Name, o.Local.Factory(o.Seed))),
			Eager:      o.Table == "eager",
			Seed:       o.Seed,
			Params:     o.Params,
			Reform:     o.Reform,
			MaxEntries: o.MaxEntries,
			Exact:      local.Exact,
			Sampler:    sampler.NewConditionalSampler,
		},
	}, nil
}

// algorithm is the result object's description of the run.
func (d *Run) algorithm() mva.Algorithm {
	o := d.o
	return mva.Algorithm{Global: o.Global, Local: o.Local.Name, Table: o.Table, Reform: o.Reform,
		Sampling: o.Local.Report(o.Seed), GPU: d.gpu}
}

// complete reports whether the run would have found a feasible
// assignment if there were one: an exact protocol over exact rows.
func (d *Run) complete() bool { return d.exact && !d.o.Local.Sampling() }

// Prepared is the run as `hearth run`'s daemon takes it.
func (d *Run) Prepared() daemon.Prepared {
	return daemon.Prepared{Options: d.Pipeline, Algorithm: d.algorithm(), Complete: d.complete(), Timeout: d.o.Timeout}
}

// Result reports a solution of the pipeline in the result object's terms.
func (d *Run) Result(sol pipeline.Solution) mva.Result {
	r := mva.NewResult(d.p, sol.Assign, sol.Cost)
	r.Optimal = r.Feasible && d.complete() && sol.Optimal
	r.Conclude(d.complete())
	r.Algorithm = d.algorithm()
	r.Metrics = sol.Outcome.Metrics
	d.mu.Lock()
	counts := make([][2]int64, len(d.counters))
	for i, c := range d.counters {
		counts[i][0], counts[i][1] = c.ResponseCounts()
	}
	d.mu.Unlock()
	if note := responseNote(counts); note != "" {
		r.Notes = append(r.Notes, note)
	}
	return r
}
