package solve

import (
	"fmt"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/sampler"
	sgpu "github.com/hearth-dcop/hearth/sampler/gpu"
)

// OpenGPU applies --gpu: off never touches a device; on opens one or fails
// with the reason; auto opens one when a cuda build finds a usable device
// and quietly uses the CPU otherwise. The default (non-cuda) build has no
// device, so on fails there with "built without CUDA support".
func OpenGPU(mode string) (*gpu.Device, error) {
	switch mode {
	case "off":
		return nil, nil
	case "on":
		d, err := gpu.Open()
		if err != nil {
			return nil, fmt.Errorf("--gpu on: %w", err)
		}
		return d, nil
	case "auto":
		if !gpu.Available() {
			return nil, nil
		}
		d, err := gpu.Open()
		if err != nil {
			return nil, nil
		}
		return d, nil
	}
	return nil, fmt.Errorf("unknown --gpu %q (valid: auto, on, off)", mode)
}

// gpuSolver wraps a solver factory so that, with a device, bucket
// elimination runs its large buckets on d (the threshold is
// gpu.DefaultMinEntries output entries × eliminated values, measured on an
// H200: below it a kernel launch and its copies cost more than the CPU) and
// the samplers run their chains there — the same chains as on the CPU, so
// the options are taken from the CPU sampler next builds.
func gpuSolver(d *gpu.Device, name string, next mva.SolverFactory) mva.SolverFactory {
	if d == nil {
		return next
	}
	switch name {
	case "be":
		return func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
			return gpu.NewBE(lp, d, gpu.BEOptions{})
		}
	case "gibbs", "mh", LocalAuto:
		return func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
			cpu, err := next(lp)
			if err != nil {
				return nil, err
			}
			if _, exact := cpu.(*local.BE); exact {
				// auto, where bucket elimination fits.
				return gpu.NewBE(lp, d, gpu.BEOptions{})
			}
			o, ok := cpu.(interface{ Options() sampler.Options })
			if !ok {
				return cpu, nil
			}
			sname := name
			if name == LocalAuto {
				sname = "gibbs"
			}
			return sgpu.New(sname, lp, d, o.Options())
		}
	}
	return next
}

// gpuChains returns DPOP's UTIL chains on d (GPU-DBE): joins large enough
// to pay off (gpu.DefaultMinEntries) run on the device, where the tables
// that only feed the agent's later joins stay; the rest run on the CPU.
func gpuChains(d *gpu.Device) func() dpop.Chain {
	return func() dpop.Chain { return gpu.NewUtilChain(d, 0) }
}
