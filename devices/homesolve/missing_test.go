package homesolve

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestCSVBesideText: --csv writes the CSV files beside the text summary,
// not instead of it: the summary comes first, then the list of files,
// each of which exists; the csv format alone lists the files only.
func TestCSVBesideText(t *testing.T) {
	r, err := Load(filepath.Join("..", "..", "examples", "neighbourhood", "neighbourhood.toml"), false, Overrides{NoBaselines: true})
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.Report(nil, mva.Result{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		o       Output
		summary bool
	}{
		{"text with csv", Output{Format: "text", CSVBeside: true}, true},
		{"csv", Output{Format: "csv"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Dir = t.TempDir()
			var b strings.Builder
			if err := Write(&b, h, tc.o); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if got := strings.HasPrefix(out, "elm-close: 4 homes"); got != tc.summary {
				t.Errorf("summary first: %v, want %v:\n%s", got, tc.summary, out)
			}
			var files int
			for _, l := range strings.Split(out, "\n") {
				if strings.HasSuffix(l, ".csv") {
					files++
					if _, err := os.Stat(l); err != nil {
						t.Errorf("listed %s: %v", l, err)
					}
				}
			}
			if files == 0 {
				t.Errorf("no csv files listed:\n%s", out)
			}
		})
	}
}
