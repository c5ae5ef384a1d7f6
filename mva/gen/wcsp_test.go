package gen

import (
	"math"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// TestFAPStructure checks what FAPOptions promises: two links per pair, a
// hard duplex function that allows exactly the frequencies half a band
// apart, interference only between links of different pairs with whole
// costs of CELAR's classes, and a feasible assignment (every pair on a
// duplex pair of frequencies) at finite cost.
func TestFAPStructure(t *testing.T) {
	o := DefaultFAP()
	o.Pairs, o.Freqs = 12, 8
	p, err := FAP(3, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Agents) != 12 || len(p.Variables) != 24 {
		t.Fatalf("%d agents, %d variables", len(p.Agents), len(p.Variables))
	}
	duplex, interf := 0, 0
	for _, f := range p.Functions {
		switch {
		case strings.HasPrefix(f.Name, "duplex"):
			duplex++
			u, v := f.Scope[0], f.Scope[1]
			if p.Variables[u].Agent != p.Variables[v].Agent {
				t.Fatalf("%s joins two pairs", f.Name)
			}
			for a := range 8 {
				for b := range 8 {
					ok := a-b == 4 || b-a == 4
					if mva.IsHard(f.Costs[a*8+b]) == ok {
						t.Fatalf("%s(%d, %d) = %v", f.Name, a, b, f.Costs[a*8+b])
					}
				}
			}
		case strings.HasPrefix(f.Name, "interf"):
			interf++
			u, v := f.Scope[0], f.Scope[1]
			if p.Variables[u].Agent == p.Variables[v].Agent {
				t.Fatalf("%s within one pair", f.Name)
			}
			w := f.Costs[0] // a = b: always within the separation
			if w != 1 && w != 10 && w != 100 && w != 1000 {
				t.Fatalf("%s: cost %v is not a CELAR class", f.Name, w)
			}
			if f.Costs[7] != 0 { // |0 - 7| = 7 ≥ sep
				t.Fatalf("%s: frequencies 7 apart cost %v", f.Name, f.Costs[7])
			}
		case strings.HasPrefix(f.Name, "mob"):
			if len(f.Scope) != 1 {
				t.Fatalf("%s: scope %v", f.Name, f.Scope)
			}
		default:
			t.Fatalf("unexpected function %s", f.Name)
		}
	}
	if duplex != 12 || interf == 0 {
		t.Fatalf("%d duplex, %d interference functions", duplex, interf)
	}
	a := make([]int, 24)
	for v := range a {
		a[v] = (v % 2) * 4
	}
	if c, err := p.Eval(a); err != nil || math.IsInf(c, 0) {
		t.Fatalf("duplex assignment costs %v (%v)", c, err)
	}
}

// TestSpotStructure checks what SpotOptions promises: mono photographs
// have four values and stereo ones two, rejecting costs the weight, two
// close photographs never share an instrument where they conflict, three
// close ones are never all taken where a recorder limit holds, and
// rejecting everything is feasible at the sum of the weights.
func TestSpotStructure(t *testing.T) {
	o := DefaultSpot()
	o.Photos, o.Recorder = 30, 0.3
	p, err := Spot(5, o)
	if err != nil {
		t.Fatal(err)
	}
	weights, conflicts, recorders := 0.0, 0, 0
	for _, f := range p.Functions {
		switch len(f.Scope) {
		case 1:
			if f.Costs[0] <= 0 || f.Costs[1] != 0 {
				t.Fatalf("%s: %v", f.Name, f.Costs)
			}
			weights += f.Costs[0]
		case 2:
			conflicts++
			i, j := f.Scope[0], f.Scope[1]
			if j-i > o.Window {
				t.Fatalf("%s: photographs %d apart", f.Name, j-i)
			}
			dj := len(p.Variables[j].Domain)
			if !mva.IsHard(f.Costs[1*dj+1]) || f.Costs[0] != 0 {
				t.Fatalf("%s: front/front %v, rejected %v", f.Name, f.Costs[1*dj+1], f.Costs[0])
			}
		case 3:
			recorders++
			last := len(f.Costs) - 1
			if !mva.IsHard(f.Costs[last]) || f.Costs[0] != 0 {
				t.Fatalf("%s: all taken %v, none %v", f.Name, f.Costs[last], f.Costs[0])
			}
		}
	}
	for v, x := range p.Variables {
		if d := len(x.Domain); d != 2 && d != 4 {
			t.Fatalf("photograph %d has %d values", v, d)
		}
	}
	if conflicts == 0 || recorders == 0 {
		t.Fatalf("%d conflicts, %d recorder limits", conflicts, recorders)
	}
	if c, err := p.Eval(make([]int, len(p.Variables))); err != nil || c != weights {
		t.Fatalf("rejecting everything costs %v (%v), want %v", c, err, weights)
	}
}

func TestWCSPKindsRefuseBadOptions(t *testing.T) {
	for _, tc := range []struct {
		kind   string
		params map[string]string
		want   string
	}{
		{"fap", map[string]string{"freqs": "7"}, "freqs 7"},
		{"fap", map[string]string{"pairs": "0"}, "pairs 0"},
		{"fap", map[string]string{"radius": "0"}, "radius 0"},
		{"fap", map[string]string{"sep": "24"}, "sep 24"},
		{"fap", map[string]string{"mobility": "2"}, "mobility 2"},
		{"spot", map[string]string{"photos": "0"}, "photos 0"},
		{"spot", map[string]string{"window": "0"}, "window 0"},
		{"spot", map[string]string{"stereo": "-1"}, "stereo -1"},
		{"circuit", map[string]string{"inputs": "0"}, "inputs 0"},
		{"circuit", map[string]string{"gates": "0"}, "gates 0"},
		{"circuit", map[string]string{"fanin": "9"}, "fanin 9"},
		{"circuit", map[string]string{"window": "0"}, "window 0"},
		{"circuit", map[string]string{"fault": "1.5"}, "fault 1.5"},
	} {
		_, err := Generate(tc.kind, 1, tc.params)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: err = %v, want it to name %q", tc.kind, tc.params, err, tc.want)
		}
	}
}

// TestCircuitStructure checks what CircuitOptions promises against a
// gate evaluator written apart (counting ones): every gate function costs
// nothing exactly where its output (last in scope) is its kind's value,
// reads at most FanIn lines made at most Window lines before, every line
// nothing reads is observed (hard on one value), priors are on the inputs
// only, and some assignment is feasible (by enumeration: a small circuit).
func TestCircuitStructure(t *testing.T) {
	want := func(kind string, in []int) int {
		ones := 0
		for _, b := range in {
			ones += b
		}
		switch kind {
		case "and":
			return b2i(ones == len(in))
		case "or":
			return b2i(ones > 0)
		case "nand":
			return b2i(ones < len(in))
		case "nor":
			return b2i(ones == 0)
		case "xor":
			return ones % 2
		case "not":
			return 1 - ones
		}
		t.Fatalf("unknown gate kind %q", kind)
		return 0
	}
	o := DefaultCircuit()
	o.Inputs, o.Gates, o.FanIn, o.Window = 4, 10, 3, 5
	for seed := range uint64(20) {
		p, err := Circuit(seed, o)
		if err != nil {
			t.Fatal(err)
		}
		read := make([]bool, len(p.Variables))
		observed := make([]bool, len(p.Variables))
		for _, f := range p.Functions {
			name := strings.TrimRight(f.Name, "0123456789")
			out := f.Scope[len(f.Scope)-1]
			switch name {
			case "prior":
				if out >= o.Inputs || f.Costs[0]*f.Costs[1] != 0 {
					t.Fatalf("seed %d: %s on line %d costs %v", seed, f.Name, out, f.Costs)
				}
			case "obs":
				observed[out] = true
				if mva.IsHard(f.Costs[0]) == mva.IsHard(f.Costs[1]) {
					t.Fatalf("seed %d: %s costs %v", seed, f.Name, f.Costs)
				}
			default:
				fan := len(f.Scope) - 1
				if fan > o.FanIn || (name == "not") != (fan == 1) {
					t.Fatalf("seed %d: %s reads %d lines", seed, f.Name, fan)
				}
				for _, v := range f.Scope[:fan] {
					if v >= out || out-v > o.Window {
						t.Fatalf("seed %d: %s (line %d) reads line %d", seed, f.Name, out, v)
					}
					read[v] = true
				}
				for e, c := range f.Costs {
					in := make([]int, fan)
					for pos := range fan {
						in[pos] = e >> (fan - pos) & 1
					}
					if (c == 0) != (e&1 == want(name, in)) || c < 0 || mva.IsHard(c) {
						t.Fatalf("seed %d: %s%v -> %d costs %v", seed, f.Name, in, e&1, c)
					}
				}
			}
		}
		for v := o.Inputs; v < len(p.Variables); v++ {
			if !read[v] && !observed[v] {
				t.Fatalf("seed %d: output line %d is not observed", seed, v)
			}
		}
		feasible := false
		a := make([]int, len(p.Variables))
		for m := 0; m < 1<<len(a) && !feasible; m++ {
			for v := range a {
				a[v] = m >> v & 1
			}
			c, err := p.Eval(a)
			feasible = err == nil && !mva.IsHard(c)
		}
		if !feasible {
			t.Fatalf("seed %d: no feasible assignment", seed)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
