package homesolve

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mva"
)

// TestMissingBaselinesNamed: every way a baseline is left out of a
// report names it, with why, in Baselines.Missing.
func TestMissingBaselinesNamed(t *testing.T) {
	path := filepath.Join("..", "..", "examples", "neighbourhood", "neighbourhood.toml")
	tests := []struct {
		name string
		o    Overrides
		skip string // SkipSHMGM's reason, if any
		want []report.MissingBaseline
	}{
		{"no baselines", Overrides{NoBaselines: true}, "", []report.MissingBaseline{
			{Name: "uncoordinated", Reason: "skipped (no baselines asked for)"},
			{Name: "shmgm", Reason: "skipped (no baselines asked for)"}}},
		{"rounds -1", Overrides{Rounds: -1}, "", []report.MissingBaseline{{Name: "shmgm", Reason: "skipped (--shmgm-rounds -1)"}}},
		{"stopped", Overrides{}, "stopped by --timeout 1s", []report.MissingBaseline{{Name: "shmgm", Reason: "skipped: stopped by --timeout 1s"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Load(path, false, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if tc.skip != "" {
				r.SkipSHMGM(tc.skip)
			}
			h, err := r.Report(nil, mva.Result{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(h.Baselines.Missing, tc.want) {
				t.Errorf("missing %+v, want %+v", h.Baselines.Missing, tc.want)
			}
			if h.Baselines.SHMGM != nil {
				t.Error("an SH-MGM-style baseline that was skipped")
			}
		})
	}
}
