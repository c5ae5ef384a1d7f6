package bench

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Host describes this machine for the rows' host column: the CPU model
// and the number of CPUs Go may use, which is what timings depend on.
func Host() string {
	model := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.Join(strings.Fields(v), " ")
				break
			}
		}
		f.Close()
	}
	return fmt.Sprintf("%s, %d CPUs, %s/%s", model, runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
}
