//go:build cuda

package gpu

import (
	"context"
	"errors"

	"github.com/hearth-dcop/hearth/local"
)

// UtilChain runs the join-projects of one DPOP agent's UTIL phase on the
// device (GPU-DBE), the way BE runs its buckets: a table that only feeds a
// later step stays in device memory, and what the agent needs on the host
// (the UTIL table it sends, the argmin tables VALUE decodes from) comes
// back once, straight into the agent's memory. It is mva/protocol/dpop's
// Chain; one is used for one UTIL phase and then closed. Like BE it is
// not safe for concurrent use; several may share one Device.
type UtilChain struct{ c *chain }

// NewUtilChain returns a chain on d that runs the joins of at least
// minEntries output entries × eliminated values (0: DefaultMinEntries;
// negative: every supported join) and leaves the others to the caller's
// CPU kernel.
func NewUtilChain(d *Device, minEntries int64) *UtilChain {
	if minEntries == 0 {
		minEntries = DefaultMinEntries
	}
	return &UtilChain{c: newChain(d, minEntries, 1)}
}

// Offload reports whether p runs through Step: the kernel supports it, it
// is large enough, and its inputs fit half the device's memory budget.
func (u *UtilChain) Offload(p *local.JoinProject) bool { return u.c.Offload(p) }

// Step computes p into out, and into argmin unless it is nil, exactly as
// p.Run does. With keep, the output may stay in device memory (out.Costs
// nil) for a later Step, which reads and frees it; when the device has no
// room for it, out.Costs is host memory of the chain's. Without keep,
// out.Costs must hold p.Rows() entries and receives the output. Inputs
// kept by earlier Steps are read on the device.
func (u *UtilChain) Step(ctx context.Context, p *local.JoinProject, out *local.Factor, keep bool, argmin []int32) error {
	if !keep && len(out.Costs) != p.Rows() {
		return errors.New("gpu: a UTIL step's output has no host memory")
	}
	mode := local.ArgminNone
	if argmin != nil {
		mode = local.ArgminHost
	}
	_, err := u.c.step(ctx, p, out, keep, !keep, mode, argmin)
	return err
}

// Host brings a table that a Step kept on the device into f.Costs (host
// memory of the chain's), for a join the CPU runs; a table already on the
// host is left alone.
func (u *UtilChain) Host(ctx context.Context, f *local.Factor) error {
	return u.c.dev.do(ctx, func(o *owner) error { return u.c.fetch(o, f) })
}

// Close frees the tables still on the device and the chain's host memory:
// the Costs that Host or a Step with keep set are not valid after it.
func (u *UtilChain) Close() error { return u.c.end() }
