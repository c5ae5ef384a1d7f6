package gen

import (
	"fmt"
	"strconv"

	"github.com/hearth-dcop/hearth/mva"
)

// CircuitOptions shape a circuit diagnosis instance in the manner of the
// ISCAS89 circuits of the FABE and UAI collections (Brglez, Bryan and
// Kozminski, ISCAS 1989, as Bayesian networks for most probable
// explanation): every line of a logic circuit is a binary variable; the
// primary inputs and the flip-flop outputs (cut open, as in the scan
// versions of the files) carry a prior; every gate (AND, OR, NAND, NOR,
// XOR, NOT) is a function of its inputs and its output that costs nothing
// where the output is the gate's value and a fault cost where it is not;
// the outputs that were observed are fixed (hard). Where ISCAS89 is
// silent this generator decides: a gate reads 1 to FanIn lines among the
// Window lines made just before it (circuits are wired locally, which
// keeps their width far below their size), priors cost 0 or 1–5, fault
// costs 20–60; the observations come from simulating the circuit on
// random inputs with each gate faulty with probability Fault, so that
// simulated run is a feasible assignment and explanations are needed.
type CircuitOptions struct {
	// Inputs is the number of primary inputs and flip-flop outputs.
	Inputs int
	// Gates is the number of gates (one line each).
	Gates int
	// FanIn is the most inputs of a gate (functions of FanIn+1 lines).
	FanIn int
	// Window is how many of the lines made just before a gate it may read.
	Window int
	// Fault is the probability that a gate is faulty in the simulated run.
	Fault float64
	// Observe is the fraction of lines observed besides the outputs
	// (lines nothing reads), which are always observed.
	Observe float64
}

// DefaultCircuit returns 20 inputs and 200 gates of fan-in up to 3.
func DefaultCircuit() CircuitOptions {
	return CircuitOptions{Inputs: 20, Gates: 200, FanIn: 3, Window: 30, Fault: 0.05, Observe: 0.1}
}

// Gate kinds of Circuit.
const (
	gateAnd = iota
	gateOr
	gateNand
	gateNor
	gateXor
	gateNot
)

var gateNames = [...]string{"and", "or", "nand", "nor", "xor", "not"}

// gateValue is the output of gate kind g on the input bits in.
func gateValue(g int, in []int) int {
	and, or, xor := 1, 0, 0
	for _, b := range in {
		and &= b
		or |= b
		xor ^= b
	}
	switch g {
	case gateAnd:
		return and
	case gateOr:
		return or
	case gateNand:
		return 1 - and
	case gateNor:
		return 1 - or
	case gateXor:
		return xor
	default: // gateNot
		return 1 - in[0]
	}
}

// Circuit returns the circuit diagnosis instance of seed under o: agent
// "n<k>" owns line "x<k>"; lines 0 … Inputs−1 are the inputs, the others
// gate outputs in topological order. Functions are "prior<k>" (inputs),
// "<kind><k>" (the gate making line k, its inputs first, the output
// last) and "obs<k>" (observations).
func Circuit(seed uint64, o CircuitOptions) (*mva.Problem, error) {
	switch {
	case o.Inputs < 1 || o.Inputs+o.Gates > maxAgents:
		return nil, fmt.Errorf("gen circuit: inputs %d is outside [1, %d]", o.Inputs, maxAgents-max(o.Gates, 0))
	case o.Gates < 1 || o.Gates > maxAgents:
		return nil, fmt.Errorf("gen circuit: gates %d is outside [1, %d]", o.Gates, maxAgents)
	case o.FanIn < 1 || o.FanIn > 8:
		return nil, fmt.Errorf("gen circuit: fanin %d is outside [1, 8]", o.FanIn)
	case o.Window < 1:
		return nil, fmt.Errorf("gen circuit: window %d must be at least 1", o.Window)
	}
	for _, c := range []struct {
		name string
		x    float64
	}{{"fault", o.Fault}, {"observe", o.Observe}} {
		if err := checkUnit("gen circuit: "+c.name, c.x); err != nil {
			return nil, err
		}
	}
	r := newRand(seed, 0x6369_7263) // "circ"
	n := o.Inputs + o.Gates
	p := &mva.Problem{Name: "circuit-" + strconv.FormatUint(seed, 10)}
	for k := range n {
		p.Agents = append(p.Agents, mva.Agent{Name: "n" + strconv.Itoa(k)})
		p.Variables = append(p.Variables, mva.Variable{Name: "x" + strconv.Itoa(k), Domain: intLabels(0, 2), Agent: k})
	}
	val := make([]int, n) // the simulated run
	read := make([]bool, n)
	for k := range o.Inputs {
		c := []float64{0, 0}
		c[r.IntN(2)] = float64(1 + r.IntN(5))
		p.Functions = append(p.Functions, mva.Function{Name: "prior" + strconv.Itoa(k), Scope: []int{k}, Costs: c})
		val[k] = r.IntN(2)
	}
	in := make([]int, 0, o.FanIn)
	for k := o.Inputs; k < n; k++ {
		lo := max(0, k-o.Window)
		fan := min(1+r.IntN(o.FanIn), k-lo)
		scope := make([]int, 0, fan+1)
		for len(scope) < fan {
			v := lo + r.IntN(k-lo)
			dup := false
			for _, w := range scope {
				dup = dup || w == v
			}
			if !dup {
				scope = append(scope, v)
				read[v] = true
			}
		}
		g := gateNot
		if fan > 1 {
			g = r.IntN(gateXor + 1)
		}
		scope = append(scope, k)
		fault := float64(20 + r.IntN(41))
		costs := make([]float64, 1<<len(scope))
		for e := range costs {
			in = in[:0]
			for pos := range fan {
				in = append(in, e>>(fan-pos)&1)
			}
			if e&1 != gateValue(g, in) {
				costs[e] = fault
			}
		}
		p.Functions = append(p.Functions, mva.Function{Name: gateNames[g] + strconv.Itoa(k), Scope: scope, Costs: costs})
		in = in[:0]
		for _, v := range scope[:fan] {
			in = append(in, val[v])
		}
		val[k] = gateValue(g, in)
		if r.Float64() < o.Fault {
			val[k] = 1 - val[k]
		}
	}
	for k := o.Inputs; k < n; k++ {
		if read[k] && r.Float64() >= o.Observe {
			continue
		}
		c := []float64{0, 0}
		c[1-val[k]] = mva.Hard
		p.Functions = append(p.Functions, mva.Function{Name: "obs" + strconv.Itoa(k), Scope: []int{k}, Costs: c})
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("gen circuit: %w", err)
	}
	return p, nil
}
