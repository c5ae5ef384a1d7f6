package reform

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hearth-dcop/hearth/mva"
)

// Compilation gives every agent of p that owns variables one
// pseudo-variable, named after the agent, whose values are the joint
// assignments of the agent's variables (in variable index order, the last
// fastest) labelled by their values joined with "|", such as "0|1|0". The
// agent's local functions (mva.Decompose's F_i) are summed into one unary
// function over its pseudo-variable, "local:<agent>". The functions
// between agents are grouped by the set of agents they touch and each
// group is summed into one function over those agents' pseudo-variables
// (in agent order), "ext:<agent>,<agent>,...": one table per pair (or
// tuple) of agents, as a one-variable-per-agent algorithm expects, and no
// smaller — a function over one variable of each of two agents becomes a
// table over both agents' whole product domains. Zero-arity functions and
// the offset are kept as they are.
//
// Agents without variables are left out, so Owner maps the compiled
// agents to the agents of p. Back decodes each pseudo-value into the
// values of the agent's variables.
//
// Compilation fails with an error wrapping ErrTooLarge, naming the agent
// or function and the size, as soon as a domain or a table would have more
// than maxEntries entries; this exponential growth is why the thesis's
// compilation baseline solved none of its radar instances. maxEntries must
// be positive.
//
// The thesis's own compilation "retains exclusively the solutions of the
// local problem"; this one keeps the whole product, as the classic
// reformulation does, and marks locally infeasible pseudo-values with a
// Hard unary cost, which protocols prune like any other hard entry.
func Compilation(p *mva.Problem, maxEntries int) (*Reformulation, error) {
	if maxEntries <= 0 {
		return nil, fmt.Errorf("reform: compilation: the table size limit must be positive, not %d", maxEntries)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("reform: compilation: %w", err)
	}
	c, err := newCompiler(p, maxEntries)
	if err != nil {
		return nil, err
	}
	q := &mva.Problem{Name: p.Name, Sense: p.Sense, Offset: p.Offset}
	names := uniqueNames{}
	for k := range c.agents {
		a := &c.agents[k]
		name := names.fresh(p.Agents[a.orig].Name)
		q.Agents = append(q.Agents, mva.Agent{Name: name})
		q.Variables = append(q.Variables, mva.Variable{Name: name, Domain: c.labels(a), Agent: k})
	}
	d := mva.Decompose(p)
	for k := range c.agents {
		a := &c.agents[k]
		var local []int
		for _, fi := range d.Subs[a.orig].Functions {
			if len(p.Functions[fi].Scope) > 0 {
				local = append(local, fi)
			}
		}
		if len(local) > 0 {
			q.Functions = append(q.Functions, mva.Function{
				Name:  "local:" + q.Agents[k].Name,
				Scope: []int{k},
				Costs: c.table([]int{k}, local),
			})
		}
	}
	for _, f := range p.Functions {
		if len(f.Scope) == 0 {
			q.Functions = append(q.Functions, f)
		}
	}
	groups, err := c.groups(d.External)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		names := make([]string, len(g.agents))
		for i, k := range g.agents {
			names[i] = q.Agents[k].Name
		}
		q.Functions = append(q.Functions, mva.Function{
			Name:  "ext:" + strings.Join(names, ","),
			Scope: g.agents,
			Costs: c.table(g.agents, g.funcs),
		})
	}
	owner := make([]int, len(c.agents))
	for k, a := range c.agents {
		owner[k] = a.orig
	}
	return &Reformulation{Name: "compilation", Problem: q, Owner: owner, Back: c.back}, nil
}

// compiler holds the pseudo-variables' layout.
type compiler struct {
	p          *mva.Problem
	maxEntries int
	agents     []compiled
	// of[v] is the compiled agent of original variable v, and pos[v] the
	// position of v in that agent's vars.
	of, pos []int
}

// compiled is one agent's pseudo-variable: vars in index order, their
// radix (stride) in the pseudo-value, and the domain size.
type compiled struct {
	orig   int
	vars   []int
	stride []int
	size   int
}

func newCompiler(p *mva.Problem, maxEntries int) (*compiler, error) {
	c := &compiler{p: p, maxEntries: maxEntries, of: make([]int, len(p.Variables)), pos: make([]int, len(p.Variables))}
	vars := make([][]int, len(p.Agents))
	for v, x := range p.Variables {
		vars[x.Agent] = append(vars[x.Agent], v)
	}
	for a, vs := range vars {
		if len(vs) == 0 {
			continue
		}
		cp := compiled{orig: a, vars: vs, stride: make([]int, len(vs)), size: 1}
		for i := len(vs) - 1; i >= 0; i-- {
			cp.stride[i] = cp.size
			d := p.DomainSize(vs[i])
			if cp.size > maxEntries/d {
				return nil, fmt.Errorf("%w: compilation: agent %q: the product of the domains of its %d variables has %s values, more than the limit of %d",
					ErrTooLarge, p.Agents[a].Name, len(vs), productString(p, vs), maxEntries)
			}
			cp.size *= d
		}
		for i, v := range vs {
			c.of[v], c.pos[v] = len(c.agents), i
		}
		c.agents = append(c.agents, cp)
	}
	return c, nil
}

// productString writes the size of the product of the domains of vs
// exactly, even when it overflows an int, for error messages.
func productString(p *mva.Problem, vs []int) string {
	// Repeated multiplication of a decimal string keeps this dependency
	// free; the numbers involved have a few dozen digits at most.
	digits := []int{1} // little-endian
	for _, v := range vs {
		carry := 0
		d := p.DomainSize(v)
		for i := range digits {
			x := digits[i]*d + carry
			digits[i], carry = x%10, x/10
		}
		for carry > 0 {
			digits = append(digits, carry%10)
			carry /= 10
		}
	}
	var b strings.Builder
	for i := len(digits) - 1; i >= 0; i-- {
		b.WriteByte(byte('0' + digits[i]))
	}
	return b.String()
}

// value returns the index of original variable v's value in pseudo-value
// pv of its agent.
func (c *compiler) value(v, pv int) int {
	a := &c.agents[c.of[v]]
	return pv / a.stride[c.pos[v]] % c.p.DomainSize(v)
}

// labels returns the labels of a's pseudo-values: the labels of its
// variables' values joined with "|". When a label itself holds "|" the
// joined labels could collide, so the value indices are joined instead.
func (c *compiler) labels(a *compiled) []string {
	useIndex := false
	for _, v := range a.vars {
		for _, l := range c.p.Variables[v].Domain {
			useIndex = useIndex || strings.Contains(l, "|")
		}
	}
	out := make([]string, a.size)
	parts := make([]string, len(a.vars))
	for pv := range out {
		for i, v := range a.vars {
			x := c.value(v, pv)
			if useIndex {
				parts[i] = strconv.Itoa(x)
			} else {
				parts[i] = c.p.Variables[v].Domain[x]
			}
		}
		out[pv] = strings.Join(parts, "|")
	}
	return out
}

// group is a set of compiled agents (sorted) and the original functions
// whose scopes touch exactly those agents.
type group struct {
	agents []int
	funcs  []int
}

// groups sorts the external functions by the set of agents they touch,
// in order of first appearance, and checks each group's table size.
func (c *compiler) groups(external []int) ([]group, error) {
	var out []group
	index := map[string]int{}
	for _, fi := range external {
		var ks []int
		for _, v := range c.p.Functions[fi].Scope {
			if k := c.of[v]; !slices.Contains(ks, k) {
				ks = append(ks, k)
			}
		}
		slices.Sort(ks)
		key := fmt.Sprint(ks)
		gi, ok := index[key]
		if !ok {
			if err := c.checkSize(fi, ks); err != nil {
				return nil, err
			}
			gi = len(out)
			index[key] = gi
			out = append(out, group{agents: ks})
		}
		out[gi].funcs = append(out[gi].funcs, fi)
	}
	return out, nil
}

// checkSize refuses a table over the pseudo-variables of ks with more than
// maxEntries entries; fi is the function that asks for it.
func (c *compiler) checkSize(fi int, ks []int) error {
	n := 1
	for _, k := range ks {
		s := c.agents[k].size
		if n > c.maxEntries/s {
			names := make([]string, len(ks))
			sizes := make([]string, len(ks))
			for i, k := range ks {
				names[i] = strconv.Quote(c.p.Agents[c.agents[k].orig].Name)
				sizes[i] = strconv.Itoa(c.agents[k].size)
			}
			name := c.p.Functions[fi].Name
			if name == "" {
				name = "#" + strconv.Itoa(fi)
			}
			return fmt.Errorf("%w: compilation: function %s between agents %s needs a table of %s entries, more than the limit of %d",
				ErrTooLarge, name, strings.Join(names, ", "), strings.Join(sizes, "×"), c.maxEntries)
		}
		n *= s
	}
	return nil
}

// table returns the sum of the original functions funcs as a table over
// the pseudo-variables of the compiled agents ks (sorted), whose size has
// been checked. Each function's index is the sum, over the agents, of a
// per-agent contribution precomputed for every pseudo-value, so an entry
// costs one addition per agent and function.
func (c *compiler) table(ks []int, funcs []int) []float64 {
	size := 1
	for _, k := range ks {
		size *= c.agents[k].size
	}
	costs := make([]float64, size)
	pv := make([]int, len(ks))
	for _, fi := range funcs {
		f := &c.p.Functions[fi]
		strides := c.p.Strides(f.Scope)
		contrib := make([][]int, len(ks))
		for j, k := range ks {
			a := &c.agents[k]
			contrib[j] = make([]int, a.size)
			for i, v := range f.Scope {
				if c.of[v] != k {
					continue
				}
				for x := range contrib[j] {
					contrib[j][x] += c.value(v, x) * strides[i]
				}
			}
		}
		clear(pv)
		for e := range costs {
			idx := 0
			for j := range ks {
				idx += contrib[j][pv[j]]
			}
			costs[e] += f.Costs[idx]
			for j := len(ks) - 1; j >= 0; j-- {
				pv[j]++
				if pv[j] < c.agents[ks[j]].size {
					break
				}
				pv[j] = 0
			}
		}
	}
	return costs
}

// back decodes an assignment of the compiled problem.
func (c *compiler) back(assign []int) ([]int, error) {
	if len(assign) != len(c.agents) {
		return nil, fmt.Errorf("reform: assignment has %d values for %d compiled variables", len(assign), len(c.agents))
	}
	out := make([]int, len(c.p.Variables))
	for k, pv := range assign {
		a := &c.agents[k]
		if pv < 0 || pv >= a.size {
			return nil, fmt.Errorf("reform: compiled variable of agent %q: value index %d outside its domain of %d values",
				c.p.Agents[a.orig].Name, pv, a.size)
		}
		for _, v := range a.vars {
			out[v] = c.value(v, pv)
		}
	}
	return out, nil
}
