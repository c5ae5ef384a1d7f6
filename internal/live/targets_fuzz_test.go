package live_test

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/internal/live"
)

// FuzzCheckTarget: whatever a user or a broker sends on a target's
// command topic, CheckTarget never panics, and what it accepts is a
// number inside the control's range or one of its options.
func FuzzCheckTarget(f *testing.F) {
	for _, s := range []string{"90", " 50 ", "150", "-1", "NaN", "Inf", "1e400", "", "07:00", "07:00:00", "7:00", "ninety"} {
		f.Add(s)
	}
	num := report.Target{Name: live.TargetPct, Min: 0, Max: 100, Step: 5, Unit: "%"}
	sel := report.Target{Name: live.Departure, Options: []string{"06:00", "07:00"}}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := live.CheckTarget(num, []byte(s)); err == nil {
			x, perr := strconv.ParseFloat(v, 64)
			if perr != nil || math.IsNaN(x) || x < num.Min || x > num.Max {
				t.Errorf("%q accepted as %q", s, v)
			}
		}
		if v, err := live.CheckTarget(sel, []byte(s)); err == nil && !slices.Contains(sel.Options, v) {
			t.Errorf("%q accepted as %q", s, v)
		}
	})
}
