package plancheck

import (
	"fmt"
	"math"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/energy"
)

// FeederReport is what CheckFeeder found.
type FeederReport struct {
	// HomesKW[i][w] is what plan i commits to in window w: its highest
	// import there (kW).
	HomesKW [][]float64
	// CommittedKW[w] is the street's committed caps in window w: the
	// compiled homes' and the plans'.
	CommittedKW []float64
	// ExcessKW[w] is by how many kW they exceed the limit (0 where they
	// keep it).
	ExcessKW []float64
	// Violations name the windows over a hard limit.
	Violations []string
}

// CheckFeeder checks a street's feeder limit (kW; hard or soft) over the
// energy homes' plans and the compiled homes' committed caps per window
// (compiled, kW; nil for none): an energy home commits, in each window,
// to its highest import there, read from the plan's meter (which Check
// verifies against the flows). A soft limit's excess is measured, a hard
// one's is a violation.
func CheckFeeder(limit float64, hard bool, windows []devices.Window, compiled []float64, plans []*energy.Plan) *FeederReport {
	r := &FeederReport{CommittedKW: make([]float64, len(windows)), ExcessKW: make([]float64, len(windows))}
	for w := range windows {
		if w < len(compiled) {
			r.CommittedKW[w] = compiled[w]
		}
	}
	for _, p := range plans {
		caps := make([]float64, len(windows))
		for w, win := range windows {
			for t := win.From; t < win.To && t < len(p.Import); t++ {
				caps[w] = math.Max(caps[w], p.Import[t])
			}
			r.CommittedKW[w] += caps[w]
		}
		r.HomesKW = append(r.HomesKW, caps)
	}
	for w, c := range r.CommittedKW {
		if limit <= 0 || c <= limit+Tolerance {
			continue
		}
		r.ExcessKW[w] = c - limit
		if hard {
			r.Violations = append(r.Violations, fmtViolation(w, c, limit))
		}
	}
	return r
}

func fmtViolation(w int, c, limit float64) string {
	return fmt.Sprintf("window %d: the committed caps add up to %.6g kW, above the hard feeder limit %.6g kW", w, c, limit)
}
