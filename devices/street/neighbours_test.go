package street_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	"github.com/hearth-dcop/hearth/devices/street"
	"github.com/hearth-dcop/hearth/internal/cbc"
)

// TestNeighboursAgainstCBC: on sparse streets ([coordination]
// neighbours) an energy home answers only its neighbours' load. The
// street's objective is the peak term with only the linked pairs' cross
// terms, recomputed here from the links; at the end every energy home's
// plan is a best response to its neighbours' load — within 1% of CBC's
// lower bound on that home's own problem (its costs and the peak term
// of its load on top of its neighbours'); a home without neighbours
// answers its own load's square only, as a compiled home's own term.
func TestNeighboursAgainstCBC(t *testing.T) {
	cbc.Require(t)
	// Home 0 is a compiled home (a fixed load); 1..4 are energy homes.
	cases := []struct {
		name  string
		seed  uint64
		links [][2]int
	}{
		{"path with a loner", 21, [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{"star on an energy home", 22, [][2]int{{1, 0}, {1, 2}, {1, 3}, {1, 4}}},
	}
	for i, c := range cases {
		if raceEnabled && i > 0 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			T := 8
			hs := genStreet(c.seed, 4, T)
			r := rand.New(rand.NewPCG(c.seed, 3))
			base := make([]float64, T)
			for t := range T {
				base[t] = 1 + 5*r.Float64()
			}
			pk := peakOver(0.05, T)
			ctx := context.Background()
			ms := plannedAlone(t, hs)
			s := &street.Street{Peak: pk, Compiled: [][]float64{base}, Links: c.links}
			res, err := street.CoordinateStreet(ctx, ms, s, street.Options{})
			if err != nil {
				t.Fatal(err)
			}
			loads := [][]float64{base}
			for _, m := range ms {
				if err := plancheck.Check(m.Home, m.Plan).Err(); err != nil {
					t.Fatal(err)
				}
				loads = append(loads, m.Plan.Import)
			}
			// The potential, from the links.
			want := 0.0
			for _, m := range ms {
				want += m.Plan.Cost() - m.Plan.Coordination
			}
			for _, tt := range pk.Slots {
				sq := 0.0
				for _, l := range loads {
					sq += l[tt] * l[tt]
				}
				for _, k := range c.links {
					sq += 2 * loads[k[0]][tt] * loads[k[1]][tt]
				}
				want += pk.Weight * sq
			}
			if math.Abs(res.Final-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Errorf("objective %.6f, the links' potential %.6f", res.Final, want)
			}
			t.Logf("objective alone %.4f, coordinated %.4f (%d rounds, %d moves)", res.Start, res.Final, res.Rounds, res.Moves)
			for i, m := range ms {
				me := i + 1
				N := make([]float64, T)
				for _, k := range c.links {
					o := -1
					if k[0] == me {
						o = k[1]
					} else if k[1] == me {
						o = k[0]
					}
					if o < 0 {
						continue
					}
					for tt := range T {
						N[tt] += loads[o][tt]
					}
				}
				v := m.Plan.Cost() - m.Plan.Coordination
				for _, tt := range pk.Slots {
					x := N[tt] + m.Plan.Import[tt]
					v += pk.Weight * x * x
				}
				lb := lowerBound(t, []*energy.Home{m.Home}, N, pk, nil)
				gap := (v - lb) / math.Max(math.Abs(lb), 1)
				t.Logf("home %d: against its neighbours' load %.4f, CBC lower bound %.4f, gap %.3f%%", me, v, lb, 100*gap)
				if gap > 0.01 || gap < -1e-4 {
					t.Errorf("home %d: %.5f against its neighbours' load, CBC's lower bound %.5f (gap %.3f%%): not a best response", me, v, lb, 100*gap)
				}
			}
		})
	}
}

// TestStreetOfNumbering: StreetOf renumbers a neighbourhood's links as
// Street numbers homes — the compiled homes in the file's order, then
// the energy homes — and carries the feeder in kW.
func TestStreetOfNumbering(t *testing.T) {
	cases := []struct {
		name    string
		homes   int
		energy  []int // indices of the energy homes in the file
		links   [][2]int
		want    [][2]int
		limitKW float64
	}{
		{"every pair", 3, []int{1}, nil, nil, 0},
		{"energy home in the middle", 4, []int{1, 3}, [][2]int{{0, 1}, {1, 2}, {2, 3}}, [][2]int{{0, 2}, {2, 1}, {1, 3}}, 9},
		{"energy homes first", 3, []int{0}, [][2]int{{0, 1}, {1, 2}}, [][2]int{{2, 0}, {0, 1}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := &devices.Neighbourhood{Homes: make([]devices.Home, c.homes), Links: c.links, FeederLimit: c.limitKW, FeederSoft: true,
				Windows: []devices.Window{{From: 0, To: 2}}, Units: devices.Units{PowerScale: 1}, Horizon: devices.Horizon{Slots: 2}}
			var ms []*street.Member
			for _, i := range c.energy {
				ms = append(ms, &street.Member{Index: i})
			}
			s := street.StreetOf(n, ms, nil, nil)
			if !slices.Equal(s.Links, c.want) {
				t.Errorf("links %v, want %v", s.Links, c.want)
			}
			if c.links != nil && len(s.Compiled) != c.homes-len(c.energy) {
				t.Errorf("%d compiled loads for %d compiled homes", len(s.Compiled), c.homes-len(c.energy))
			}
			if s.Feeder.Limit != c.limitKW || c.limitKW > 0 && s.Feeder.Hard {
				t.Errorf("feeder %+v, want a soft %g kW", s.Feeder, c.limitKW)
			}
		})
	}
}
