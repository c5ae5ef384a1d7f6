package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart geometry.
const (
	chartWidth  = 7 * vg.Inch
	chartHeight = 3.6 * vg.Inch
	chartDPI    = 110
)

// The series' styles: solid dark blue for the coordinated load, dashed
// grey for every home alone, dotted orange for SH-MGM.
var (
	coordinatedStyle   = draw.LineStyle{Color: color.RGBA{R: 0x1f, G: 0x4e, B: 0x9c, A: 0xff}, Width: vg.Points(2)}
	uncoordinatedStyle = draw.LineStyle{Color: color.RGBA{R: 0x70, G: 0x70, B: 0x70, A: 0xff}, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
	shmgmStyle         = draw.LineStyle{Color: color.RGBA{R: 0xe0, G: 0x7b, B: 0x00, A: 0xff}, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
	// With energy homes: solid green for the whole street's load, and a
	// thin line per energy home's meter (negative where it feeds back).
	streetStyle  = draw.LineStyle{Color: color.RGBA{R: 0x2e, G: 0x8b, B: 0x57, A: 0xff}, Width: vg.Points(2)}
	energyColors = []color.RGBA{{R: 0x8e, G: 0x44, B: 0xad, A: 0xff}, {R: 0xc0, G: 0x39, B: 0x2b, A: 0xff}, {R: 0x16, G: 0xa0, B: 0x85, A: 0xff}, {R: 0x7f, G: 0x8c, B: 0x8d, A: 0xff}, {R: 0xd3, G: 0x54, B: 0x00, A: 0xff}}
)

// WriteCharts draws the neighbourhood load profile — coordinated, every
// home alone, and SH-MGM-style, whichever are known; with energy homes
// the whole street's load and each energy home's meter, drawn below zero
// where it feeds back — as NAME-load.png and
// NAME-load.svg in dir, and returns the paths. The load is constant over a
// slot, so each series is a step line from the slot's start to its end.
func (h *Homes) WriteCharts(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p, err := h.loadPlot()
	if err != nil {
		return nil, err
	}
	base := filepath.Join(dir, FileBase(h.Neighbourhood)+"-load")
	img := vgimg.NewWith(vgimg.UseWH(chartWidth, chartHeight), vgimg.UseDPI(chartDPI))
	p.Draw(draw.New(img))
	if err := writeTo(base+".png", vgimg.PngCanvas{Canvas: img}); err != nil {
		return nil, err
	}
	svg := vgsvg.New(chartWidth, chartHeight)
	p.Draw(draw.New(svg))
	if err := writeTo(base+".svg", svg); err != nil {
		return []string{base + ".png"}, err
	}
	return []string{base + ".png", base + ".svg"}, nil
}

func (h *Homes) loadPlot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = h.Neighbourhood + ": neighbourhood load"
	p.X.Label.Text = "time"
	p.Y.Label.Text = "kW"
	p.Y.Min = 0
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	type series struct {
		name string
		load []float64
		st   draw.LineStyle
	}
	var ss []series
	if len(h.LoadKW) > 0 {
		ss = append(ss, series{"coordinated", h.LoadKW, coordinatedStyle})
	}
	if b := h.Baselines.Uncoordinated; b != nil && len(b.LoadKW) > 0 {
		ss = append(ss, series{"uncoordinated", b.LoadKW, uncoordinatedStyle})
	}
	if b := h.Baselines.SHMGM; b != nil && len(b.LoadKW) > 0 {
		ss = append(ss, series{"SH-MGM-style", b.LoadKW, shmgmStyle})
	}
	if e := h.EnergyHomes; e != nil {
		if len(ss) > 0 {
			// The series above are the compiled homes'.
			for i := range ss {
				ss[i].name = "compiled homes " + ss[i].name
			}
		}
		ss = append(ss, series{"street with energy homes", e.LoadKW, streetStyle})
		for i := range e.Homes {
			st := draw.LineStyle{Color: energyColors[i%len(energyColors)], Width: vg.Points(1)}
			ss = append(ss, series{e.Homes[i].Home + " (energy home, meter)", e.Homes[i].NetKW(), st})
		}
	}
	peaks := make([]float64, len(ss))
	for i, s := range ss {
		peaks[i] = maxOf(s.load)
	}
	// A series that dwarfs the others is drawn clipped at the scale
	// (chartScale), and its legend says where it peaks.
	top, clipped := chartScale(peaks)
	low := 0.0
	for _, s := range ss {
		for _, v := range s.load {
			low = math.Min(low, v)
		}
	}
	for i, s := range ss {
		xys := make(plotter.XYs, len(s.load)+1)
		for t, v := range s.load {
			if clipped[i] {
				v = math.Min(v, top)
			}
			xys[t] = plotter.XY{X: float64(t), Y: v}
		}
		xys[len(s.load)] = xys[len(s.load)-1]
		xys[len(s.load)].X = float64(len(s.load))
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", s.name, err)
		}
		l.StepStyle = plotter.PostStep
		l.LineStyle = s.st
		p.Add(l)
		label := fmt.Sprintf("%s (peak %.1f kW)", s.name, peaks[i])
		if clipped[i] {
			label = fmt.Sprintf("%s (peak %.1f kW, clipped at %.1f)", s.name, peaks[i], top)
		}
		p.Legend.Add(label, l)
	}
	// Head-room for the legend, above the scale: more for the energy
	// homes' lines.
	p.Y.Max = math.Max(1.35, 1.1+0.08*float64(len(ss))) * top
	if p.Y.Max <= 0 {
		p.Y.Max = 1
	}
	// Power fed back draws below zero.
	p.Y.Min = 1.1 * low
	p.X.Min, p.X.Max = 0, float64(max(len(h.Slots), 1))
	p.X.Tick.Marker = slotTicks(h.Slots, h.span())
	return p, nil
}

// slotTicks labels slot boundaries with clock times, about a dozen at
// most, the horizon's end included.
func slotTicks(slots []string, span string) plot.ConstantTicks {
	step := max(1, (len(slots)+11)/12)
	var ticks plot.ConstantTicks
	for t := 0; t <= len(slots); t++ {
		label := ""
		switch {
		case t == len(slots):
			if _, end, ok := strings.Cut(span, "–"); ok && t%step == 0 {
				label = end
			}
		case t%step == 0:
			label = slots[t]
		}
		ticks = append(ticks, plot.Tick{Value: float64(t), Label: label})
	}
	return ticks
}

func writeTo(name string, wt io.WriterTo) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := wt.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", name, err)
	}
	return f.Close()
}
