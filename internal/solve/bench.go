package solve

import (
	"context"
	"fmt"
	"github.com/hearth-dcop/hearth/internal/solvefile"
	"sync"

	"github.com/hearth-dcop/hearth/internal/bench"
	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/reform"
	"github.com/hearth-dcop/hearth/sampler"
)

// Bench runs `hearth bench`'s algorithms through the code path of
// `hearth solve` (Central and Distributed) and owns the GPU
// device that GPU rows use in a cuda build.
type Bench struct {
	once sync.Once
	dev  *gpu.Device
	err  error
}

// Close closes the device, if one was opened.
func (g *Bench) Close() {
	if g.dev != nil {
		g.dev.Close()
	}
}

// Solve is the bench.SolveFunc of `hearth bench`.
func (g *Bench) Solve(ctx context.Context, p *mva.Problem, a bench.Algorithm, seed uint64) (mva.Result, error) {
	o := Options{Global: a.Global, Table: a.Table, Reform: a.Reform, Seed: seed, Params: a.Params, MaxEntries: a.MaxEntries, Delay: a.Delay,
		Local: solvefile.Local{Name: a.Local, Runs: a.Runs, Trials: a.Trials, Temperature: a.Temperature, Proposal: a.Proposal, Alpha: 0.05}}
	if o.Local.Runs == 0 {
		o.Local.Runs = sampler.DefaultRuns
	}
	if o.Local.Trials == 0 {
		o.Local.Trials = sampler.DefaultTrials
	}
	if o.Local.Proposal == "" {
		o.Local.Proposal = sampler.ProposalNormal
	}
	if err := o.Local.Validate(); err != nil {
		return mva.Result{}, err
	}
	var dev *gpu.Device
	if a.GPU {
		// As `hearth solve --gpu on`: bucket elimination's large buckets,
		// DPOP's large UTIL joins and the samplers' chains on the device.
		var err error
		if dev, err = g.Device(); err != nil {
			return mva.Result{}, err
		}
	}
	if a.Global == "none" {
		return solvefile.Central(ctx, p, &o.Local, seed, dev)
	}
	if o.Reform == "" {
		o.Reform = "mva"
	}
	if o.MaxEntries == 0 {
		o.MaxEntries = reform.DefaultMaxEntries
	}
	if o.Params == nil {
		o.Params = map[string]float64{}
	}
	if err := o.Check(); err != nil { // and --table's default
		return mva.Result{}, err
	}
	return Distributed(ctx, p, o, dev)
}

// Device returns the GPU for a GPU row: opened on first use, in a cuda
// build with a usable device; otherwise the row is unavailable.
func (g *Bench) Device() (*gpu.Device, error) {
	g.once.Do(func() {
		if !gpu.Available() {
			g.err = fmt.Errorf("no usable GPU in this build: %w", bench.ErrUnavailable)
			return
		}
		if g.dev, g.err = gpu.Open(); g.err != nil {
			g.err = fmt.Errorf("%w: %w", g.err, bench.ErrUnavailable)
		}
	})
	return g.dev, g.err
}
