package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hearth-dcop/hearth/internal/daemon"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
	"github.com/hearth-dcop/hearth/mva/protocol"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
	"github.com/hearth-dcop/hearth/sampler"
)

// globalNames lists every --global: none, then the registered protocols.
func globalNames() []string { return append([]string{"none"}, protocol.Names()...) }

// paramFlag collects repeated -p name=value protocol parameters.
type paramFlag map[string]float64

func (p paramFlag) String() string {
	var parts []string
	for k, v := range p {
		parts = append(parts, k+"="+strconv.FormatFloat(v, 'g', -1, 64))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (p paramFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not name=value", s)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		var named bool
		if f, named = protocol.ParamValue(k, v); !named {
			if names := protocol.ParamValueNames(k); len(names) > 0 {
				return fmt.Errorf("parameter %s: %q is not a number or one of %s", k, v, strings.Join(names, ", "))
			}
			return fmt.Errorf("parameter %s: %q is not a number", k, v)
		}
	}
	p[k] = f
	return nil
}

// solveDistributed runs a protocol between the agents of p on the
// simulated runtime and reports the result in p's terms.
func solveDistributed(ctx context.Context, p *mva.Problem, o solveOptions, dev *gpu.Device) (mva.Result, error) {
	d, err := prepareDistributed(p, o, dev)
	if err != nil {
		return mva.Result{}, err
	}
	sol, err := pipeline.Solve(ctx, p, d.opts, &sim.Runtime{Config: sim.Config{Delay: o.delay}})
	if err != nil {
		return mva.Result{}, err
	}
	return d.result(sol), nil
}

// distributed is a protocol run chosen for a problem: the pipeline's
// options and the way from its solution to a result object. The
// simulated runtime (`hearth solve`) and the MQTT runtime (`hearth sim`,
// `hearth run`) share it, so that they run the very same agents.
type distributed struct {
	p     *mva.Problem
	o     solveOptions
	opts  pipeline.Options
	exact bool
	gpu   bool
}

// localDevice is the device the local solvers use: none for sampled rows
// computed one at a time (lazy tables), where a row's chains are too
// little work for the kernel launches: on an H100, D-Gibbs over SHDS
// dm_21_1_5 took 32.0 s with its rows sampled on the GPU and 9.8 s on the
// CPU (dm_21_1_6: 22.6 and 5.1 s). Eager tables (DMCMC) sample every row
// at once and keep the device.
func localDevice(dev *gpu.Device, o solveOptions) *gpu.Device {
	if o.table == "lazy" && o.local.sampling() {
		return nil
	}
	return dev
}

// prepareDistributed chooses the protocol, the local solver and the
// reformulation o asks for.
func prepareDistributed(p *mva.Problem, o solveOptions, dev *gpu.Device) (*distributed, error) {
	proto, ok := protocol.Lookup(o.global)
	if !ok {
		return nil, fmt.Errorf("unknown --global %q", o.global)
	}
	makeProto := proto.New
	if dev != nil && o.global == "dpop" {
		makeProto = dpop.WithKernel(gpuKernel(dev))
	}
	if o.reform == "" {
		o.reform = "mva"
	}
	return &distributed{
		p: p, o: o, exact: proto.Exact,
		gpu: dev != nil && (o.global == "dpop" || o.local.name == "be"),
		opts: pipeline.Options{
			Protocol:   makeProto,
			Solver:     startSolver(o.start, gpuSolver(localDevice(dev, o), o.local.name, o.local.factory(o.seed))),
			Eager:      o.table == "eager",
			Seed:       o.seed,
			Params:     o.params,
			Reform:     o.reform,
			MaxEntries: o.maxEntries,
			Exact:      local.Exact,
			Sampler:    sampler.NewConditionalSampler,
		},
	}, nil
}

// algorithm is the result object's description of the run.
func (d *distributed) algorithm() mva.Algorithm {
	o := d.o
	return mva.Algorithm{Global: o.global, Local: o.local.name, Table: o.table, Reform: o.reform,
		Sampling: o.local.report(o.seed), GPU: d.gpu}
}

// complete reports whether the run would have found a feasible
// assignment if there were one: an exact protocol over exact rows.
func (d *distributed) complete() bool { return d.exact && !d.o.local.sampling() }

// prepared is the run as `hearth run`'s daemon takes it.
func (d *distributed) prepared() daemon.Prepared {
	return daemon.Prepared{Options: d.opts, Algorithm: d.algorithm(), Complete: d.complete(), Timeout: d.o.timeout}
}

// result reports a solution of the pipeline in the result object's terms.
func (d *distributed) result(sol pipeline.Solution) mva.Result {
	r := mva.NewResult(d.p, sol.Assign, sol.Cost)
	r.Optimal = r.Feasible && d.complete() && sol.Optimal
	r.Conclude(d.complete())
	r.Algorithm = d.algorithm()
	r.Metrics = sol.Outcome.Metrics
	return r
}
