//go:build unix

package sampler

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used.
// Benchmarks divide by it, not only by wall time, to report throughput per
// core that other load on a shared machine does not distort.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
