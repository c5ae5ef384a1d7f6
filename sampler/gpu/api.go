package gpu

import (
	"context"
	"fmt"
	"strings"

	lgpu "github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
)

// Gibbs is sampler.Gibbs on a GPU: the same chains (see the package
// documentation), run on the device. It implements mva.LocalSolver and
// mva.TableSolver and is safe for concurrent use (calls queue on the
// device goroutine).
type Gibbs struct{ e *engine }

// NewGibbs returns a GPU Gibbs sampler for lp on dev, with the options
// of sampler.NewGibbs. It fails on invalid options, a malformed local
// problem or a nil device; in a build without the cuda tag it returns an
// error wrapping local/gpu.ErrNoCUDA.
func NewGibbs(lp *mva.LocalProblem, dev *lgpu.Device, o sampler.Options) (*Gibbs, error) {
	e, err := newEngine("gibbs", lp, dev, o, kindGibbs)
	if err != nil {
		return nil, err
	}
	return &Gibbs{e: e}, nil
}

// SolveRow samples the row of the given boundary values, as
// sampler.Gibbs.SolveRow does.
func (g *Gibbs) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	return g.e.solveRow(ctx, boundary, interior)
}

// SolveTable samples every unknown row of t, all (row, run) chains on the
// device.
func (g *Gibbs) SolveTable(ctx context.Context, t *mva.Table) error {
	return g.e.solveTable(ctx, t)
}

// Checks returns the cost-table entries read so far, counted as
// sampler.Gibbs counts them.
func (g *Gibbs) Checks() int64 { return g.e.checksSoFar() }

// Options returns the options in effect, defaults filled in.
func (g *Gibbs) Options() sampler.Options { return g.e.options() }

// OnDevice reports whether the chains run on the GPU; false when the
// problem is beyond the kernels' limits and the CPU sampler runs them.
func (g *Gibbs) OnDevice() bool { return g.e.onDevice() }

// MH is sampler.MH on a GPU, with the normal (default) or discrete
// proposal: the same chains, run on the device. It implements
// mva.LocalSolver and mva.TableSolver and is safe for concurrent use.
type MH struct{ e *engine }

// NewMH returns a GPU Metropolis-Hastings sampler for lp on dev, with the
// options of sampler.NewMH. Errors are NewGibbs's.
func NewMH(lp *mva.LocalProblem, dev *lgpu.Device, o sampler.Options) (*MH, error) {
	k := kindNormal
	if o.Proposal == sampler.ProposalDiscrete {
		k = kindDiscrete
	}
	e, err := newEngine("metropolis-hastings", lp, dev, o, k)
	if err != nil {
		return nil, err
	}
	return &MH{e: e}, nil
}

// SolveRow samples the row of the given boundary values, as
// sampler.MH.SolveRow does.
func (s *MH) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	return s.e.solveRow(ctx, boundary, interior)
}

// SolveTable samples every unknown row of t on the device.
func (s *MH) SolveTable(ctx context.Context, t *mva.Table) error {
	return s.e.solveTable(ctx, t)
}

// Checks returns the cost-table entries read so far, counted as sampler.MH
// counts them.
func (s *MH) Checks() int64 { return s.e.checksSoFar() }

// Options returns the options in effect, defaults filled in.
func (s *MH) Options() sampler.Options { return s.e.options() }

// OnDevice reports whether the chains run on the GPU.
func (s *MH) OnDevice() bool { return s.e.onDevice() }

// New returns the GPU sampler called name ("gibbs" or "mh", as
// sampler.New) for lp on dev.
func New(name string, lp *mva.LocalProblem, dev *lgpu.Device, o sampler.Options) (mva.LocalSolver, error) {
	switch name {
	case "gibbs":
		return NewGibbs(lp, dev, o)
	case "mh":
		return NewMH(lp, dev, o)
	}
	return nil, fmt.Errorf("unknown sampler %q (valid: %s)", name, strings.Join(sampler.Names(), ", "))
}
