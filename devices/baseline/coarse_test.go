package baseline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
)

// TestSHMGMPastTheTableLimit: a street whose homes' per-slot tables pass
// the compiler's limit still gets an SH-MGM-style baseline, every schedule
// one that brute force finds keeps the home's rules. A home's peak term
// is a table over the combinations of its actions in a slot
// (newSlotPeakSolver), so the random streets' homes (at most nine
// combinations) answer exactly wherever the baseline runs at all; a home
// whose combinations pass the limit answers on fewer levels than draws,
// and is named coarse.
func TestSHMGMPastTheTableLimit(t *testing.T) {
	ns := randomNeighbourhoods(t, 12)
	for _, maxTable := range []int{8, 16, 64, 1 << 20} {
		ran := 0
		for _, n := range ns {
			out, err := SHMGM(context.Background(), n, Options{Workers: 2, Compile: compile.Options{MaxTable: maxTable}})
			if errors.Is(err, devices.ErrTooLarge) {
				continue // a home's transitions pass the limit
			}
			if err != nil {
				t.Fatalf("maxTable %d, %s: %v", maxTable, n.Name, err)
			}
			ran++
			if len(out.Coarse) > 0 {
				t.Errorf("maxTable %d, %s: coarse homes %v, want none", maxTable, n.Name, out.Coarse)
			}
			for hi := range n.Homes {
				ok := slices.ContainsFunc(enumerate(t, n, hi), func(sc scheduleCost) bool {
					return sameActions(sc.s, out.Schedule.Homes[hi])
				})
				if !ok {
					t.Errorf("maxTable %d, %s: home %d's schedule breaks its rules", maxTable, n.Name, hi)
				}
			}
		}
		if ran == 0 {
			t.Errorf("maxTable %d: no street ran", maxTable)
		}
	}

	// A home of one device with 12 power levels and a limit of 8: its
	// slot tables cannot hold its actions, so it answers on one level
	// per slot (its peak term on the greatest draw), named coarse and
	// approximate; its neighbour, of 3 levels, answers exactly.
	n := wideHome(12, 3)
	out, err := SHMGM(context.Background(), n, Options{Workers: 2, Compile: compile.Options{MaxTable: 8}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Coarse, []string{"wide"}) || out.Approximate != 1 {
		t.Errorf("coarse homes %v, %d approximate: want [wide], 1", out.Coarse, out.Approximate)
	}
	if out.Eval == nil || !out.Eval.Feasible {
		t.Errorf("the schedule is not feasible: %+v", out.Eval)
	}
	out, err = SHMGM(context.Background(), n, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Coarse) > 0 || out.Approximate > 0 {
		t.Errorf("default limit: coarse homes %v, %d approximate: want none", out.Coarse, out.Approximate)
	}
}

// wideHome returns a street of two homes, "wide" with one device of
// wide power levels (0..wide−1 kW) and "narrow" with one of narrow, no
// rules, every slot a coordination window with a peak weight.
func wideHome(wide, narrow int) *devices.Neighbourhood {
	dev := func(levels int) devices.Device {
		d := devices.Device{Name: "heater", Location: "home"}
		for k := range levels {
			d.Actions = append(d.Actions, devices.Action{Name: fmt.Sprintf("p%d", k), Power: float64(k)})
		}
		return d
	}
	const slots = 3
	n := &devices.Neighbourhood{
		Name:    "wide",
		Horizon: devices.Horizon{Slots: slots, SlotMinutes: 60},
		Prices:  []float64{0.3, 0.1, 0.2},
		Levels:  2,
		Weights: devices.Weights{Price: 1, Peak: 0.1},
		Homes: []devices.Home{
			{Name: "wide", Background: make([]float64, slots), Devices: []devices.Device{dev(wide)}},
			{Name: "narrow", Background: make([]float64, slots), Devices: []devices.Device{dev(narrow)}},
		},
	}
	for t := range slots {
		n.Windows = append(n.Windows, devices.Window{From: t, To: t + 1})
	}
	return n
}
