package live

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/devices/homesolve"
)

// streetPrice is the test street's [prices] at clock hour h, read off the
// file by hand: 0.45 from 17:00 to 21:00, 0.12 from 23:00 to 06:00, 0.20
// otherwise.
func streetPrice(h int) float64 {
	switch {
	case h >= 17 && h < 21:
		return 0.45
	case h >= 23 || h < 6:
		return 0.12
	}
	return 0.20
}

func series(start time.Time, step string, values ...float64) []byte {
	var vs []string
	for _, v := range values {
		vs = append(vs, fmt.Sprint(v))
	}
	return fmt.Appendf(nil, `{"start":%q,"step":%q,"values":[%s]}`, start.Format(time.RFC3339), step, strings.Join(vs, ","))
}

// TestHomePrices: a home's own price series (P/home/H/prices/import and
// export) replaces its tariff where it covers a slot, over the street's
// series and the file's prices, in every home's model alike; the other
// homes keep the street's.
func TestHomePrices(t *testing.T) {
	now := time.Date(2026, 11, 26, 5, 40, 0, 0, time.Local)
	slot0 := time.Date(2026, 11, 26, 5, 0, 0, 0, time.Local)
	file := make([]float64, 24)
	for k := range file {
		file[k] = streetPrice(slot0.Add(time.Duration(k) * time.Hour).Hour())
	}
	with := func(base []float64, at map[int]float64) []float64 {
		out := slices.Clone(base)
		for k, v := range at {
			out[k] = v
		}
		return out
	}
	type msg struct{ topic, payload string }
	tests := []struct {
		name       string
		msgs       []msg
		alder      []float64 // alder's import prices
		alderExp   []float64 // alder's export prices, nil: its import prices
		dogwood    []float64
		alderOwned bool // whether alder's tariff is its own
	}{
		{name: "no series", alder: file, dogwood: file},
		{name: "the home's import series",
			msgs:  []msg{{HomePriceTopic("hearth", "alder", "import"), string(series(slot0, "1h", 0.01, 0.02, 0.03))}},
			alder: with(file, map[int]float64{0: 0.01, 1: 0.02, 2: 0.03}), dogwood: file, alderOwned: true},
		{name: "over the street's series",
			msgs: []msg{
				{PriceTopic("hearth", "import"), string(series(slot0, "1h", 0.5, 0.5, 0.5))},
				{HomePriceTopic("hearth", "alder", "import"), string(series(slot0, "1h", 0.01, 0.01))},
			},
			alder: with(file, map[int]float64{0: 0.01, 1: 0.01, 2: 0.5}), dogwood: with(file, map[int]float64{0: 0.5, 1: 0.5, 2: 0.5}), alderOwned: true},
		{name: "export capped at the import price",
			msgs:     []msg{{HomePriceTopic("hearth", "alder", "export"), string(series(slot0, "1h", 0.05, 0.9))}},
			alder:    file,
			alderExp: with(file, map[int]float64{0: 0.05, 1: file[1]}), dogwood: file, alderOwned: true},
		{name: "half-hour steps from 07:30",
			msgs: []msg{{HomePriceTopic("hearth", "alder", "import"), string(series(slot0.Add(150*time.Minute), "30m", 0.04, 0.06, 0.10, 0.30))}},
			// 07:00 is covered only from 07:30 and keeps its price;
			// 08:00 is the mean of 0.06 and 0.10.
			alder: with(file, map[int]float64{3: 0.08}), dogwood: file, alderOwned: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, me := range []string{"alder", "dogwood"} {
				in := newInputs(t, me, now)
				for _, m := range tc.msgs {
					in.Handle(m.topic, []byte(m.payload))
				}
				r, _, _, err := in.Load(street, homesolve.Overrides{}, now)
				if err != nil {
					t.Fatal(err)
				}
				n := r.Model()
				for hi, h := range n.Homes {
					imp, exp := n.Tariff(hi)
					want, wantExp := tc.dogwood, []float64(nil)
					if h.Name == "alder" {
						want, wantExp = tc.alder, tc.alderExp
						if owned := h.Meter != nil && h.Meter.Prices != nil; owned != tc.alderOwned {
							t.Errorf("%s's model: alder's own tariff %v, want %v", me, owned, tc.alderOwned)
						}
					}
					if !near(imp, want) {
						t.Errorf("%s's model: %s pays %v, want %v", me, h.Name, imp, want)
					}
					if wantExp == nil {
						wantExp = imp
					}
					if exp == nil {
						exp = imp
					}
					if !near(exp, wantExp) {
						t.Errorf("%s's model: %s earns %v, want %v", me, h.Name, exp, wantExp)
					}
				}
			}
		})
	}
}

func near(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

// TestHomePricesAsk: a new series of a home's own prices asks for a round
// in that home's process, once per content, and in no other home's.
func TestHomePricesAsk(t *testing.T) {
	now := time.Date(2026, 11, 26, 5, 40, 0, 0, time.Local)
	tp := HomePriceTopic("hearth", "dogwood", "import")
	b := series(now, "1h", 0.01, 0.01)
	for _, tc := range []struct {
		home string
		want int
	}{{"dogwood", 1}, {"alder", 0}} {
		in := newInputs(t, tc.home, now)
		in.Handle(tp, b)
		in.Handle(tp, b) // the same series again: no news
		got := 0
		for done := false; !done; {
			select {
			case c := <-in.Changes():
				got++
				if !strings.Contains(c.Why, tp) {
					t.Errorf("%s: change %q does not name %s", tc.home, c.Why, tp)
				}
			default:
				done = true
			}
		}
		if got != tc.want {
			t.Errorf("%s asked for %d rounds, want %d", tc.home, got, tc.want)
		}
	}
}
