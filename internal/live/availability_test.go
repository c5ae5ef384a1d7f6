package live

import (
	"slices"
	"testing"
	"time"
)

// TestOnline: the homes offline are those whose availability does not
// say online, and the change that calls for a round comes when the last
// one comes online, again after one went and came back, and not for a
// repeated message.
func TestOnline(t *testing.T) {
	now := time.Date(2026, 11, 26, 5, 40, 0, 0, time.Local)
	in := newInputs(t, "alder", now)
	avail := func(home, v string) { in.Handle(AvailabilityTopic("hearth", home), []byte(v)) }
	onlineChanges := func() int {
		n := 0
		for {
			select {
			case c := <-in.Changes():
				if c.Online {
					n++
				}
			default:
				return n
			}
		}
	}
	steps := []struct {
		home, v string
		offline []string
		changes int
	}{
		{"", "", []string{"alder", "dogwood"}, 0},
		{"alder", "online", []string{"dogwood"}, 0},
		{"dogwood", "offline", []string{"dogwood"}, 0},
		{"dogwood", "online", nil, 1},
		{"dogwood", "online", nil, 0},
		{"alder", "garbage", []string{"alder"}, 0},
		{"alder", " online\n", nil, 1},
	}
	for i, s := range steps {
		if s.home != "" {
			avail(s.home, s.v)
		}
		if got := in.Offline(); !slices.Equal(got, s.offline) {
			t.Errorf("step %d: offline %v, want %v", i, got, s.offline)
		}
		if got := onlineChanges(); got != s.changes {
			t.Errorf("step %d: %d changes for every home online, want %d", i, got, s.changes)
		}
	}
}
