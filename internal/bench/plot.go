package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Panel geometry of the figures.
const (
	panelWidth  = 4.5 * vg.Inch
	panelHeight = 3.6 * vg.Inch
	plotDPI     = 110
)

// Plot writes, for every sweep of rows and every metric of e with data,
// one figure as SWEEP-METRIC.png and .svg in dir: one panel per algorithm
// group, one line per variant through the medians over seeds of the
// finished runs (failed runs leave gaps, as in the papers' figures). It
// returns the files written.
func Plot(dir string, e *Experiment, rows []Row) ([]string, error) {
	sweeps := map[string]Sweep{}
	for _, s := range e.Plan(false).Sweeps {
		sweeps[s.Name] = s
	}
	variants := variantNames(rows)
	var files []string
	for _, name := range sweepNames(rows) {
		sr := filter(rows, func(r Row) bool { return r.Sweep == name })
		s, ok := sweeps[name]
		if !ok {
			s = Sweep{Name: name, Title: name}
		}
		for _, m := range e.Metrics {
			panels, hasData := panelsOf(s, sr, m, variants)
			if !hasData {
				continue
			}
			base := filepath.Join(dir, name+"-"+m.Name)
			if err := render(base, panels); err != nil {
				return files, fmt.Errorf("plotting %s: %w", base, err)
			}
			files = append(files, base+".png", base+".svg")
		}
	}
	return files, nil
}

// panelsOf builds one plot per group; the bool says whether some line has a
// point.
func panelsOf(s Sweep, rows []Row, m Metric, variants []string) ([]*plot.Plot, bool) {
	labels := sortedLabels(rows)
	xOf := map[string]float64{}
	for _, r := range rows {
		xOf[r.XLabel] = r.X
	}
	ticks := make(plot.ConstantTicks, len(labels))
	for i, l := range labels {
		ticks[i] = plot.Tick{Value: xOf[l], Label: l}
	}
	hasData := false
	var panels []*plot.Plot
	for _, g := range groupNames(rows) {
		gr := filter(rows, func(r Row) bool { return r.Group == g })
		p := plot.New()
		p.Title.Text = g
		p.X.Label.Text = s.Title
		p.Y.Label.Text = m.Title
		p.X.Tick.Marker = ticks
		p.Legend.Top = true
		if s.LogX {
			p.X.Scale = plot.LogScale{}
		}
		if m.Log {
			p.Y.Scale = plot.LogScale{}
			p.Y.Tick.Marker = logTicks{}
		}
		lines := 0
		for _, v := range variantNames(gr) {
			var xys plotter.XYs
			for _, l := range labels {
				var ys []float64
				for _, r := range gr {
					if r.Variant == v && r.XLabel == l && r.Status == StatusOK {
						if y := m.Get(r); !math.IsNaN(y) && (!m.Log || y > 0) {
							ys = append(ys, y)
						}
					}
				}
				if len(ys) > 0 && (!s.LogX || xOf[l] > 0) {
					xys = append(xys, plotter.XY{X: xOf[l], Y: median(ys)})
				}
			}
			if len(xys) == 0 {
				continue
			}
			hasData = true
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				continue
			}
			i := slices.Index(variants, v)
			line.Color = plotutil.Color(i)
			line.Dashes = plotutil.Dashes(i)
			points.Color = plotutil.Color(i)
			points.Shape = plotutil.Shape(i)
			p.Add(line, points)
			lines++
			name := v
			if name == "" {
				name = g
			}
			p.Legend.Add(name, line, points)
		}
		if s.LogX && lines > 0 && p.X.Max <= p.X.Min*1.01 {
			p.X.Min, p.X.Max = p.X.Min/2, p.X.Max*2
		}
		switch {
		case m.Log && lines == 0:
			// A log axis needs a positive range even with no data.
			p.Y.Min, p.Y.Max = 1, 10
		case m.Log:
			// A single value gets a decade around it; then head-room
			// for the legend, a third of the height.
			if p.Y.Max <= p.Y.Min*1.01 {
				p.Y.Min, p.Y.Max = p.Y.Min/3, p.Y.Max*3
			}
			p.Y.Max *= math.Pow(p.Y.Max/p.Y.Min, 0.5)
		case lines > 0:
			p.Y.Max += 0.5 * (p.Y.Max - p.Y.Min)
		}
		panels = append(panels, p)
	}
	return panels, hasData
}

// render draws the panels side by side into base.png and base.svg.
func render(base string, panels []*plot.Plot) error {
	w := vg.Length(len(panels)) * panelWidth
	draws := func(c vg.CanvasSizer) {
		dc := draw.New(c)
		tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
		canvases := plot.Align([][]*plot.Plot{panels}, tiles, dc)
		for i, p := range panels {
			p.Draw(canvases[0][i])
		}
	}
	img := vgimg.NewWith(vgimg.UseWH(w, panelHeight), vgimg.UseDPI(plotDPI))
	draws(img)
	if err := writeFile(base+".png", vgimg.PngCanvas{Canvas: img}); err != nil {
		return err
	}
	svg := vgsvg.New(w, panelHeight)
	draws(svg)
	return writeFile(base+".svg", svg)
}

func writeFile(name string, wt io.WriterTo) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := wt.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func groupNames(rows []Row) []string {
	var out []string
	for _, r := range rows {
		if !slices.Contains(out, r.Group) {
			out = append(out, r.Group)
		}
	}
	return out
}

func variantNames(rows []Row) []string {
	var out []string
	for _, r := range rows {
		if !slices.Contains(out, r.Variant) {
			out = append(out, r.Variant)
		}
	}
	return out
}

// logTicks labels a log axis at 1, 2 and 5 times the powers of ten when it
// spans few decades, and at the powers of ten otherwise, so that an axis
// inside one decade still has labels (plot.LogTicks labels only powers).
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	steps := []float64{1, 2, 5}
	if math.Log10(hi/lo) > 4 {
		steps = []float64{1}
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for m := 1.0; m < 10; m++ {
			v := m * math.Pow(10, e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if slices.Contains(steps, m) {
				t.Label = tickLabel(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// tickLabel writes whole numbers below a million in full and the rest as
// %g with a short exponent: 0.05, 200, 20000, 1e6.
func tickLabel(v float64) string {
	if v >= 1 && v < 1e6 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	s := strconv.FormatFloat(v, 'g', 3, 64)
	return strings.NewReplacer("e+0", "e", "e+", "e", "e-0", "e-").Replace(s)
}
