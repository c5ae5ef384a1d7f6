package dpop

import (
	"context"
	"fmt"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// This file is the pseudo-tree construction: a sequential token DFS from
// Root whose token carries the visited set (see the package doc).

func (a *Agent) onDegree(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	if a.heuristic != MostNeighbours || !a.isNbr[m.From] {
		return nil, fmt.Errorf("%w: no degree expected from this agent", ErrProtocol)
	}
	if _, ok := a.degree[m.From]; ok {
		return nil, fmt.Errorf("%w: second degree", ErrProtocol)
	}
	d, err := decodeDegree(m.Body, a.n)
	if err != nil {
		return nil, err
	}
	if d < 1 {
		return nil, fmt.Errorf("%w: a neighbour with degree %d", ErrProtocol, d)
	}
	a.degree[m.From] = d
	a.degreesLeft--
	return a.tryExplore(ctx)
}

func (a *Agent) onToken(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	if a.joined {
		return nil, fmt.Errorf("%w: the token visited this agent already", ErrProtocol)
	}
	t, err := decodeToken(m.Body, a.n)
	if err != nil {
		return nil, err
	}
	if err := a.checkToken(t, m.From); err != nil {
		return nil, err
	}
	a.joined = true
	a.tree.Parent = m.From
	a.path = t.path
	for _, j := range t.path {
		a.ancestor[j] = true
		if a.isNbr[j] && j != m.From {
			a.tree.PseudoParents = append(a.tree.PseudoParents, j)
		}
	}
	slices.Sort(a.tree.PseudoParents)
	for _, j := range t.visited {
		a.markVisited(j)
	}
	a.markVisited(a.id)
	return a.tryExplore(ctx)
}

// checkToken verifies that t is a token this agent may receive from
// sender: a path from Root down to the sender, every path agent visited,
// this agent not, and no neighbour visited off the path (in a DFS a
// visited neighbour would have visited this agent first).
func (a *Agent) checkToken(t token, sender int) error {
	if len(t.path) == 0 || t.path[0] != Root || t.path[len(t.path)-1] != sender {
		return fmt.Errorf("%w: path %v does not lead from agent %d to the sender", ErrProtocol, t.path, Root)
	}
	if !a.isNbr[sender] && len(t.path) != 1 {
		// Only Root hands the token to a non-neighbour, the root of
		// another component.
		return fmt.Errorf("%w: token from a non-neighbour", ErrProtocol)
	}
	onPath := make(map[int]bool, len(t.path))
	for _, j := range t.path {
		onPath[j] = true
	}
	vis := make(map[int]bool, len(t.visited))
	for _, j := range t.visited {
		vis[j] = true
		if a.isNbr[j] && !onPath[j] {
			return fmt.Errorf("%w: neighbour %d visited off the token's path", ErrProtocol, j)
		}
	}
	if onPath[a.id] || vis[a.id] {
		return fmt.Errorf("%w: token for an agent already visited", ErrProtocol)
	}
	for _, j := range t.path {
		if !vis[j] {
			return fmt.Errorf("%w: path agent %d is not in the visited set", ErrProtocol, j)
		}
	}
	return nil
}

func (a *Agent) onReturn(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	if a.current != m.From {
		return nil, fmt.Errorf("%w: the token is not with this agent", ErrProtocol)
	}
	visited, err := decodeReturn(m.Body, a.n)
	if err != nil {
		return nil, err
	}
	got := make([]bool, a.n)
	for _, j := range visited {
		got[j] = true
	}
	for j := range a.n {
		if a.visited[j] && !got[j] {
			return nil, fmt.Errorf("%w: returned visited set lost agent %d", ErrProtocol, j)
		}
	}
	if !got[m.From] {
		return nil, fmt.Errorf("%w: returned visited set lacks its sender", ErrProtocol)
	}
	for _, j := range visited {
		a.markVisited(j)
	}
	a.tree.Children = append(a.tree.Children, m.From)
	a.current = -1
	return a.explore(ctx)
}

// tryExplore starts the DFS here once the token has arrived and every
// neighbour's degree is known.
func (a *Agent) tryExplore(ctx context.Context) ([]mva.Message, error) {
	if !a.joined || a.exploring || a.degreesLeft > 0 {
		return nil, nil
	}
	a.exploring = true
	return a.explore(ctx)
}

// explore sends the token to the next child, or, when there is none,
// closes the subtree: DFS_RETURN to the parent, then UTIL when the
// children's UTILs are in.
func (a *Agent) explore(ctx context.Context) ([]mva.Message, error) {
	if next := a.nextChild(); next >= 0 {
		a.current = next
		t := token{path: append(slices.Clone(a.path), a.id), visited: a.visitedList()}
		return []mva.Message{a.msg(next, KindToken, encodeToken(t))}, nil
	}
	a.dfsDone = true
	for _, j := range a.nbrs {
		if j != a.tree.Parent && !a.ancestor[j] && !slices.Contains(a.tree.Children, j) {
			a.tree.PseudoChildren = append(a.tree.PseudoChildren, j)
		}
	}
	var out []mva.Message
	if a.tree.Parent >= 0 {
		out = append(out, a.msg(a.tree.Parent, KindReturn, encodeReturn(a.visitedList())))
	}
	more, err := a.maybeUtil(ctx)
	return append(out, more...), err
}

// nextChild returns the unvisited neighbour to visit next, or -1. Root,
// once its component is exhausted, goes on with the lowest unvisited
// agent: the root of the next component, as a virtual child.
func (a *Agent) nextChild() int {
	best := -1
	for _, j := range a.nbrs {
		if a.visited[j] {
			continue
		}
		if best < 0 || (a.heuristic == MostNeighbours && a.degree[j] > a.degree[best]) {
			best = j // Neighbours is sorted, so ties keep the lower id
		}
	}
	if best >= 0 || a.id != Root {
		return best
	}
	for j := range a.n {
		if !a.visited[j] {
			return j
		}
	}
	return -1
}

func (a *Agent) markVisited(j int) {
	if !a.visited[j] {
		a.visited[j] = true
		a.nVisited++
	}
}

// visitedList returns the visited agents in increasing order.
func (a *Agent) visitedList() []int {
	out := make([]int, 0, a.nVisited)
	for j, v := range a.visited {
		if v {
			out = append(out, j)
		}
	}
	return out
}
