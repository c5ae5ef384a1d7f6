//go:build !unix

package sampler

import "time"

// cpuTime is unavailable here; benchmarks then report wall-time figures
// only.
func cpuTime() time.Duration { return 0 }
