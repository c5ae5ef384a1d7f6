//go:build unix

package baseline

import "syscall"

// cpuTime returns the process's user and system CPU time so far in
// seconds (0 where it cannot be read): benchmarks on a shared machine
// report it beside wall time, which other processes' load inflates.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
