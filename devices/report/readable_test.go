package report

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/baseline"
	"github.com/hearth-dcop/hearth/devices/shds"
	"github.com/hearth-dcop/hearth/mva"
)

// TestPlain: objectives print as plain numbers, never with an exponent.
func TestPlain(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0.00"},
		{31.654, "31.65"},
		{9999.994, "9999.99"},
		{-12.5, "-12.50"},
		{10000, "10,000"},
		{1605740.4, "1,605,740"},
		{-2.5e7, "-25,000,000"},
		{3e12, "3,000,000,000,000"},
	} {
		if got := plain(c.v); got != c.want {
			t.Errorf("plain(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestSHDSObjectiveUnits: an SHDS report's objectives are plain numbers
// with their unit, 0.01 kWh² + $0.001: the flow objective recomputed from
// the printed load (kW) and bill ($) in that unit is the printed one.
func TestSHDSObjectiveUnits(t *testing.T) {
	r, err := shds.ReadFile(filepath.Join("..", "shds", "testdata", "dm_7_1_2.json"), shds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := build(t, r.Neighbourhood)
	h := f.homes
	if h.ObjectiveUnit != "0.01 kWh² + $0.001" {
		t.Fatalf("objective unit %q", h.ObjectiveUnit)
	}
	// In that unit: Σ_t (L_t kW / 0.1)² + bill $ / 0.001.
	want := h.EnergyCost / 0.001
	for _, l := range h.LoadKW {
		want += (l / 0.1) * (l / 0.1)
	}
	if h.FlowObjective == nil || math.Abs(*h.FlowObjective-want) > 1e-6*want {
		t.Errorf("flow objective %v, recomputed %v", h.FlowObjective, want)
	}
	var b bytes.Buffer
	if err := h.WriteText(&b, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	row := regexp.MustCompile(`(?m)^objective, load +(\S+)`).FindStringSubmatch(out)
	if row == nil || row[1] != plain(*h.FlowObjective) {
		t.Errorf("objective row %q, want %s:\n%s", row, plain(*h.FlowObjective), out)
	}
	if !strings.Contains(out, "the load that flows (0.01 kWh² + $0.001)") {
		t.Errorf("no unit for the objectives:\n%s", out)
	}
	if m := regexp.MustCompile(`\d[eE][+-]\d`).FindString(out); m != "" {
		t.Errorf("a number in scientific notation, %q:\n%s", m, out)
	}
}

// TestFortyHomesText: a 40-home summary stays readable: the headline and
// totals first, then one line for each of the 40 homes (none left out),
// the schedule tables only when asked for.
func TestFortyHomesText(t *testing.T) {
	// Ten copies of the four example homes, each linked to the next
	// only (a sparse street keeps the baselines quick).
	cfg, err := config.Load(filepath.Join("..", "..", "examples", "neighbourhood", "neighbourhood.toml"))
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	four := n.Homes
	n.Homes = nil
	for k := range 10 {
		for _, h := range four {
			h.Name = fmt.Sprintf("%s-%d", h.Name, k)
			n.Homes = append(n.Homes, h)
		}
	}
	n.Links = nil
	for i := 1; i < len(n.Homes); i++ {
		n.Links = append(n.Links, [2]int{i - 1, i})
	}
	// The homes planned alone stand for the coordinated plan: any valid
	// schedule does for the layout (no SH-MGM run: seconds under -race).
	u, err := baseline.Uncoordinated(context.Background(), n, baseline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	obj := u.Eval.Cost
	h, err := Build(Input{
		Model:    n,
		Result:   mva.Result{Instance: n.Name, Sense: "min", Objective: &obj, Feasible: true, Algorithm: mva.Algorithm{Global: "mgm", Local: "be"}},
		Schedule: u.Schedule, Eval: u.Eval, Uncoordinated: u,
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		o        TextOptions
		tables   int  // schedule tables printed
		oneLines bool // the one-line-per-home list
	}{
		{"default", TextOptions{}, 0, true},
		{"schedules", TextOptions{MaxHomes: -1}, 40, false},
		{"max 50", TextOptions{MaxHomes: 50}, 40, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := h.WriteText(&b, tc.o); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if !strings.HasPrefix(out, n.Name+": 40 homes") {
				t.Errorf("does not start with the headline:\n%.300s", out)
			}
			totals, profile := strings.Index(out, "\nenergy cost"), strings.Index(out, "\nneighbourhood load")
			if totals < 0 || profile < totals {
				t.Errorf("totals at %d, profile at %d", totals, profile)
			}
			if strings.Contains(out, "more homes") {
				t.Errorf("homes left out:\n%s", out)
			}
			tables := strings.Count(out, "\n  kW ")
			lines := 0
			for hi := range n.Homes {
				name := n.Homes[hi].Name
				if regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(name) + ` +-?\d`).MatchString(out) {
					lines++
				}
			}
			if tables != tc.tables {
				t.Errorf("%d schedule tables, want %d", tables, tc.tables)
			}
			if tc.oneLines && (lines != 40 || !strings.Contains(out, "--schedules prints all 40")) {
				t.Errorf("%d one-line homes, want 40:\n%s", lines, out)
			}
			if first := strings.Index(out, "\nhomes (schedule tables"); tc.oneLines && first < profile {
				t.Errorf("the home list comes before the summary")
			}
		})
	}
}
