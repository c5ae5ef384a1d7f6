package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

func TestRunHomeScheduleTimes(t *testing.T) {
	utc := time.UTC
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	at := func(loc *time.Location, s string) time.Time {
		t.Helper()
		v, err := time.ParseInLocation("2006-01-02 15:04:05", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name string
		run  config.Run
		loc  *time.Location
		now  string
		next string // "" for none
		id   string
	}{
		{"none", config.Run{}, utc, "2026-11-22 10:00:00", "", ""},
		{"later today", config.Run{At: []int{6 * 60, 16*60 + 30}}, utc, "2026-11-22 10:00:00", "2026-11-22 16:30:00", "2026-11-22T1630"},
		{"strictly after", config.Run{At: []int{16*60 + 30}}, utc, "2026-11-22 16:30:00", "2026-11-23 16:30:00", "2026-11-23T1630"},
		{"tomorrow", config.Run{At: []int{6 * 60}}, utc, "2026-12-31 23:00:00", "2027-01-01 06:00:00", "2027-01-01T0600"},
		{"every aligned", config.Run{Every: 15 * time.Minute}, utc, "2026-11-22 10:07:59", "2026-11-22 10:15:00", "2026-11-22T1015"},
		{"every on the grid", config.Run{Every: 15 * time.Minute}, utc, "2026-11-22 10:15:00", "2026-11-22 10:30:00", "2026-11-22T1030"},
		{"every past midnight", config.Run{Every: 6 * time.Hour}, utc, "2026-11-22 19:00:00", "2026-11-23 00:00:00", "2026-11-23T0000"},
		{"every seconds", config.Run{Every: 2 * time.Second}, utc, "2026-11-22 10:00:03", "2026-11-22 10:00:04", "2026-11-22T100004"},
		{"seconds id for a listed time", config.Run{At: []int{10*60 + 1}, Every: 2 * time.Second}, utc, "2026-11-22 10:00:59", "2026-11-22 10:01:00", "2026-11-22T100100"},
		{"listed and periodic", config.Run{At: []int{10*60 + 5}, Every: time.Hour}, utc, "2026-11-22 10:00:00", "2026-11-22 10:05:00", "2026-11-22T1005"},
		// Local wall-clock times: the clocks go forward at 01:00 on
		// 2026-03-29 in London, so 01:30 does not exist that day.
		{"local", config.Run{At: []int{16*60 + 30}}, london, "2026-06-01 12:00:00", "2026-06-01 16:30:00", "2026-06-01T1630"},
		{"every across the change", config.Run{Every: time.Hour}, london, "2026-03-29 00:30:00", "2026-03-29 02:00:00", "2026-03-29T0200"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := nextRound(tc.run, at(tc.loc, tc.now))
			if tc.next == "" {
				if ok {
					t.Fatalf("next round %v, want none", got)
				}
				return
			}
			if !ok || !got.Equal(at(tc.loc, tc.next)) {
				t.Fatalf("next round %v (%v), want %s", got, ok, tc.next)
			}
			if id := roundIDAt(got, tc.run); id != tc.id {
				t.Errorf("id %q, want %q", id, tc.id)
			}
			if mqtt.CheckRoundID(tc.id) != nil {
				t.Errorf("%q is not a round id", tc.id)
			}
		})
	}
}

func TestRunHomeSlotTimes(t *testing.T) {
	day := func(h, m int) time.Time { return time.Date(2026, 11, 22, h, m, 0, 0, time.Local) }
	for _, tc := range []struct {
		at    time.Time
		start int
		want  time.Time
	}{
		{day(12, 0), 17 * 60, day(17, 0)},
		{day(17, 0), 17 * 60, day(17, 0)},
		{day(17, 1), 17 * 60, day(17, 0).AddDate(0, 0, 1)},
		{day(23, 59), 0, day(0, 0).AddDate(0, 0, 1)},
	} {
		if got := slotZero(tc.at, tc.start); !got.Equal(tc.want) {
			t.Errorf("slotZero(%v, %d) = %v, want %v", tc.at, tc.start, got, tc.want)
		}
	}
	start := day(17, 0)
	for _, tc := range []struct {
		now  time.Time
		want time.Time // zero: none
	}{
		{day(12, 0), day(17, 0)},
		{day(17, 0), day(18, 0)},
		{day(18, 30), day(19, 0)},
		{day(19, 59), day(20, 0)},
		{day(20, 0), time.Time{}},
	} {
		got, ok := nextBoundary(start, boundaries(devices.Horizon{Slots: 3, SlotMinutes: 60}), tc.now)
		if ok != !tc.want.IsZero() || ok && !got.Equal(tc.want) {
			t.Errorf("nextBoundary at %v = %v %v, want %v", tc.now, got, ok, tc.want)
		}
	}
	// Uneven slots (30, 60 and 60 minutes): boundaries 17:30, 18:30, 19:30.
	uneven := boundaries(devices.Horizon{Slots: 3, SlotMinutes: 30, Lengths: []int{30, 60, 60}})
	for _, tc := range []struct {
		now  time.Time
		want time.Time // zero: none
	}{
		{day(17, 0), day(17, 30)},
		{day(17, 45), day(18, 30)},
		{day(19, 0), day(19, 30)},
		{day(19, 30), time.Time{}},
	} {
		got, ok := nextBoundary(start, uneven, tc.now)
		if ok != !tc.want.IsZero() || ok && !got.Equal(tc.want) {
			t.Errorf("uneven: nextBoundary at %v = %v %v, want %v", tc.now, got, ok, tc.want)
		}
	}
}

func TestRunHomeInputs(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.toml"), filepath.Join(dir, "b.toml")
	write := func(p, s string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write(a, "one", t0)
	write(b, "two", t0)
	in := newInputs([]string{a, b})
	if _, changed := in.look(); changed {
		t.Error("nothing changed")
	}
	// Saved again unchanged: a new time, the same contents.
	write(a, "one", t0.Add(time.Second))
	if _, changed := in.look(); changed {
		t.Error("a file saved unchanged counts as changed")
	}
	write(b, "TWO", t0.Add(2*time.Second))
	h1, changed := in.look()
	if !changed || h1 == in.loaded {
		t.Fatal("a changed file not seen")
	}
	// poll waits for a change to hold still for one look.
	if in.settled(h1) {
		t.Error("a change settled at its first look")
	}
	if h, changed := in.look(); !changed || h != h1 || !in.settled(h) {
		t.Errorf("the change %s (%v) did not settle at its second look", h, changed)
	}
	in.reject(h1)
	if _, changed := in.look(); changed {
		t.Error("rejected inputs reported again")
	}
	write(b, "TWO!", t0.Add(3*time.Second))
	h2, changed := in.look()
	if !changed || h2 == h1 {
		t.Fatal("a change after a rejected one not seen")
	}
	in.accept([]string{a, b}, h2)
	if _, changed := in.look(); changed {
		t.Error("accepted inputs reported again")
	}
	// Back to the rejected contents: a change again.
	write(b, "TWO", t0.Add(4*time.Second))
	if h, changed := in.look(); !changed || h != h1 {
		t.Errorf("hash %s changed %v, want %s", h, changed, h1)
	}
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if _, changed := in.look(); !changed {
		t.Error("a removed file not seen")
	}
}

func TestAttemptRun(t *testing.T) {
	if AttemptRun("r", 0) != "r" || AttemptRun("r", 2) != "r.retry2" {
		t.Errorf("attempt runs %q %q", AttemptRun("r", 0), AttemptRun("r", 2))
	}
	long := strings.Repeat("x", mqtt.MaxRoundID)
	if mqtt.CheckRoundID(long) != nil || topic.CheckName(AttemptRun(long, 99)) != nil {
		t.Errorf("a round id of %d bytes leaves no room for its retries", mqtt.MaxRoundID)
	}
}

func TestRecent(t *testing.T) {
	r := newRecent(2)
	r.add("a")
	r.add("b")
	r.add("c")
	if r.has("a") || !r.has("b") || !r.has("c") {
		t.Errorf("recent %v", r.ids)
	}
}

func TestLiveIDs(t *testing.T) {
	for _, at := range []time.Time{
		time.Date(2026, 11, 26, 7, 15, 0, 0, time.Local),
		time.Date(2026, 11, 26, 7, 15, 20, 0, time.Local),
	} {
		id := liveID(at)
		got, ok := liveTime(id)
		if !ok || !got.Equal(at) || mqtt.CheckRoundID(id) != nil {
			t.Errorf("%v: id %q reads back as %v %v", at, id, got, ok)
		}
	}
	if _, ok := liveTime("evening"); ok {
		t.Error("a round id without a time read as one")
	}
}
