package report

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
)

// TestCSVStartColumn: on uneven slots ([horizon] segments: two of 15
// minutes from 23:30, then two of an hour) the CSV tables with a row per
// slot label each with its start as a clock time, written out by hand
// here, in a last column after the columns they had before.
func TestCSVStartColumn(t *testing.T) {
	hz := devices.Horizon{Slots: 4, SlotMinutes: 15, Lengths: []int{15, 15, 60, 60}, Start: 23*60 + 30}
	starts := []string{"23:30", "23:45", "00:00", "01:00"}
	h := &Homes{
		Neighbourhood: "segments",
		SlotMinutes:   15,
		SlotLengths:   hz.Lengths,
		Slots:         SlotTimes(hz),
		LoadKW:        []float64{1, 2, 3, 4},
		Schedules: []HomePlan{{Home: "ash", Devices: []DevicePlan{{
			Device: "ev", Actions: []string{"off", "charge", "charge", "off"}, KW: []float64{0, 3.7, 3.7, 0},
		}}}},
	}
	dir := t.TempDir()
	if _, err := h.WriteCSV(dir); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file   string
		header []string
		// slot is the column of the slot number.
		slot int
	}{
		{"segments-schedule.csv", []string{"home", "device", "slot", "action", "kw", "start"}, 2},
		{"segments-load.csv", []string{"slot", "coordinated_kw", "uncoordinated_kw", "shmgm_kw", "start"}, 0},
	} {
		f, err := os.Open(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(recs[0], c.header) {
			t.Errorf("%s: header %v, want %v", c.file, recs[0], c.header)
		}
		if len(recs) != 1+len(starts) {
			t.Fatalf("%s: %d rows, want %d", c.file, len(recs)-1, len(starts))
		}
		for i, r := range recs[1:] {
			if r[c.slot] != string(rune('0'+i)) || r[len(r)-1] != starts[i] {
				t.Errorf("%s row %d: slot %q start %q, want %d at %s", c.file, i, r[c.slot], r[len(r)-1], i, starts[i])
			}
		}
	}
}
