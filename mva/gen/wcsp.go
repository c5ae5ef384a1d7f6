package gen

import (
	"fmt"
	"math"
	"strconv"

	"github.com/hearth-dcop/hearth/mva"
)

// The two kinds of this file imitate families of the public WCSP
// benchmarks that exact solvers are compared on (the FABE collection
// issue 18 measures against): radio link frequency assignment (CELAR) and
// earth-observation satellite scheduling (SPOT5). The real files are few
// and fixed; these give instances of the same structure at any size and
// seed. Costs are whole numbers and every instance has a feasible
// assignment (all photos rejected; every link on its duplex pair of
// frequencies), so exact runs are optimisations, not infeasibility proofs.

// FAPOptions shape a frequency assignment instance in the manner of the
// CELAR radio link frequency assignment problems (Cabon, de Givry,
// Lobjois, Schiex and Warners, Constraints 4(1), 1999): radio links come in
// duplex pairs whose two frequencies must lie exactly half a band apart
// (hard); links of nearby pairs interfere unless their frequencies are far
// enough apart, the nearer the farther (soft, with CELAR's cost classes
// 1, 10, 100 and 1000); some links prefer a frequency (soft mobility
// cost). Where CELAR is silent or the files vary, this generator decides:
// pairs are placed uniformly in the unit square and interfere within
// Radius; the separation needed falls linearly with distance from Sep to
// 1; both the go and the return links of two interfering pairs interfere.
type FAPOptions struct {
	// Pairs is the number of duplex pairs (agents); each owns two links.
	Pairs int
	// Freqs is the number of frequencies (values) of each link, even: the
	// duplex partner of frequency f is f ± Freqs/2.
	Freqs int
	// Radius is the distance within which two pairs interfere.
	Radius float64
	// Sep is the separation (in frequency indices) that the closest pairs
	// need; farther ones need less, down to 1.
	Sep int
	// Mobility is the fraction of links with a preferred frequency.
	Mobility float64
}

// DefaultFAP returns 40 pairs over 24 frequencies.
func DefaultFAP() FAPOptions {
	return FAPOptions{Pairs: 40, Freqs: 24, Radius: 0.25, Sep: 4, Mobility: 0.2}
}

// costClass draws one of CELAR's cost classes 1, 10, 100 and 1000, the
// lighter the likelier (40%, 30%, 20%, 10%).
func costClass(u float64) float64 {
	switch {
	case u < 0.4:
		return 1
	case u < 0.7:
		return 10
	case u < 0.9:
		return 100
	}
	return 1000
}

// FAP returns the frequency assignment instance of seed under o: agent
// "p<k>" owns links "l<2k>" (go) and "l<2k+1>" (return); functions are
// named by role ("duplex3", "interf5_7_go", "mob12").
func FAP(seed uint64, o FAPOptions) (*mva.Problem, error) {
	switch {
	case o.Pairs < 1 || o.Pairs > maxAgents:
		return nil, fmt.Errorf("gen fap: pairs %d is outside [1, %d]", o.Pairs, maxAgents)
	case o.Freqs < 2 || o.Freqs%2 != 0 || o.Freqs > 1<<12:
		return nil, fmt.Errorf("gen fap: freqs %d must be even, in [2, %d]", o.Freqs, 1<<12)
	case !(o.Radius > 0 && o.Radius <= 2):
		return nil, fmt.Errorf("gen fap: radius %v is outside (0, 2]", o.Radius)
	case o.Sep < 1 || o.Sep >= o.Freqs:
		return nil, fmt.Errorf("gen fap: sep %d is outside [1, freqs)", o.Sep)
	}
	if err := checkUnit("gen fap: mobility", o.Mobility); err != nil {
		return nil, err
	}
	r := newRand(seed, 0x6661_70) // "fap"
	F, half := o.Freqs, o.Freqs/2
	p := &mva.Problem{Name: "fap-" + strconv.FormatUint(seed, 10)}
	labels := intLabels(0, F)
	for k := range o.Pairs {
		p.Agents = append(p.Agents, mva.Agent{Name: "p" + strconv.Itoa(k)})
		for j := range 2 {
			p.Variables = append(p.Variables, mva.Variable{Name: "l" + strconv.Itoa(2*k+j), Domain: labels, Agent: k})
		}
	}
	xs, ys := make([]float64, o.Pairs), make([]float64, o.Pairs)
	for k := range o.Pairs {
		xs[k], ys[k] = r.Float64(), r.Float64()
	}
	add := func(name string, scope []int, costs []float64) {
		p.Functions = append(p.Functions, mva.Function{Name: name, Scope: scope, Costs: costs})
	}
	for k := range o.Pairs {
		duplex := make([]float64, F*F)
		for a := range F {
			for b := range F {
				if a-b != half && b-a != half {
					duplex[a*F+b] = mva.Hard
				}
			}
		}
		add("duplex"+strconv.Itoa(k), []int{2 * k, 2*k + 1}, duplex)
	}
	for k := range o.Pairs {
		for q := k + 1; q < o.Pairs; q++ {
			d := math.Hypot(xs[k]-xs[q], ys[k]-ys[q])
			if d >= o.Radius {
				continue
			}
			sep := 1 + int(float64(o.Sep-1)*(1-d/o.Radius)+0.5)
			for j, role := range []string{"go", "ret"} {
				w := costClass(r.Float64())
				c := make([]float64, F*F)
				for a := range F {
					for b := range F {
						if a-b < sep && b-a < sep {
							c[a*F+b] = w
						}
					}
				}
				add(fmt.Sprintf("interf%d_%d_%s", k, q, role), []int{2*k + j, 2*q + j}, c)
			}
		}
	}
	for v := range 2 * o.Pairs {
		if r.Float64() >= o.Mobility {
			continue
		}
		pref, w := r.IntN(F), costClass(r.Float64())
		c := make([]float64, F)
		for a := range c {
			if a != pref {
				c[a] = w
			}
		}
		add("mob"+strconv.Itoa(v), []int{v}, c)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("gen fap: %w", err)
	}
	return p, nil
}

// SpotOptions shape an earth-observation scheduling instance in the manner
// of the SPOT5 daily management problems (Bensana, Lemaître and Verfaillie,
// Constraints 4(3), 1999): each candidate photograph is rejected (value
// 0, at its weight) or taken by one of the instruments — mono photographs
// by the front, middle or rear one (values 1–3), stereo ones by front and
// rear together (value 1); photographs close on the satellite's track
// cannot use the same instrument (binary, hard), and the on-board recorder
// holds at most two of three close photographs (ternary, hard). Where
// SPOT5 is silent this generator decides: photographs are in track order
// and "close" means at most Window positions apart; weights are 1–10,
// urgent ones (5%) 1000.
type SpotOptions struct {
	// Photos is the number of candidate photographs (one agent each).
	Photos int
	// Stereo is the fraction of stereo photographs.
	Stereo float64
	// Window is how many positions apart two photographs may be and still
	// conflict.
	Window int
	// Conflict is the probability that two close photographs conflict.
	Conflict float64
	// Recorder is the probability of a recorder constraint on three close
	// photographs.
	Recorder float64
}

// DefaultSpot returns 60 photographs.
func DefaultSpot() SpotOptions {
	return SpotOptions{Photos: 60, Stereo: 0.3, Window: 4, Conflict: 0.6, Recorder: 0.05}
}

// Spot returns the satellite scheduling instance of seed under o: agent
// "s<k>" owns photograph "ph<k>"; functions "w<k>" (rejection weight),
// "c<i>_<j>" (instrument conflicts), "r<i>_<j>_<k>" (recorder).
func Spot(seed uint64, o SpotOptions) (*mva.Problem, error) {
	switch {
	case o.Photos < 1 || o.Photos > maxAgents:
		return nil, fmt.Errorf("gen spot: photos %d is outside [1, %d]", o.Photos, maxAgents)
	case o.Window < 1:
		return nil, fmt.Errorf("gen spot: window %d must be at least 1", o.Window)
	}
	for _, c := range []struct {
		name string
		x    float64
	}{{"stereo", o.Stereo}, {"conflict", o.Conflict}, {"recorder", o.Recorder}} {
		if err := checkUnit("gen spot: "+c.name, c.x); err != nil {
			return nil, err
		}
	}
	r := newRand(seed, 0x7370_6f74) // "spot"
	p := &mva.Problem{Name: "spot-" + strconv.FormatUint(seed, 10)}
	stereo := make([]bool, o.Photos)
	for k := range o.Photos {
		stereo[k] = r.Float64() < o.Stereo
		d := 4
		if stereo[k] {
			d = 2
		}
		p.Agents = append(p.Agents, mva.Agent{Name: "s" + strconv.Itoa(k)})
		p.Variables = append(p.Variables, mva.Variable{Name: "ph" + strconv.Itoa(k), Domain: intLabels(0, d), Agent: k})
		w := float64(1 + r.IntN(10))
		if r.Float64() < 0.05 {
			w = 1000
		}
		c := make([]float64, d)
		c[0] = w
		p.Functions = append(p.Functions, mva.Function{Name: "w" + strconv.Itoa(k), Scope: []int{k}, Costs: c})
	}
	// uses reports whether value a of photograph k uses instrument i
	// (1 front, 2 middle, 3 rear).
	uses := func(k, a, i int) bool {
		if a == 0 {
			return false
		}
		if stereo[k] {
			return i == 1 || i == 3
		}
		return a == i
	}
	dom := func(k int) int { return len(p.Variables[k].Domain) }
	for i := range o.Photos {
		for j := i + 1; j < o.Photos && j-i <= o.Window; j++ {
			if r.Float64() >= o.Conflict {
				continue
			}
			di, dj := dom(i), dom(j)
			c := make([]float64, di*dj)
			for a := range di {
				for b := range dj {
					for ins := 1; ins <= 3; ins++ {
						if uses(i, a, ins) && uses(j, b, ins) {
							c[a*dj+b] = mva.Hard
						}
					}
				}
			}
			p.Functions = append(p.Functions, mva.Function{Name: fmt.Sprintf("c%d_%d", i, j), Scope: []int{i, j}, Costs: c})
		}
	}
	for i := range o.Photos {
		for j := i + 1; j < o.Photos && j-i <= o.Window; j++ {
			for k := j + 1; k < o.Photos && k-i <= o.Window; k++ {
				if r.Float64() >= o.Recorder {
					continue
				}
				di, dj, dk := dom(i), dom(j), dom(k)
				c := make([]float64, di*dj*dk)
				for a := 1; a < di; a++ {
					for b := 1; b < dj; b++ {
						for e := 1; e < dk; e++ {
							c[(a*dj+b)*dk+e] = mva.Hard
						}
					}
				}
				p.Functions = append(p.Functions, mva.Function{Name: fmt.Sprintf("r%d_%d_%d", i, j, k), Scope: []int{i, j, k}, Costs: c})
			}
		}
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("gen spot: %w", err)
	}
	return p, nil
}
