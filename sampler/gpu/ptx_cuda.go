//go:build cuda

package gpu

import _ "embed"

// ptx is the kernels' module image: the fat binary go generate makes from
// samplers.cu (SASS for the common GPUs, PTX for the others).
//
//go:embed samplers.fatbin
var ptx string

// moduleKey names the module on a local/gpu.Device.
const moduleKey = "hearth/sampler/gpu"
