package live

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/homesolve"
)

// unevenStreet copies the live test street into a folder with its
// horizon cut into 8 quarter hours and then 22 hours (24 h in all), and
// extra appended to alder's file; it returns the street's path.
func unevenStreet(t *testing.T, extra string) string {
	t.Helper()
	return copyStreet(t, func(f, s string) string {
		switch f {
		case "street.toml":
			s = strings.Replace(s, "slots = 24\nslot = \"1h\"\n", "segments = [{ slot = \"15m\", count = 8 }, { slot = \"1h\", count = 22 }]\n", 1)
		case "alder.toml":
			s = strings.Replace(s, "background_kw = 0.4\n", "background_kw = 0.4\n"+extra, 1)
		}
		return s
	})
}

// TestLoadRollingUneven: on a live horizon of uneven slots every round
// lays the segments' pattern from the slot that holds the clock (on the
// first segment's grid), so the quarter hours always come first; goals
// at clock times map to the first boundary at or after them, a price
// period prices the slots whose start it holds, a published series is
// averaged over each slot's own span, and commands cover slot 0's own
// span.
func TestLoadRollingUneven(t *testing.T) {
	path := unevenStreet(t, "")
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	lengths := slices.Repeat([]int{15}, 8)
	lengths = append(lengths, slices.Repeat([]int{60}, 22)...)
	for _, tc := range []struct {
		now, start time.Time
		goal       int // alder's "before 07:00"
	}{
		{time.Date(2026, 11, 26, 5, 40, 0, 0, time.Local), time.Date(2026, 11, 26, 5, 30, 0, 0, time.Local), 6},
		{time.Date(2026, 11, 26, 6, 10, 0, 0, time.Local), time.Date(2026, 11, 26, 6, 0, 0, 0, time.Local), 4},
		// Past 07:00 the goal is the next day's: 2 h of quarter hours
		// from 07:15, then hours from 09:15 to 07:15 (boundary 30).
		{time.Date(2026, 11, 26, 7, 20, 0, 0, time.Local), time.Date(2026, 11, 26, 7, 15, 0, 0, time.Local), 30},
	} {
		in := NewInputs(cfg, "hearth", "alder", fixedClock(t, tc.now), nil)
		// A quarter-hourly price series over 09:00–10:00.
		at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.Local)
		in.Handle(PriceTopic("hearth", "import"), []byte(fmt.Sprintf(`{"start":%q,"step":"15m","values":[0.1,0.2,0.3,0.4]}`, at.Format(time.RFC3339))))
		r, hz, _, err := in.Load(path, homesolve.Overrides{}, tc.now)
		if err != nil {
			t.Fatalf("%v: %v", tc.now, err)
		}
		n := r.Model()
		if !hz.Start.Equal(tc.start) || hz.Slot != 15*time.Minute || hz.Slots != 30 || !hz.End().Equal(tc.start.Add(24*time.Hour)) {
			t.Fatalf("%v: horizon %+v, end %v", tc.now, hz, hz.End())
		}
		if !slices.Equal(n.Horizon.Lengths, lengths) || n.Horizon.Start != tc.start.Hour()*60+tc.start.Minute() {
			t.Fatalf("%v: model horizon %+v", tc.now, n.Horizon)
		}
		if k, ok := hz.SlotOf(tc.now); k != 0 || !ok {
			t.Errorf("%v: now in slot %d %v", tc.now, k, ok)
		}
		// Slot 9 is the second hour: 2 h + 1 h after the start.
		if a, b := hz.Times(9); !a.Equal(tc.start.Add(3*time.Hour)) || !b.Equal(tc.start.Add(4*time.Hour)) {
			t.Errorf("%v: slot 9 runs %v–%v", tc.now, a, b)
		}
		if k, ok := hz.SlotOf(tc.start.Add(3*time.Hour + 59*time.Minute)); k != 9 || !ok {
			t.Errorf("%v: slot %d %v holds 3:59 after the start, want 9", tc.now, k, ok)
		}
		a := home(r, "alder")
		found := false
		for _, rule := range a.Rules {
			if strings.HasPrefix(rule.Text, "charge geq 40") {
				found = true
				if rule.T1 != tc.goal {
					t.Errorf("%v: %q at boundary %d, want %d", tc.now, rule.Text, rule.T1, tc.goal)
				}
			}
		}
		if !found {
			t.Errorf("%v: alder's goal left out", tc.now)
		}
		// Each slot's price: the series' mean over the slot where it
		// covers it all, else the period that holds the slot's start.
		for s := range n.Horizon.Slots {
			from, to := hz.Times(s)
			want := 0.20
			switch c := from.Hour(); {
			case !from.Before(at) && !to.After(at.Add(time.Hour)):
				sum := 0.0
				for q := range 4 {
					if qs := at.Add(time.Duration(q) * 15 * time.Minute); !qs.Before(from) && qs.Before(to) {
						sum += 0.1 * float64(q+1)
					}
				}
				want = sum / (to.Sub(from).Minutes() / 15)
			case c >= 17 && c < 21:
				want = 0.45
			case c < 6 || c >= 23:
				want = 0.12
			}
			if from.Before(at.Add(time.Hour)) && to.After(at) && (from.Before(at) || to.After(at.Add(time.Hour))) {
				continue // partly covered: the series' part and the file's
			}
			if math.Abs(n.Prices[s]-want) > 1e-9 {
				t.Errorf("%v: slot %d (%s) price %g, want %g", tc.now, s, from.Format("15:04"), n.Prices[s], want)
			}
		}
	}
}

// TestRollingUnevenArrays: on a live horizon of uneven slots a per-slot
// array would move with the clock, so it is refused at its key.
func TestRollingUnevenArrays(t *testing.T) {
	path := unevenStreet(t, "pv_kw = ["+strings.TrimSuffix(strings.Repeat("0, ", 30), ", ")+"]\n")
	_, err := config.Load(path)
	if err == nil || !strings.Contains(err.Error(), "pv_kw") || !strings.Contains(err.Error(), "per-slot array") {
		t.Fatalf("error %v, want pv_kw's per-slot array refused", err)
	}
}
