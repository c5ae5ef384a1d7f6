package bench

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// row returns a finished row of instance (sweep n, x label, seed).
func row(alg string, label string, seed uint64, obj float64, optimal bool) Row {
	return Row{
		Experiment: "fake", Sweep: "n", X: float64(len(label)), XLabel: label, Seed: seed,
		Algorithm: alg, Group: alg, Global: "dpop", Local: "be", Reform: "mva", Device: "cpu",
		Status: StatusOK, Sense: "min", Objective: obj, Optimal: optimal,
		Reference: math.NaN(), GapPct: math.NaN(), SimTimeMs: 1, WallMs: 1,
		PeakLoad: math.NaN(), Price: math.NaN(),
	}
}

func TestCheck(t *testing.T) {
	ok := []Row{row("A", "1", 1, 10, true), row("B", "1", 1, 10, true), row("C", "1", 1, 12, false), row("A", "1", 2, 7, true)}
	if err := Check(ok); err != nil {
		t.Fatalf("consistent rows: %v", err)
	}
	infeasible := row("D", "1", 1, math.NaN(), false)
	infeasible.Status = StatusInfeasible
	nan := row("E", "1", 1, 11, false)
	nan.SimTimeMs = math.NaN()
	for _, tc := range []struct {
		name string
		rows []Row
		want string
	}{
		{"disagree", []Row{row("A", "1", 1, 10, true), row("B", "1", 1, 11, true)}, "exact algorithms disagree"},
		{"better than optimum", []Row{row("A", "1", 1, 10, true), row("C", "1", 1, 9, false)}, "better than the optimum"},
		{"infeasible vs found", []Row{infeasible, row("C", "1", 1, 9, false)}, "proved the instance infeasible"},
		{"nan metric", []Row{nan}, "sim_time_ms is NaN"},
		{"error row", []Row{{Experiment: "fake", Status: StatusError, Error: "kaput"}}, "kaput"},
	} {
		err := Check(tc.rows)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func TestScore(t *testing.T) {
	rows := []Row{row("heur", "1", 1, 12, false), row("exact", "1", 1, 10, true), row("heur2", "1", 1, 11, false),
		row("heur", "1", 2, 12, false), row("heur2", "1", 2, 8, false)}
	failed := row("slow", "1", 1, math.NaN(), false)
	failed.Status = StatusTimeout
	rows = append(rows, failed)
	Score(rows)
	// Seed 1: the proof wins over a better... there is none; 10 is the
	// reference. Seed 2: no proof, the best found (8) is.
	want := []float64{20, 0, 10, 50, 0}
	for i, w := range want {
		if math.Abs(rows[i].GapPct-w) > 1e-12 {
			t.Errorf("row %d (%s seed %d): gap %v, want %v", i, rows[i].Algorithm, rows[i].Seed, rows[i].GapPct, w)
		}
	}
	if !math.IsNaN(rows[5].GapPct) || rows[5].Reference != 10 {
		t.Errorf("timeout row: gap %v reference %v, want NaN and 10", rows[5].GapPct, rows[5].Reference)
	}
	// Maximisation: a utility of 8 against an optimum of 10 is 20% off.
	max := []Row{row("exact", "1", 1, 10, true), row("heur", "1", 1, 8, false)}
	for i := range max {
		max[i].Sense = "max"
	}
	Score(max)
	if max[1].GapPct != 20 || max[1].Reference != 10 {
		t.Errorf("max: gap %v reference %v, want 20 and 10", max[1].GapPct, max[1].Reference)
	}
}

// equalRows compares rows with NaN equal to NaN.
func equalRows(a, b []Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		for _, p := range []*[2]float64{{x.Objective, y.Objective}, {x.Reference, y.Reference}, {x.GapPct, y.GapPct},
			{x.SimTimeMs, y.SimTimeMs}, {x.WallMs, y.WallMs}, {x.PeakLoad, y.PeakLoad}, {x.Price, y.Price}, {x.X, y.X}} {
			if !(p[0] == p[1] || math.IsNaN(p[0]) && math.IsNaN(p[1])) {
				return false
			}
		}
		x.Objective, x.Reference, x.GapPct, x.SimTimeMs, x.WallMs, x.PeakLoad, x.Price, x.X = 0, 0, 0, 0, 0, 0, 0, 0
		y.Objective, y.Reference, y.GapPct, y.SimTimeMs, y.WallMs, y.PeakLoad, y.Price, y.X = 0, 0, 0, 0, 0, 0, 0, 0
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

func sampleRows() []Row {
	a := row("A, with comma", "0.4", 1, 10.5, true)
	a.Runs, a.Trials, a.NCCC, a.Messages, a.Internal, a.MaxBytes, a.Bytes = 10, 100, 7, 8, 9, 10, 11
	a.Host, a.Error, a.Table, a.Variant, a.PeakLoad, a.Price = "cpu \"x\"", "", "lazy", "MVA-lazy", 49.4, 12.25
	b := row("B", "8x4", 3, math.NaN(), false)
	b.Status, b.Error, b.Device = StatusTimeout, "line one\nline two", "gpu"
	return []Row{a, b}
}

func TestCSVRoundTrip(t *testing.T) {
	rows := sampleRows()
	var buf bytes.Buffer
	if err := WriteCSV(&buf, rows); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(buf.String(), "\n"); first != strings.Join(Header, ",") {
		t.Errorf("header line %q", first)
	}
	got, err := ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !equalRows(got, rows) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, rows)
	}
}

func TestReadCSVErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, sampleRows()); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(buf.String(), ",10.5,", ",ten,", 1)
	if _, err := ReadCSV(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 2: column objective") {
		t.Errorf("bad number: %v", err)
	}
	if _, err := ReadCSV(strings.NewReader("experiment,sweep\nx,y\n")); err == nil || !strings.Contains(err.Error(), "missing column") {
		t.Errorf("short header: %v", err)
	}
	if _, err := ReadCSV(strings.NewReader("")); err == nil {
		t.Error("empty input: no error")
	}
}

func FuzzReadCSV(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, sampleRows()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.String())
	f.Add(strings.Join(Header, ",") + "\n")
	f.Add("experiment\n\"")
	f.Fuzz(func(t *testing.T, s string) {
		rows, err := ReadCSV(strings.NewReader(s))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteCSV(&out, rows); err != nil {
			t.Fatal(err)
		}
		again, err := ReadCSV(&out)
		if err != nil {
			t.Fatalf("re-reading what WriteCSV wrote: %v", err)
		}
		if !equalRows(rows, again) {
			t.Fatalf("second round trip differs")
		}
	})
}

func TestMerge(t *testing.T) {
	cpu := []Row{row("BE", "10", 1, 50, true), row("GPU-BE", "10", 1, math.NaN(), false)}
	cpu[1].Device, cpu[1].Status = "gpu", StatusUnavailable
	gpu := []Row{row("GPU-BE", "10", 1, 50, true)}
	gpu[0].Device, gpu[0].SimTimeMs, gpu[0].Host = "gpu", 0.5, "H100"
	m := Merge(cpu, gpu)
	if len(m) != 2 || m[1].Status != StatusOK || m[1].Host != "H100" || m[1].GapPct != 0 {
		t.Fatalf("merged rows: %+v", m)
	}
	e := GPUDBE()
	var sum bytes.Buffer
	if err := Summarize(&sum, e, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "| GPU-BE vs BE (sim_time_ms) | 2× |") {
		t.Errorf("summary of merged rows lacks the 2× speed-up:\n%s", sum.String())
	}
}

func TestSummarize(t *testing.T) {
	var rows []Row
	for seed, x := range []float64{1, 2, 6} {
		r := row("A", "1", uint64(seed+1), 10, true)
		r.SimTimeMs = x
		rows = append(rows, r)
	}
	t1 := row("B", "1", 1, math.NaN(), false)
	t1.Status = StatusTimeout
	b2 := row("B", "1", 2, 10, true)
	b2.SimTimeMs = 4
	t3 := row("C", "1", 1, math.NaN(), false)
	t3.Status = StatusMemory
	rows = append(rows, t1, b2, t3)
	e := &Experiment{Name: "fake", Metrics: []Metric{SimTime}, Plan: func(bool) Plan { return Plan{} }}
	var buf bytes.Buffer
	if err := Summarize(&buf, e, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### fake: n", "| algorithm | 1 |", "| A | 2 |", "| B | 4 (1/2) |", "| C | memory |"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestPlot(t *testing.T) {
	var rows []Row
	for _, l := range []string{"1", "22", "333"} {
		for _, g := range []string{"A", "B"} {
			r := row(g, l, 1, 10, true)
			r.Variant = "v"
			r.SimTimeMs = float64(len(l)) * 3
			rows = append(rows, r)
		}
	}
	// A group with a single point, and a metric with no data (gaps of
	// failed runs only), must not break the log axes.
	one := row("C", "1", 1, 10, true)
	rows = append(rows, one)
	Score(rows)
	dir := t.TempDir()
	e := &Experiment{Name: "fake", Metrics: []Metric{SimTime, Gap, Internal}, Plan: func(bool) Plan { return Plan{} }}
	files, err := Plot(dir, e, rows)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"n-sim_time_ms.png", "n-sim_time_ms.svg", "n-gap_pct.png", "n-gap_pct.svg"}
	if len(files) != len(want) {
		t.Fatalf("files %v, want %v (internal messages are all zero: no plot)", files, want)
	}
	for i, w := range want {
		if filepath.Base(files[i]) != w {
			t.Errorf("file %d: %s, want %s", i, files[i], w)
		}
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds().Dx() < 1000 {
		t.Errorf("PNG: %v, width %d", err, img.Bounds().Dx())
	}
	svg, err := os.ReadFile(files[1])
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("SVG: %v", err)
	}
}

func TestLogTicks(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks{}).Ticks(0.03, 0.4) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0.05 0.1 0.2" {
		t.Errorf("labels within a decade: %q", got)
	}
	labels = nil
	for _, tk := range (logTicks{}).Ticks(1, 1e6) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "1 10 100 1000 10000 100000 1e6" {
		t.Errorf("labels over six decades: %q", got)
	}
}
