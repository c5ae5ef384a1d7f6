//go:build cuda

package gpu

import _ "embed"

// ptx is the kernels' PTX, made by go generate from samplers.cu.
//
//go:embed samplers.ptx
var ptx string

// moduleKey names the module on a local/gpu.Device.
const moduleKey = "hearth/sampler/gpu"
