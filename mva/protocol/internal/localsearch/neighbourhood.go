package localsearch

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/wire"
)

// Neighbourhood is an agent's view of the functions it shares with other
// agents: its own boundary variables, the other agents' variables those
// functions read (the context slots), and which of them each neighbour
// sends. It reads only what a protocol agent may read: its subproblem's
// boundary, the external functions it is in, and the domains and owners of
// the variables in their scopes.
//
// A neighbour j sends, in a VALUE, only its boundary variables that appear
// in a function shared with this agent, in increasing variable index; both
// sides derive that list from the shared functions alone (notes §2.4, the
// MVA column of VALUE), so the body needs no variable names.
type Neighbourhood struct {
	ID         int
	Neighbours []int
	// Domains are the domain sizes of the agent's boundary variables
	// (Subproblem.Boundary order).
	Domains []int
	// SlotDomains are the domain sizes of the context slots.
	SlotDomains []int
	// Ctx holds the latest known value of every context slot.
	Ctx []int

	lp       *mva.LocalProblem
	rows     int
	slotVars []int // slot → problem variable
	funcs    []extFunc
	// refs, dims and agents hold every function's scope, dimensions and
	// other agents end to end (extFunc's offsets): on a complete graph
	// an agent is in (n−1)·windows functions (SHDS: 5,700 at 474 homes),
	// and a record per function of slices and costs held 1.3 MB per home
	// there, 0.62 GB for the street.
	refs   []ref
	dims   []int32
	agents []int
	byVar  [][]int32 // own boundary index → funcs containing it
	in     [][]int   // neighbour position → its slots, by variable index
	out    [][]int   // neighbour position → own boundary indices it sees
	slotOf []int     // slot → owner's neighbour position
	// pairs[j] are the functions whose only other agent is the
	// neighbour at position j (Interaction); pairwise is false when some
	// function reads two or more other agents.
	pairs    [][]int32
	pairwise bool
	scratch  []int // Interaction's copy of one neighbour's slots
	checks   int64
}

// ref is a scope position: own boundary index k as −1−k, or a context
// slot s as s.
type ref int32

func ownRef(k int) ref  { return ref(-1 - k) }
func (r ref) own() bool { return r < 0 }
func (r ref) idx() int {
	if r < 0 {
		return int(-1 - r)
	}
	return int(r)
}

// extFunc is an external function: the problem's function fi, its scope
// and dimensions at Neighbourhood.refs[off:off+w] and .dims[off:off+w],
// and the other agents in its scope, as neighbour positions, at
// Neighbourhood.agents[aoff:aoff+na].
type extFunc struct {
	fi, off, aoff int32
	w, na         uint16
}

func (nb *Neighbourhood) scope(f *extFunc) []ref {
	return nb.refs[f.off : f.off+int32(f.w)]
}

func (nb *Neighbourhood) fdims(f *extFunc) []int32 {
	return nb.dims[f.off : f.off+int32(f.w)]
}

func (nb *Neighbourhood) fagents(f *extFunc) []int {
	return nb.agents[f.aoff : f.aoff+int32(f.na)]
}

func (nb *Neighbourhood) costs(f *extFunc) []float64 {
	return nb.lp.Problem.Functions[f.fi].Costs
}

// New builds agent n's neighbourhood. It fails when the node is
// inconsistent (an external function over a variable that is neither the
// agent's boundary nor a neighbour's), which only a broken caller causes.
func New(n *mva.Node) (*Neighbourhood, error) {
	if n == nil || n.Decomp == nil || n.Local == nil || n.Local.LP == nil {
		return nil, fmt.Errorf("node has no decomposition or local view")
	}
	if n.ID < 0 || n.ID >= len(n.Decomp.Subs) {
		return nil, fmt.Errorf("node id %d outside 0..%d", n.ID, len(n.Decomp.Subs)-1)
	}
	p := n.Problem()
	sub := n.Sub()
	rows, err := n.Local.LP.Rows()
	if err != nil {
		return nil, err
	}
	nb := &Neighbourhood{
		ID:         n.ID,
		Neighbours: slices.Clone(n.Neighbours),
		lp:         n.Local.LP,
		rows:       rows,
		byVar:      make([][]int32, len(sub.Boundary)),
		in:         make([][]int, len(n.Neighbours)),
		out:        make([][]int, len(n.Neighbours)),
		pairs:      make([][]int32, len(n.Neighbours)),
		pairwise:   true,
	}
	if !slices.IsSorted(nb.Neighbours) {
		return nil, fmt.Errorf("neighbours %v are not sorted", nb.Neighbours)
	}
	for _, v := range sub.Boundary {
		nb.Domains = append(nb.Domains, p.DomainSize(v))
	}
	// Context slots: every other agent's variable in one of our external
	// functions, in increasing variable index.
	var others []int
	for _, fi := range n.External {
		if fi < 0 || fi >= len(p.Functions) {
			return nil, fmt.Errorf("external function %d out of range", fi)
		}
		for _, v := range p.Functions[fi].Scope {
			if p.Variables[v].Agent != n.ID {
				others = append(others, v)
			}
		}
	}
	slices.Sort(others)
	others = slices.Compact(others)
	slot := make(map[int]int, len(others))
	nb.slotOf, nb.SlotDomains = make([]int, 0, len(others)), make([]int, 0, len(others))
	for s, v := range others {
		j := nb.position(p.Variables[v].Agent)
		if j < 0 {
			return nil, fmt.Errorf("variable %s of agent %d is in an external function but the agent is not a neighbour", p.Variables[v].Name, p.Variables[v].Agent)
		}
		slot[v] = s
		nb.slotOf = append(nb.slotOf, j)
		nb.SlotDomains = append(nb.SlotDomains, p.DomainSize(v))
		nb.in[j] = append(nb.in[j], s)
	}
	nb.Ctx = make([]int, len(others))
	nb.slotVars = others
	own := make(map[int]int, len(sub.Boundary))
	for k, v := range sub.Boundary {
		own[v] = k
	}
	sees := make([]map[int]bool, len(n.Neighbours))
	for j := range sees {
		sees[j] = map[int]bool{}
	}
	width := 0
	for _, fi := range n.External {
		width += len(p.Functions[fi].Scope)
	}
	if len(n.External) > math.MaxInt32 || width > math.MaxInt32 {
		return nil, fmt.Errorf("%d external functions of %d variables: too many", len(n.External), width)
	}
	nb.funcs = make([]extFunc, 0, len(n.External))
	nb.refs, nb.dims, nb.agents = make([]ref, 0, width), make([]int32, 0, width), make([]int, 0, width)
	var mine []int
	for _, fi := range n.External {
		f := &p.Functions[fi]
		if len(f.Scope) > math.MaxUint16 {
			return nil, fmt.Errorf("external function %d reads %d variables: too many", fi, len(f.Scope))
		}
		ef := extFunc{fi: int32(fi), off: int32(len(nb.refs)), aoff: int32(len(nb.agents)), w: uint16(len(f.Scope))}
		mine = mine[:0]
		for _, v := range f.Scope {
			nb.dims = append(nb.dims, int32(p.DomainSize(v)))
			if p.Variables[v].Agent == n.ID {
				k, ok := own[v]
				if !ok {
					return nil, fmt.Errorf("variable %s is in an external function but not a boundary variable", p.Variables[v].Name)
				}
				nb.refs = append(nb.refs, ownRef(k))
				mine = append(mine, k)
				continue
			}
			s := slot[v]
			nb.refs = append(nb.refs, ref(s))
			if j := nb.slotOf[s]; !slices.Contains(nb.agents[ef.aoff:], j) {
				nb.agents = append(nb.agents, j)
			}
		}
		ef.na = uint16(len(nb.agents) - int(ef.aoff))
		agents := nb.fagents(&ef)
		for _, k := range mine {
			nb.byVar[k] = append(nb.byVar[k], int32(len(nb.funcs)))
			for _, j := range agents {
				sees[j][k] = true
			}
		}
		switch len(agents) {
		case 1:
			nb.pairs[agents[0]] = append(nb.pairs[agents[0]], int32(len(nb.funcs)))
		default:
			nb.pairwise = false
		}
		nb.funcs = append(nb.funcs, ef)
	}
	most := 0
	for _, in := range nb.in {
		most = max(most, len(in))
	}
	nb.scratch = make([]int, most)
	for j := range sees {
		for k := range sees[j] {
			nb.out[j] = append(nb.out[j], k)
		}
		slices.Sort(nb.out[j])
	}
	return nb, nil
}

// position returns the index of agent a in Neighbours, or −1.
func (nb *Neighbourhood) position(a int) int {
	if i, ok := slices.BinarySearch(nb.Neighbours, a); ok {
		return i
	}
	return -1
}

// Position returns the index of agent a in Neighbours, or an error naming
// the sender when a is not a neighbour (a forged or misrouted message).
func (nb *Neighbourhood) Position(a int) (int, error) {
	if i := nb.position(a); i >= 0 {
		return i, nil
	}
	return -1, fmt.Errorf("message from agent %d, which is not a neighbour", a)
}

// Rows returns the number of joint boundary assignments (MVA table rows).
func (nb *Neighbourhood) Rows() int { return nb.rows }

// Decode writes the boundary values of row into b.
func (nb *Neighbourhood) Decode(row int, b []int) { nb.lp.DecodeRow(row, b) }

// Encode returns the row of boundary values b.
func (nb *Neighbourhood) Encode(b []int) int { return nb.lp.EncodeRow(b) }

// Checks returns the external-function evaluations so far, the agent's
// share of the NCCC metric beyond its local solver's.
func (nb *Neighbourhood) Checks() int64 { return nb.checks }

func (nb *Neighbourhood) eval(f *extFunc, b, ctx []int) Cost {
	nb.checks++
	idx := 0
	dims := nb.fdims(f)
	for i, r := range nb.scope(f) {
		var v int
		if r < 0 {
			v = b[-1-r]
		} else {
			v = ctx[r]
		}
		idx = idx*int(dims[i]) + v
	}
	return Of(nb.costs(f)[idx])
}

// Ext returns the sum of the agent's external functions with its boundary
// at b and the other agents' variables at ctx.
func (nb *Neighbourhood) Ext(b, ctx []int) Cost {
	var c Cost
	for i := range nb.funcs {
		c = c.Add(nb.eval(&nb.funcs[i], b, ctx))
	}
	return c
}

// ExtVar is Ext restricted to the functions containing boundary variable
// k: the only ones that change when k alone changes.
func (nb *Neighbourhood) ExtVar(k int, b, ctx []int) Cost {
	var c Cost
	for _, i := range nb.byVar[k] {
		c = c.Add(nb.eval(&nb.funcs[i], b, ctx))
	}
	return c
}

// ExtExcept is Ext restricted to the functions that do not involve the
// neighbour at position j.
func (nb *Neighbourhood) ExtExcept(j int, b, ctx []int) Cost {
	var c Cost
	for i := range nb.funcs {
		if f := &nb.funcs[i]; !slices.Contains(nb.fagents(f), j) {
			c = c.Add(nb.eval(f, b, ctx))
		}
	}
	return c
}

// ExtOwnedBy is Ext restricted to the functions for which keep returns
// true given the neighbour positions of the other agents in the scope.
func (nb *Neighbourhood) ExtOwnedBy(keep func(agents []int) bool, b, ctx []int) Cost {
	var c Cost
	for i := range nb.funcs {
		if f := &nb.funcs[i]; keep(nb.fagents(f)) {
			c = c.Add(nb.eval(f, b, ctx))
		}
	}
	return c
}

// Pairwise reports whether every external function of the agent reads at
// most one other agent. Then the change of the agent's external functions
// when it and some neighbours move together is the sum of the unilateral
// changes and of one Interaction per moving neighbour.
func (nb *Neighbourhood) Pairwise() bool { return nb.pairwise }

// Interaction returns what a joint move adds to two unilateral ones over
// the functions shared with the neighbour at position j alone:
//
//	f(b′, v′) − f(b′, v) − f(b, v′) + f(b, v)
//
// summed over those functions, where b and b′ are this agent's current
// and candidate boundary values, v the neighbour's values in Ctx and v′
// its candidate values cand (as ReadValuesTo returns them). On the SHDS
// peak term it is 2·w·Σ Δcap_i·Δcap_j: positive when both homes shift
// load into the same windows.
func (nb *Neighbourhood) Interaction(j int, b, bNew, cand []int) Cost {
	if len(nb.pairs[j]) == 0 {
		return Cost{}
	}
	ctx := nb.Ctx
	var c Cost
	for _, fi := range nb.pairs[j] {
		f := &nb.funcs[fi]
		c = c.Add(nb.eval(f, b, ctx)).Sub(nb.eval(f, bNew, ctx))
	}
	// Put cand in j's slots of Ctx for the second half, then back.
	saved := nb.scratch[:len(nb.in[j])]
	for i, s := range nb.in[j] {
		saved[i] = ctx[s]
	}
	nb.SetValues(j, cand, ctx)
	for _, fi := range nb.pairs[j] {
		f := &nb.funcs[fi]
		c = c.Add(nb.eval(f, bNew, ctx)).Sub(nb.eval(f, b, ctx))
	}
	nb.SetValues(j, saved, ctx)
	return c
}

// WriteValues appends the boundary values b that the neighbour at position
// j sees, in increasing variable index, without a length: the receiver
// knows how many to expect.
func (nb *Neighbourhood) WriteValues(w *wire.Writer, j int, b []int) {
	for _, k := range nb.out[j] {
		w.Int(int64(b[k]))
	}
}

// ReadValues reads the values the neighbour at position j sends into ctx,
// checking each against its domain; the reader's error reports a bad body.
func (nb *Neighbourhood) ReadValues(r *wire.Reader, j int, ctx []int) {
	for _, s := range nb.in[j] {
		ctx[s] = r.IntIn(0, nb.SlotDomains[s])
	}
}

// ReadValuesTo reads the neighbour's values into a fresh slice (one per
// slot it sends), for protocols that buffer them before use.
func (nb *Neighbourhood) ReadValuesTo(r *wire.Reader, j int) []int {
	vals := make([]int, len(nb.in[j]))
	for i, s := range nb.in[j] {
		vals[i] = r.IntIn(0, nb.SlotDomains[s])
	}
	return vals
}

// SetValues stores values read by ReadValuesTo into ctx.
func (nb *Neighbourhood) SetValues(j int, vals []int, ctx []int) {
	for i, s := range nb.in[j] {
		ctx[s] = vals[i]
	}
}

// VisibleRows returns how many joint values of the neighbour at position
// j this agent can tell apart: the product of the domains of the slots j
// sends (and, on j's side, of its boundary variables this agent sees).
func (nb *Neighbourhood) VisibleRows(j int) (int, error) {
	n := 1
	for _, s := range nb.in[j] {
		d := nb.SlotDomains[s]
		if n > math.MaxInt32/d {
			return 0, fmt.Errorf("neighbour %d's shared variables have too many joint values", nb.Neighbours[j])
		}
		n *= d
	}
	return n, nil
}

// OwnVisibleRows returns how many joint values of this agent the
// neighbour at position j can tell apart (its VisibleRows for this agent).
func (nb *Neighbourhood) OwnVisibleRows(j int) int {
	n := 1
	for _, k := range nb.out[j] {
		n *= nb.Domains[k]
	}
	return n
}

// SetVisible writes the joint value idx (mixed radix over the slots of
// the neighbour at position j, last fastest) into ctx.
func (nb *Neighbourhood) SetVisible(j, idx int, ctx []int) {
	slots := nb.in[j]
	for i := len(slots) - 1; i >= 0; i-- {
		d := nb.SlotDomains[slots[i]]
		ctx[slots[i]] = idx % d
		idx /= d
	}
}

// Visible returns the index of ctx's values for the neighbour at position
// j (the inverse of SetVisible).
func (nb *Neighbourhood) Visible(j int, ctx []int) int {
	idx := 0
	for _, s := range nb.in[j] {
		idx = idx*nb.SlotDomains[s] + ctx[s]
	}
	return idx
}

// OwnVisible returns the index of b's values that the neighbour at
// position j sees, in the numbering that neighbour's SetVisible uses.
func (nb *Neighbourhood) OwnVisible(j int, b []int) int {
	idx := 0
	for _, k := range nb.out[j] {
		idx = idx*nb.Domains[k] + b[k]
	}
	return idx
}

// RowCost returns the cost of a local view's row as a pair: the agent's
// own functions with the row's boundary values and their best completion.
func RowCost(ctx context.Context, v *mva.LocalView, row int) (Cost, error) {
	c, _, err := v.RowIndex(ctx, row)
	if err != nil {
		return Cost{}, err
	}
	return Of(c), nil
}

// UniformOut reports whether every neighbour sees the same boundary
// variables of this agent, so that one VALUE body fits every neighbour
// (MGM's relay forwards the body written for one neighbour to all).
func (nb *Neighbourhood) UniformOut() bool {
	for j := 1; j < len(nb.out); j++ {
		if !slices.Equal(nb.out[j], nb.out[0]) {
			return false
		}
	}
	return true
}

// CheckValues checks values of the neighbour at position j as
// ReadValuesTo returns them (one per slot j sends, each in its domain),
// for values that came inside another agent's message.
func (nb *Neighbourhood) CheckValues(j int, vals []int) error {
	if len(vals) != len(nb.in[j]) {
		return fmt.Errorf("%d values of agent %d, want %d", len(vals), nb.Neighbours[j], len(nb.in[j]))
	}
	for i, s := range nb.in[j] {
		if vals[i] < 0 || vals[i] >= nb.SlotDomains[s] {
			return fmt.Errorf("value %d of agent %d outside its domain of %d", vals[i], nb.Neighbours[j], nb.SlotDomains[s])
		}
	}
	return nil
}

// VisibleValues returns the boundary values of b that the neighbour at
// position j sees, as WriteValues writes them.
func (nb *Neighbourhood) VisibleValues(j int, b []int) []int {
	out := make([]int, len(nb.out[j]))
	for i, k := range nb.out[j] {
		out[i] = b[k]
	}
	return out
}
