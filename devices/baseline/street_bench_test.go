package baseline

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
)

// BenchmarkStreetSHMGM runs the SH-MGM-style baseline on the README's
// example street (examples/neighbourhood) as `hearth sim` does, with the
// catalogue's fixed power levels and with power_steps = "auto" on its
// two EV chargers and its battery; the ratio auto/fixed is the cost of
// the automatic levels in the baseline. Besides wall time it reports the
// process's CPU time per run (cpu-ms/op), which a loaded machine does not
// inflate.
func BenchmarkStreetSHMGM(b *testing.B) {
	for _, v := range []struct {
		name  string
		steps string
	}{{"fixed", ""}, {"auto", `power_steps = "auto"`}} {
		n := exampleStreet(b, v.steps)
		b.Run(v.name, func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				if _, err := SHMGM(context.Background(), n, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuTime()-cpu)*1e3/float64(b.N), "cpu-ms/op")
		})
	}
}

// exampleStreet loads the README's example street with line added after
// the kind of its two EV chargers and its battery ("" leaves it as it
// is).
func exampleStreet(tb testing.TB, line string) *devices.Neighbourhood {
	tb.Helper()
	dir := tb.TempDir()
	src := filepath.Join("..", "..", "examples", "neighbourhood")
	files, err := filepath.Glob(filepath.Join(src, "*.toml"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("the example street: %v", err)
	}
	kind := regexp.MustCompile(`(?m)^kind = "(ev_wallbox_7kw|ev_wallbox_11kw|home_battery)".*$`)
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		if line != "" {
			text = kind.ReplaceAll(text, []byte("$0\n"+line))
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), text, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	cfg, err := config.Load(filepath.Join(dir, "neighbourhood.toml"))
	if err != nil {
		tb.Fatal(err)
	}
	return cfg.Neighbourhood
}
