package local

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// MemoryFraction is the share of physical memory DefaultMemory gives the
// exact solvers: a quarter leaves room for the rest of the process (the
// problem itself, the protocol's messages, other agents in one process)
// and for other programs on a shared edge device.
const MemoryFraction = 4

// fallbackMemory is the budget when physical memory cannot be read.
const fallbackMemory = 1 << 30

// DefaultMemory returns the default memory budget of the exact local
// solvers in bytes: 1/MemoryFraction of the physical memory reported by
// /proc/meminfo, or 1 GiB where that cannot be read.
func DefaultMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return fallbackMemory
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil || kb <= 0 {
			return fallbackMemory
		}
		return kb * 1024 / MemoryFraction
	}
	return fallbackMemory
}
