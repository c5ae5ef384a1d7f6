//go:build !unix

// Package cputime reads the CPU time the process has used, for benchmarks
// that report throughput per core as well as per wall-clock second.
package cputime

import "time"

// Used is unavailable here and returns 0; benchmarks then report
// wall-time figures only.
func Used() time.Duration { return 0 }
