//go:build unix

// Package cputime reads the CPU time the process has used, for benchmarks
// that report throughput per core as well as per wall-clock second: on a
// shared machine other load stretches wall time but not the CPU time the
// benchmark itself used.
package cputime

import (
	"syscall"
	"time"
)

// Used returns the CPU time (user and system) the process has used so far.
func Used() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
