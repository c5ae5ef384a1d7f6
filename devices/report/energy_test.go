package report

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// energyStreet is a two-slot street with one compiled home's load and
// an energy home that imports in slot 0 and feeds back in slot 1.
func energyStreet(compiled bool) *Homes {
	h := &Homes{Neighbourhood: "rowan", SlotMinutes: 30, Slots: []string{"10:00", "10:30"}, Currency: "$",
		EnergyHomes: &EnergyStreet{LoadKW: []float64{3.5, 1}, PeakKW: 3.5, FeederLimitKW: 5, CommittedKW: []float64{3.5},
			Homes: []EnergyHome{{Home: "ash", Bill: 0.4, PeakKW: 2.5, ImportKW: []float64{2.5, 0}, ExportKW: []float64{0, 1.5},
				GoalsTotal: 1, GoalsMissed: []GoalMissed{}, CommittedKW: []float64{2.5},
				Storage: []Storage{{Name: "battery", PowerKW: []float64{2, -2}, EnergyKWh: []float64{1, 1.95, 0.9}}}}}}}
	if compiled {
		h.LoadKW = []float64{1, 1}
		h.Schedules = []HomePlan{}
	}
	return h
}

// TestEnergyCSV: a street's energy homes are in the schedule and homes
// tables, and NAME-energy.csv has the street's load, the meter (negative
// where the home feeds back) and each storage's power and energy, with
// the figures of the result.
func TestEnergyCSV(t *testing.T) {
	cases := []struct {
		name     string
		compiled bool
	}{
		{"energy homes only", false},
		{"mixed street", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := energyStreet(c.compiled)
			dir := t.TempDir()
			files, err := h.WriteCSV(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 4 {
				t.Fatalf("files %v", files)
			}
			read := func(name string) [][]string {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				return recs
			}
			want := map[string][][]string{
				"rowan-schedule.csv": {ScheduleHeader, {"ash", "battery", "0", "charge", "2", "10:00"}, {"ash", "battery", "1", "discharge", "-2", "10:30"}},
				// 2.5 kW for half an hour, then 1.5 kW fed back.
				"rowan-homes.csv": {HomesHeader, {"ash", "0.5", "0.4", "2.5", "1", "1"}},
				"rowan-energy.csv": {EnergyHeader, {"street", "load", "0", "3.5", "", "10:00"}, {"street", "load", "1", "1", "", "10:30"},
					{"ash", "meter", "0", "2.5", "", "10:00"}, {"ash", "meter", "1", "-1.5", "", "10:30"},
					{"ash", "battery", "0", "2", "1.95", "10:00"}, {"ash", "battery", "1", "-2", "0.9", "10:30"}},
			}
			for name, rows := range want {
				got := read(name)
				if len(got) != len(rows) {
					t.Errorf("%s: %v, want %v", name, got, rows)
					continue
				}
				for i := range rows {
					for j := range rows[i] {
						if got[i][j] != rows[i][j] {
							a, errA := strconv.ParseFloat(got[i][j], 64)
							b, errB := strconv.ParseFloat(rows[i][j], 64)
							if errA != nil || errB != nil || a-b > 1e-9 || b-a > 1e-9 {
								t.Errorf("%s row %d: %v, want %v", name, i, got[i], rows[i])
							}
						}
					}
				}
			}
		})
	}
}

// TestEnergyChart: the chart draws the whole street's load and each
// energy home's meter, below zero where it feeds back.
func TestEnergyChart(t *testing.T) {
	for _, compiled := range []bool{false, true} {
		h := energyStreet(compiled)
		p, err := h.loadPlot()
		if err != nil {
			t.Fatal(err)
		}
		if p.Y.Min > -1.5 {
			t.Errorf("compiled %v: the axis starts at %g kW; ash feeds back 1.5 kW", compiled, p.Y.Min)
		}
		files, err := h.WriteCharts(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		svg, err := os.ReadFile(files[1])
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"street with energy homes", "ash (energy home, meter)"} {
			if !bytes.Contains(svg, []byte(s)) {
				t.Errorf("compiled %v: the SVG has no %q", compiled, s)
			}
		}
	}
}

// TestEnergyFeederText: the text says the feeder limit, whether the
// street's committed caps keep it in every window or by how much they
// exceed it where, and what each energy home commits to.
func TestEnergyFeederText(t *testing.T) {
	cases := []struct {
		name   string
		excess []float64
		want   []string
	}{
		{"kept", nil, []string{"feeder limit 5.00 kW on the committed caps, energy homes included: kept in every window (kW per window: 3.50)", "commits (highest import per window) 2.50 kW"}},
		{"exceeded", []float64{0.75}, []string{"EXCEEDED in window 0 by 0.75 kW"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := energyStreet(false)
			h.EnergyHomes.FeederExcessKW = c.excess
			var b bytes.Buffer
			if err := h.WriteText(&b, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !bytes.Contains(b.Bytes(), []byte(w)) {
					t.Errorf("no %q in:\n%s", w, b.String())
				}
			}
		})
	}
	h := energyStreet(false)
	h.EnergyHomes.FeederLimitKW, h.EnergyHomes.CommittedKW, h.EnergyHomes.Homes[0].CommittedKW = 0, nil, nil
	var b bytes.Buffer
	if err := h.WriteText(&b, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte("feeder")) || bytes.Contains(b.Bytes(), []byte("commits")) {
		t.Errorf("a street without a feeder limit mentions one:\n%s", b.String())
	}
}
