package solve

import (
	"fmt"

	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
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

// gpuChains returns DPOP's UTIL chains on d (GPU-DBE): joins large enough
// to pay off (gpu.DefaultMinEntries) run on the device, where the tables
// that only feed the agent's later joins stay; the rest run on the CPU.
func gpuChains(d *gpu.Device) func() dpop.Chain {
	return func() dpop.Chain { return gpu.NewUtilChain(d, 0) }
}
