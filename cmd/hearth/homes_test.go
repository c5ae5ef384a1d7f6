package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/homesolve/homesolvetest"
	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/internal/solve"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/mva"
)

var exampleTOML = filepath.Join("..", "..", "examples", "neighbourhood", "neighbourhood.toml")

// sharedSHDS is the data set folder of the project checkout; tests that
// need files beyond the importer's testdata skip without it.
const sharedSHDS = "/work/shared/data/shds"

func solveRun(t *testing.T, r *homesolve.Run) (mva.Result, []int) {
	t.Helper()
	res, assign, err := solve.Homes(context.Background(), r, solve.HomeOptions(r, solve.Defaults()), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res, assign
}

func TestHomeOptionsOverrideTheTOML(t *testing.T) {
	var so solveOptions
	fs := newFlagSet(&env{stdout: new(bytes.Buffer), stderr: new(bytes.Buffer)}, "sim", "FILE")
	so.register(fs, "dpop")
	if _, err := parseArgs(fs, []string{"x.toml", "--global", "mgm", "-p", "rounds=3", "--seed", "9"}); err != nil {
		t.Fatal(err)
	}
	ho := homeOptionsFrom(fs, &so)
	if ho.Global != "mgm" || ho.Local != "" || ho.Table != "" || !ho.SeedSet || ho.Seed != 9 || ho.Params["rounds"] != 3 {
		t.Fatalf("homeOptionsFrom: %+v", ho)
	}
	// The example with the catalogue's fixed levels: the choice is the
	// same, MGM's rounds a fraction of the automatic levels' time.
	r, err := homesolve.Load(fixtures.ExampleStreet(t, filepath.Join("..", ".."), `power_steps = "fixed"`), false, ho)
	if err != nil {
		t.Fatal(err)
	}
	o := solve.HomeOptions(r, so.Options)
	if o.Global != "mgm" || o.Local.Name != "be" || o.Seed != 9 || o.Params["rounds"] != 3 || o.Table != "eager" {
		t.Errorf("options: global %s local %s seed %d params %v table %s", o.Global, o.Local.Name, o.Seed, o.Params, o.Table)
	}
	res, assign, err := solve.Homes(context.Background(), r, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Algorithm.Global != "mgm" {
		t.Errorf("solved with %s", res.Algorithm.Global)
	}
	if res.Feasible {
		homesolvetest.CheckSchedule(t, r, res, assign, false)
	}
}

// randomHomes draws a small neighbourhood: homes with one or two devices
// that each move a property of their own, and a goal on it.
func randomHomes(seed uint64) *devices.Neighbourhood {
	rng := rand.New(rand.NewPCG(seed, 7))
	slots := 3 + rng.IntN(3)
	n := &devices.Neighbourhood{
		Name:    fmt.Sprintf("random-%d", seed),
		Horizon: devices.Horizon{Slots: slots, SlotMinutes: 60, Start: 18 * 60},
		Levels:  2 + rng.IntN(2),
		Weights: devices.Weights{Price: 1, Peak: 0.1 * float64(1+rng.IntN(3))},
		Units:   devices.Units{Power: "kW", PowerScale: 1, Currency: "$", PriceScale: 1},
	}
	for t := range slots {
		n.Prices = append(n.Prices, 0.1+0.1*float64((t+int(seed))%3))
	}
	cut := 1 + rng.IntN(slots)
	n.Windows = append(n.Windows, devices.Window{From: 0, To: cut})
	if cut < slots {
		n.Windows = append(n.Windows, devices.Window{From: cut, To: slots})
	}
	for h := range 2 + rng.IntN(2) {
		home := devices.Home{Name: fmt.Sprintf("h%d", h)}
		for range slots {
			home.Background = append(home.Background, 0.1*float64(rng.IntN(5)))
		}
		for d := range 1 + rng.IntN(2) {
			name := fmt.Sprintf("d%d", d)
			dev := devices.Device{Name: name, Location: name, Actions: []devices.Action{
				{Name: "off"},
				{Name: "low", Power: 1 + float64(rng.IntN(2)), Effects: []devices.Effect{{Property: "p", Delta: 1}}},
				{Name: "high", Power: 3 + float64(rng.IntN(2)), Effects: []devices.Effect{{Property: "p", Delta: 2}}},
			}}
			home.Devices = append(home.Devices, dev)
			home.Properties = append(home.Properties, devices.Property{Location: name, Name: "p", Scale: 1})
			// At most 2 per slot: a goal of 2T+1 by T is infeasible.
			T := 1 + rng.IntN(slots)
			r := devices.Rule{Location: name, Property: "p", Rel: devices.Geq, Goal: float64(1 + rng.IntN(2*T+1)), Prefix: devices.Before, T1: T}
			r.Text = r.String()
			home.Rules = append(home.Rules, r)
		}
		n.Homes = append(n.Homes, home)
	}
	return n
}

// TestHomesRandom solves random neighbourhoods with DPOP and D-Gibbs:
// wherever a schedule exists, the returned one keeps every rule; where
// none does, the load reports it as infeasible (exit 1).
func TestHomesRandom(t *testing.T) {
	feasible, infeasible := 0, 0
	for seed := uint64(1); seed <= 40; seed++ {
		n := randomHomes(seed)
		r, err := homesolve.New(n.Name, n, homesolve.Overrides{Global: "dpop"})
		if err != nil {
			if !errors.Is(err, devices.ErrInfeasible) {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if code := loadExit(new(bytes.Buffer), "sim", err); code != exitInfeasible {
				t.Errorf("seed %d: exit %d for %v", seed, code, err)
			}
			infeasible++
			continue
		}
		feasible++
		res, assign := solveRun(t, r)
		if !res.Optimal {
			t.Errorf("seed %d: DPOP did not prove optimality", seed)
		}
		homesolvetest.CheckSchedule(t, r, res, assign, false)
		if r, err = homesolve.New(n.Name, n, homesolve.Overrides{Global: "dgibbs", Params: map[string]float64{"iterations": 30}}); err != nil {
			t.Fatal(err)
		}
		res, assign = solveRun(t, r)
		if res.Feasible {
			homesolvetest.CheckSchedule(t, r, res, assign, false)
		}
	}
	if feasible < 12 || infeasible == 0 {
		t.Errorf("%d feasible and %d infeasible neighbourhoods: the generator needs both", feasible, infeasible)
	}
}

func TestHomesBadFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(path, []byte("name = \"x\"\nhomes = [\"nowhere.toml\"]\n[horizon]\nslots = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := homesolve.Load(path, false, homesolve.Overrides{})
	var out bytes.Buffer
	if code := loadExit(&out, "sim", err); code != exitUsage {
		t.Errorf("exit %d", code)
	}
	if !strings.Contains(out.String(), path+":4: horizon.slots:") {
		t.Errorf("errors not printed as file:line: key:\n%s", out.String())
	}
	_, err = homesolve.Load(filepath.Join(dir, "missing.json"), true, homesolve.Overrides{})
	if code := loadExit(new(bytes.Buffer), "sim", err); err == nil || code != exitUsage {
		t.Errorf("missing SHDS file: %v, exit %d", err, code)
	}
}

func shdsPath(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "devices", "shds", "testdata", name+".json")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	p = filepath.Join(sharedSHDS, name+".json")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no %s", name)
	}
	return p
}

// TestHomesSHDSInfeasibleHome: dm_21_1_5's h7 cannot keep its vacuum
// rule; the default drops it with a note, --strict refuses the file
// (exit 1).
func TestHomesSHDSInfeasibleHome(t *testing.T) {
	path := shdsPath(t, "dm_21_1_5")
	_, err := homesolve.Load(path, true, homesolve.Overrides{Strict: true})
	if code := loadExit(new(bytes.Buffer), "sim", err); !errors.Is(err, devices.ErrInfeasible) || code != exitInfeasible {
		t.Errorf("strict: %v, exit %d", err, code)
	}
	r, err := homesolve.Load(path, true, homesolve.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Notes()) == 0 || !strings.Contains(r.Notes()[0], "home h7") {
		t.Errorf("notes %v", r.Notes())
	}
}
