//go:build cuda

package gpu

import "os"

// HEARTH_SAMPLER_IMAGE names a module image (PTX, cubin or fat binary)
// that the tests load instead of the embedded fat binary: the way to check
// a machine-code build of samplers.cu against the CPU on a GPU before
// committing it.
func init() {
	if p := os.Getenv("HEARTH_SAMPLER_IMAGE"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			panic(err)
		}
		ptx = string(b)
	}
}
