package report

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestChartScale: when the homes alone pile up in one slot at more than
// twice every other series' peak, the text chart's scale is the others'
// peak with head-room, the clipped slots are marked ↑ and the header says
// where the spike peaks; the image's axis stops above the same scale and
// its legend says the line is clipped. Without such a spike the scale is
// the highest peak and nothing is marked.
func TestChartScale(t *testing.T) {
	for _, c := range []struct {
		name          string
		alone         []float64
		scale, header string
		aloneLine     string
		clipped       bool
	}{
		{"spike", []float64{1, 50, 2}, "scale 0–15.0 kW; ↑ above it (uncoordinated peaks at 50.0 kW)", "", "▁↑▂", true},
		{"no spike", []float64{1, 20, 2}, "scale 0–20.0 kW\n", "", "▁█▂", false},
	} {
		h := &Homes{Neighbourhood: "n", Slots: []string{"00:00", "01:00", "02:00"}, SlotMinutes: 60, LoadKW: []float64{10, 10, 10}}
		h.Baselines.Uncoordinated = &Baseline{LoadKW: c.alone}
		h.Baselines.SHMGM = &Baseline{LoadKW: []float64{9, 12, 8}}
		var b strings.Builder
		h.profile(&b, TextOptions{})
		out := b.String()
		if !strings.Contains(out, c.scale) {
			t.Errorf("%s: no %q in\n%s", c.name, c.scale, out)
		}
		if !strings.Contains(out, "uncoordinated  "+c.aloneLine+"  peak") {
			t.Errorf("%s: uncoordinated not drawn %q in\n%s", c.name, c.aloneLine, out)
		}
		p, err := h.loadPlot()
		if err != nil {
			t.Fatal(err)
		}
		top := 20.0
		if c.clipped {
			top = 15
		}
		if p.Y.Max != 1.35*top {
			t.Errorf("%s: axis up to %v, want %v", c.name, p.Y.Max, 1.35*top)
		}
		files, err := h.WriteCharts(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		svg, err := os.ReadFile(files[1])
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(svg, []byte("clipped at 15.0")) != c.clipped {
			t.Errorf("%s: the legend says clipped %v", c.name, !c.clipped)
		}
	}
}
