package baseline

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/internal/cputime"
	"github.com/hearth-dcop/hearth/internal/fixtures"
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
	}{{"fixed", `power_steps = "fixed"`}, {"auto", `power_steps = "auto"`}} {
		n := exampleStreet(b, v.steps)
		b.Run(v.name, func(b *testing.B) {
			cpu := cputime.Used()
			for b.Loop() {
				if _, err := SHMGM(context.Background(), n, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cputime.Used()-cpu).Seconds()*1e3/float64(b.N), "cpu-ms/op")
		})
	}
}

// exampleStreet loads the README's example street with line added after
// the kind of its two EV chargers and its battery ("" leaves it as it
// is).
func exampleStreet(tb testing.TB, line string) *devices.Neighbourhood {
	tb.Helper()
	cfg, err := config.Load(fixtures.ExampleStreet(tb, filepath.Join("..", ".."), line))
	if err != nil {
		tb.Fatal(err)
	}
	return cfg.Neighbourhood
}
