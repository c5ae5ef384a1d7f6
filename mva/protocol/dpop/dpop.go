package dpop

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/join"
)

// DefaultMaxUtilEntries is the default of param max_util_entries: 1<<24
// float64 entries are 128 MiB, a generous bound for one message.
const DefaultMaxUtilEntries = 1 << 24

// Root is the agent every run's pseudo-tree is rooted at.
const Root = 0

// Heuristics for the order in which an agent visits its neighbours.
const (
	// MostNeighbours visits the neighbour with the most neighbours first,
	// ties to the lowest id, after a DFS_DEGREE exchange.
	MostNeighbours = 0
	// LowestID visits the lowest id first and needs no exchange.
	LowestID = 1
)

// ErrProtocol is wrapped by every error about a message that the protocol
// does not allow in the agent's state: from an unexpected sender, twice, or
// too early.
var ErrProtocol = errors.New("unexpected message")

// Agent is one agent's DPOP state machine.
type Agent struct {
	kernel    Kernel       // nil: the CPU kernel, on one worker
	chains    func() Chain // nil: no device; see WithChains
	chain     Chain        // the UTIL phase's, while it runs
	node      *mva.Node
	prob      *mva.Problem
	sub       *mva.Subproblem
	id, n     int
	heuristic int
	maxUtil   int
	started   bool

	nbrs        []int       // neighbours, sorted
	isNbr       []bool      // indexed by agent
	degree      map[int]int // neighbour → its number of neighbours
	degreesLeft int

	// Pseudo-tree state.
	joined    bool   // the token (or, for the root, Start) has arrived
	exploring bool   // joined and every degree known: the DFS runs here
	dfsDone   bool   // the subtree is complete
	path      []int  // ancestors, root first
	ancestor  []bool // indexed by agent
	visited   []bool // indexed by agent
	nVisited  int
	current   int // the child the token is out to, -1 when none
	tree      Tree

	// UTIL state.
	childUtil map[int]*join.Factor
	childSep  map[int][]int // each child's separator, kept for VALUE
	utilDone  bool
	sep       []int // this agent's separator (UTIL output variables)
	sepDims   []int
	steps     []elimStep // the UTIL join-projects, kept for VALUE
	checks    int64

	// VALUE state.
	done     bool
	boundary []int
	cost     float64
}

// Tree is an agent's place in the pseudo-tree.
type Tree struct {
	// Parent is the parent's id, -1 at the root. A component's root other
	// than Root is a virtual child of Root: Parent is Root although no
	// function links them.
	Parent         int
	PseudoParents  []int
	Children       []int
	PseudoChildren []int
}

// New returns agent n.ID's DPOP state machine, configured by the node's
// parameters (ParseConfig).
func New(n *mva.Node) (mva.Protocol, error) {
	return NewAgent(n)
}

// Kernel computes a UTIL join-project: dst and argmin exactly as
// join.JoinProject.Run does. A GPU build passes one that runs large joins
// on the device (GPU-DBE); it must fall back to the CPU itself.
type Kernel func(ctx context.Context, p *join.JoinProject, dst []float64, argmin []int32) error

// WithKernel returns a constructor like New whose agents compute their UTIL
// joins with k.
func WithKernel(k Kernel) func(*mva.Node) (mva.Protocol, error) {
	return func(n *mva.Node) (mva.Protocol, error) {
		a, err := NewAgent(n)
		if err != nil {
			return nil, err
		}
		a.kernel = k
		return a, nil
	}
}

// Chain runs the join-projects of one agent's UTIL phase on a device
// (GPU-DBE: package local/gpu's UtilChain) and keeps the tables that only
// feed later steps there: such a table's Costs stay nil until a later Step
// reads it (and frees it) or Host brings it to the host. The UTIL table the
// agent sends and the argmin tables VALUE decodes from come back once,
// into the agent's memory. Host memory the chain hands out is valid until
// Close.
type Chain interface {
	// Offload reports whether p runs through Step; otherwise the agent
	// runs it with its kernel, on the CPU. It depends only on p's shape.
	Offload(p *join.JoinProject) bool
	// Step computes p into out, and into argmin unless it is nil, as p.Run
	// does. With keep, out may stay on the device (out.Costs nil);
	// without, out.Costs holds p.Rows() entries and receives the output.
	Step(ctx context.Context, p *join.JoinProject, out *join.Factor, keep bool, argmin []int32) error
	// Host brings a table that a Step kept into f.Costs.
	Host(ctx context.Context, f *join.Factor) error
	// Close releases the device memory and host memory the chain holds.
	Close() error
}

// WithChains returns a constructor like New whose agents run their UTIL
// joins through a Chain that open returns, one per UTIL phase, closed when
// the phase ends; the joins the chain does not offload run on the CPU.
func WithChains(open func() Chain) func(*mva.Node) (mva.Protocol, error) {
	return func(n *mva.Node) (mva.Protocol, error) {
		a, err := NewAgent(n)
		if err != nil {
			return nil, err
		}
		a.chains = open
		return a, nil
	}
}

// NewAgent is New with the concrete type, for tests and tools that inspect
// the pseudo-tree.
func NewAgent(n *mva.Node) (*Agent, error) {
	if n == nil || n.Decomp == nil || n.Local == nil || n.Local.LP == nil {
		return nil, fmt.Errorf("dpop: incomplete node")
	}
	if n.ID < 0 || n.ID >= n.NumAgents || n.NumAgents != len(n.Decomp.Subs) {
		return nil, fmt.Errorf("dpop: agent %d of %d does not match a decomposition of %d agents", n.ID, n.NumAgents, len(n.Decomp.Subs))
	}
	cfg, err := ParseConfig(n.Params)
	if err != nil {
		return nil, err
	}
	a := &Agent{
		node: n, prob: n.Problem(), sub: n.Sub(), id: n.ID, n: n.NumAgents,
		heuristic: cfg.Heuristic, maxUtil: cfg.MaxUtilEntries,
		isNbr:     make([]bool, n.NumAgents),
		degree:    make(map[int]int, len(n.Neighbours)),
		ancestor:  make([]bool, n.NumAgents),
		visited:   make([]bool, n.NumAgents),
		current:   -1,
		tree:      Tree{Parent: -1},
		childUtil: map[int]*join.Factor{},
		childSep:  map[int][]int{},
		boundary:  make([]int, len(n.Sub().Boundary)),
		cost:      math.NaN(),
	}
	a.nbrs = slices.Sorted(slices.Values(n.Neighbours))
	for _, j := range a.nbrs {
		if j < 0 || j >= a.n || j == a.id || a.isNbr[j] {
			return nil, fmt.Errorf("dpop: agent %d: bad neighbour list %v", a.id, n.Neighbours)
		}
		a.isNbr[j] = true
	}
	if a.heuristic == MostNeighbours {
		a.degreesLeft = len(a.nbrs)
	}
	return a, nil
}

// Start sends the agent's degree to its neighbours; the root also starts
// the DFS.
func (a *Agent) Start(ctx context.Context) ([]mva.Message, error) {
	if a.started {
		return nil, fmt.Errorf("%w: Start called twice", ErrProtocol)
	}
	a.started = true
	var out []mva.Message
	if a.heuristic == MostNeighbours {
		body := encodeDegree(len(a.nbrs))
		for _, j := range a.nbrs {
			out = append(out, a.msg(j, KindDegree, body))
		}
	}
	if a.id == Root {
		a.joined = true
		a.markVisited(a.id)
		more, err := a.tryExplore(ctx)
		if err != nil {
			return nil, fmt.Errorf("dpop: agent %s: start: %w", a.name(), err)
		}
		out = append(out, more...)
	}
	return out, nil
}

// Step handles one delivered message.
func (a *Agent) Step(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	if m.To != a.id || m.From < 0 || m.From >= a.n || m.From == a.id {
		return nil, fmt.Errorf("%w: %s from %d to %d delivered to agent %d", ErrProtocol, m.Kind, m.From, m.To, a.id)
	}
	var (
		out []mva.Message
		err error
	)
	switch m.Kind {
	case KindDegree:
		out, err = a.onDegree(ctx, m)
	case KindToken:
		out, err = a.onToken(ctx, m)
	case KindReturn:
		out, err = a.onReturn(ctx, m)
	case KindUtil:
		out, err = a.onUtil(ctx, m)
	case KindValue:
		out, err = a.onValue(m)
	default:
		err = fmt.Errorf("%w: unknown kind %q", ErrProtocol, m.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("dpop: agent %s: %s from agent %d: %w", a.name(), m.Kind, m.From, err)
	}
	return out, nil
}

// Done reports that the agent has its values.
func (a *Agent) Done() bool { return a.done }

// Result returns the agent's boundary values and the optimum's cost; before
// the VALUE phase reaches the agent the cost is NaN and Optimal false.
func (a *Agent) Result() mva.AgentResult {
	return mva.AgentResult{Boundary: slices.Clone(a.boundary), Cost: a.cost, Optimal: a.done}
}

// Checks returns the entries computed by the agent's UTIL joins (see the
// package doc); it makes Agent a pipeline.CheckCounter.
func (a *Agent) Checks() int64 { return a.checks }

// Tree returns the agent's place in the pseudo-tree and whether its part of
// the DFS is complete.
func (a *Agent) Tree() (Tree, bool) {
	t := a.tree
	t.PseudoParents = slices.Clone(t.PseudoParents)
	t.Children = slices.Clone(t.Children)
	t.PseudoChildren = slices.Clone(t.PseudoChildren)
	return t, a.dfsDone
}

// Separator returns the variables of the agent's UTIL table, once sent.
func (a *Agent) Separator() []int { return slices.Clone(a.sep) }

func (a *Agent) msg(to int, kind string, body []byte) mva.Message {
	return mva.Message{From: a.id, To: to, Kind: kind, Body: body}
}

// name returns the agent's name for errors.
func (a *Agent) name() string {
	if a.id < len(a.prob.Agents) && a.prob.Agents[a.id].Name != "" {
		return a.prob.Agents[a.id].Name
	}
	return fmt.Sprint(a.id)
}
