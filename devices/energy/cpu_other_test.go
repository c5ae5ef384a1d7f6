//go:build !unix

package energy_test

import "time"

// cpuUsed is unavailable here: the benchmarks report wall time only.
func cpuUsed() time.Duration { return 0 }
