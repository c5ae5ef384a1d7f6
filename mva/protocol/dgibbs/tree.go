package dgibbs

import (
	"fmt"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/wire"
)

// Pseudo-tree message kinds.
const (
	// KindToken carries the DFS token (the wave's root and the agents it
	// has visited) to an unvisited neighbour, which becomes a child.
	KindToken = "DFS"
	// KindTokenBack returns the token, with the visited set grown by the
	// child's subtree, to the parent.
	KindTokenBack = "DFS_BACK"
)

// tree builds the agent's place in a DFS pseudo-tree over agents by token
// passing (notes §2.2; thesis digest §1.5).
//
// Agents know only their neighbours, so the root is elected on the way:
// every agent whose id is lower than all its neighbours' starts a DFS wave
// labelled with its id, and an agent joins a wave with a lower label than
// its current one, forgetting the old wave, and ignores waves with a higher
// label. The component's lowest id starts a wave that is never abandoned;
// every other wave stalls at the first agent that has joined a lower one,
// so only the lowest wave completes, and its root is the component's
// lowest id. With a single starter (for example when ids grow along the
// graph) the DFS costs exactly 2·(|A_c|−1) messages per component.
//
// The token carries the wave's visited set, so no "already visited"
// bounces are needed: a DFS tree edge goes only to an unvisited agent.
// Every non-tree edge of a DFS joins an ancestor to a descendant, so the
// neighbours already visited when the token first arrives are the
// ancestors (parent and pseudo-parents), and every other neighbour that
// does not become a child is a pseudo-child.
type tree struct {
	id         int
	numAgents  int
	neighbours []int

	label     int // the wave this agent is in (its root's id), −1 for none
	parent    int // −1 at a root
	children  []int
	ancestors []int // neighbours visited before this agent: P ∪ PP
	visited   []bool
	pending   int // the neighbour holding the token, −1 for none
	complete  bool
	size      int // at a complete root: the agents of its component
}

func newTree(n *mva.Node) *tree {
	return &tree{id: n.ID, numAgents: n.NumAgents, neighbours: n.Neighbours, label: -1, parent: -1, pending: -1}
}

// start begins a wave when this agent is a local minimum of ids.
func (t *tree) start() []mva.Message {
	for _, j := range t.neighbours {
		if j < t.id {
			return nil
		}
	}
	t.join(t.id, -1, nil)
	return t.explore()
}

// join enters the wave label with parent p, forgetting any other wave.
func (t *tree) join(label, p int, visited []bool) {
	t.label, t.parent, t.pending, t.complete = label, p, -1, false
	t.children, t.ancestors = nil, nil
	t.visited = make([]bool, t.numAgents)
	copy(t.visited, visited)
	for _, j := range t.neighbours {
		if t.visited[j] {
			t.ancestors = append(t.ancestors, j)
		}
	}
	t.visited[t.id] = true
}

// explore sends the token to the next unvisited neighbour, or returns it
// to the parent (completing the root) when none is left.
func (t *tree) explore() []mva.Message {
	for _, j := range t.neighbours {
		if !t.visited[j] {
			t.pending = j
			return []mva.Message{t.token(j, KindToken)}
		}
	}
	t.complete = true
	if t.parent < 0 {
		t.size = 0
		for _, v := range t.visited {
			if v {
				t.size++
			}
		}
		return nil
	}
	return []mva.Message{t.token(t.parent, KindTokenBack)}
}

func (t *tree) token(to int, kind string) mva.Message {
	var w wire.Writer
	w.Int(int64(t.label))
	var ids []int
	for a, v := range t.visited {
		if v {
			ids = append(ids, a)
		}
	}
	w.Ints(ids)
	return mva.Message{From: t.id, To: to, Kind: kind, Body: w.Bytes()}
}

// readToken decodes a token body: the wave's label and its visited set.
func (t *tree) readToken(body []byte) (int, []bool, error) {
	r := wire.NewReader(body)
	label := r.IntIn(0, t.numAgents)
	n := r.Len(1)
	visited := make([]bool, t.numAgents)
	twice := -1
	for range n {
		a := r.IntIn(0, t.numAgents) // 0 after an error: still in range
		if visited[a] {
			twice = a
		}
		visited[a] = true
	}
	// Err only at the end: it also reports trailing bytes.
	if err := r.Err(); err != nil {
		return 0, nil, err
	}
	if twice >= 0 {
		return 0, nil, fmt.Errorf("%w: agent %d visited twice", wire.ErrMalformed, twice)
	}
	return label, visited, nil
}

// onToken handles the token from neighbour j.
func (t *tree) onToken(j int, body []byte) ([]mva.Message, error) {
	label, visited, err := t.readToken(body)
	if err != nil {
		return nil, err
	}
	switch {
	case t.label >= 0 && label > t.label:
		return nil, nil // a wave this agent has left behind
	case label == t.label:
		return nil, fmt.Errorf("token of wave %d, which this agent is already in", label)
	case visited[t.id]:
		return nil, fmt.Errorf("token of wave %d already lists this agent as visited", label)
	case !visited[j]:
		return nil, fmt.Errorf("token of wave %d does not list its sender as visited", label)
	}
	t.join(label, j, visited)
	return t.explore(), nil
}

// onTokenBack handles the token returned by child j.
func (t *tree) onTokenBack(j int, body []byte) ([]mva.Message, error) {
	label, visited, err := t.readToken(body)
	if err != nil {
		return nil, err
	}
	switch {
	case label > t.label:
		return nil, nil // returned in a wave this agent has left behind
	case label < t.label || j != t.pending:
		return nil, fmt.Errorf("unexpected return of the token of wave %d", label)
	}
	for a, v := range t.visited {
		if v && !visited[a] {
			return nil, fmt.Errorf("returned token of wave %d forgets agent %d", label, a)
		}
	}
	t.visited = visited
	t.children = append(t.children, j)
	t.pending = -1
	return t.explore(), nil
}

// roles returns the pseudo-parents and pseudo-children of a complete
// agent.
func (t *tree) roles() (pp, pc []int) {
	for _, j := range t.neighbours {
		switch {
		case j == t.parent || slices.Contains(t.children, j):
		case slices.Contains(t.ancestors, j):
			pp = append(pp, j)
		default:
			pc = append(pc, j)
		}
	}
	return pp, pc
}
