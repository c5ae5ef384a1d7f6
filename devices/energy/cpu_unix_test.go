//go:build unix

package energy_test

import (
	"syscall"
	"time"
)

// cpuUsed returns the CPU time (user and system) of this process and of
// its children it has waited for: CBC runs as a child.
func cpuUsed() time.Duration {
	var self, kids syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids) != nil {
		return 0
	}
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + kids.Utime.Nano() + kids.Stime.Nano())
}
