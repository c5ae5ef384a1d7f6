//go:build !unix

package baseline

// cpuTime is 0 where the process's CPU time is not read.
func cpuTime() float64 { return 0 }
