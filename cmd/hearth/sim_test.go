package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/mva"
)

// TestSimMatchesSolve: over real MQTT on the embedded broker, exact
// protocols give the simulated runtime's answer, signed (--sign) or not,
// and a signed run drops nothing of its own.
func TestSimMatchesSolve(t *testing.T) {
	gen := t.TempDir() + "/r.xml"
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"gen", "random", "agents=3", "vars=3", "domain=3", "--seed", "5", "-o", gen}, &out, &errb); code != exitOK {
		t.Fatalf("gen: %s", errb.String())
	}
	for _, tc := range [][2]string{{"dpop", ""}, {"afb", ""}, {"dpop", "--sign"}, {"afb", "--sign"}} {
		g := tc[0]
		t.Run(strings.TrimSpace(g+" "+tc[1]), func(t *testing.T) {
			var a, b, errb bytes.Buffer
			if code := run(context.Background(), []string{"solve", gen, "--global", g, "--json"}, &a, &errb); code != exitOK {
				t.Fatalf("solve: exit %d: %s", code, errb.String())
			}
			args := []string{"sim", gen, "--global", g, "--json"}
			if tc[1] != "" {
				args = append(args, tc[1])
			}
			if code := run(context.Background(), args, &b, &errb); code != exitOK {
				t.Fatalf("sim: exit %d: %s", code, errb.String())
			}
			var rs, rm mva.Result
			if err := json.Unmarshal(a.Bytes(), &rs); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b.Bytes(), &rm); err != nil {
				t.Fatal(err)
			}
			if rs.Objective == nil || rm.Objective == nil || *rs.Objective != *rm.Objective || !rm.Optimal {
				t.Fatalf("solve %v, sim %v (optimal %v)", rs.Objective, rm.Objective, rm.Optimal)
			}
			for k, v := range rs.Assignment {
				if rm.Assignment[k] != v {
					t.Errorf("%s: solve %s, sim %s", k, v, rm.Assignment[k])
				}
			}
			if rm.Metrics.Messages == 0 {
				t.Errorf("sim counted no messages: %+v", rm.Metrics)
			}
			if bytes.Contains(b.Bytes(), []byte("security_drops")) {
				t.Errorf("a run without forgeries dropped messages: %s", b.String())
			}
		})
	}
}

// TestSimNeighbourhood runs the README's main job: the example
// neighbourhood over the embedded broker, with every rule kept, the
// coordinated peak no higher than the uncoordinated one and the plan's
// objective on the load that flows at most the SH-MGM-style baseline's
// (the improvement phase's descent and restart, on by default). Under
// the race detector the street keeps the catalogue's fixed power levels
// (power_steps = "fixed"), a fraction of the automatic levels' time.
func TestSimNeighbourhood(t *testing.T) {
	var out, errb bytes.Buffer
	street := "../../examples/neighbourhood/neighbourhood.toml"
	if raceEnabled {
		street = fixtures.ExampleStreet(t, filepath.Join("..", ".."), `power_steps = "fixed"`)
	}
	args := []string{"sim", street, "--json", "--out", t.TempDir()}
	if code := run(context.Background(), args, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r struct {
		Objective      *float64  `json:"objective"`
		Optimal        bool      `json:"optimal"`
		EnergyCost     float64   `json:"energy_cost"`
		PeakKW         float64   `json:"peak_kw"`
		BaselinePeakKW float64   `json:"baseline_peak_kw"`
		RulesSatisfied int       `json:"rules_satisfied"`
		RulesTotal     int       `json:"rules_total"`
		LoadKW         []float64 `json:"load_kw"`
		Charts         []string  `json:"charts"`
		FlowObjective  float64   `json:"flow_objective"`
		Baselines      struct {
			SHMGM struct {
				FlowObjective float64 `json:"flow_objective"`
				Feasible      bool    `json:"feasible"`
			} `json:"shmgm"`
		} `json:"baselines"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if r.Objective == nil || r.RulesTotal == 0 || r.RulesSatisfied != r.RulesTotal {
		t.Errorf("result: %+v", r)
	}
	if b := r.Baselines.SHMGM; !b.Feasible || r.FlowObjective > b.FlowObjective+1e-9 {
		t.Errorf("objective on the load that flows %v, the SH-MGM-style baseline's %v (feasible %v)", r.FlowObjective, b.FlowObjective, b.Feasible)
	}
	if r.PeakKW > r.BaselinePeakKW || len(r.LoadKW) != 14 || len(r.Charts) != 2 {
		t.Errorf("peak %v (uncoordinated %v), %d slots, charts %v", r.PeakKW, r.BaselinePeakKW, len(r.LoadKW), r.Charts)
	}
	for _, kw := range r.LoadKW {
		if kw > r.PeakKW+1e-9 {
			t.Errorf("slot load %v above the peak %v", kw, r.PeakKW)
		}
	}
}

// TestSimBaselineFlags: --shmgm-rounds -1 skips the SH-MGM-style
// baseline; a budget spent before its first round stops it at round 0
// and says so; the default runs it to convergence on dm_7_1_2.
func TestSimBaselineFlags(t *testing.T) {
	path := shdsPath(t, "dm_7_1_2")
	type shmgm struct {
		Rounds    int  `json:"rounds"`
		Converged bool `json:"converged"`
	}
	tests := []struct {
		flags []string
		want  *shmgm
	}{
		{nil, &shmgm{Rounds: -1, Converged: true}},
		{[]string{"--shmgm-rounds", "-1"}, nil},
		{[]string{"--shmgm-rounds", "1"}, &shmgm{Rounds: 1}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.flags, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			args := append([]string{"sim", "--shds", path, "--json"}, tc.flags...)
			if code := run(context.Background(), args, &out, &errb); code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			var r struct {
				Baselines struct {
					SHMGM *shmgm `json:"shmgm"`
				} `json:"baselines"`
			}
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			got := r.Baselines.SHMGM
			switch {
			case tc.want == nil || got == nil:
				if (tc.want == nil) != (got == nil) {
					t.Fatalf("SH-MGM baseline %+v, want %+v", got, tc.want)
				}
			case tc.want.Rounds < 0:
				if got.Rounds == 0 || !got.Converged {
					t.Errorf("default: %+v, want a converged run", got)
				}
			case *got != *tc.want:
				t.Errorf("%+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestSimNoMulticast: --no-multicast keeps every message on its
// receiver's inbox and changes nothing else; by default MGM's waves to
// every neighbour go out as multicasts.
func TestSimNoMulticast(t *testing.T) {
	gen := t.TempDir() + "/r.xml"
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"gen", "random", "agents=4", "vars=8", "domain=3", "p2=1", "--seed", "5", "-o", gen}, &out, &errb); code != exitOK {
		t.Fatalf("gen: %s", errb.String())
	}
	type result struct {
		Assignment map[string]string `json:"assignment"`
		Agents     []struct {
			Multicasts int64 `json:"multicasts"`
		} `json:"agents"`
	}
	sim := func(flags ...string) (result, int64) {
		var o, e bytes.Buffer
		args := append([]string{"sim", gen, "--global", "mgm", "--json"}, flags...)
		if code := run(context.Background(), args, &o, &e); code != exitOK {
			t.Fatalf("%v: exit %d: %s", flags, code, e.String())
		}
		var r result
		if err := json.Unmarshal(o.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		var m int64
		for _, a := range r.Agents {
			m += a.Multicasts
		}
		return r, m
	}
	with, mWith := sim()
	without, mWithout := sim("--no-multicast")
	if mWith == 0 || mWithout != 0 {
		t.Errorf("multicasts: %d by default, %d with --no-multicast", mWith, mWithout)
	}
	if len(with.Assignment) == 0 || !maps.Equal(with.Assignment, without.Assignment) {
		t.Errorf("assignments differ: %v vs %v", with.Assignment, without.Assignment)
	}
}
