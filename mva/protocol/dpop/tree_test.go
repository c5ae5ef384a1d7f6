package dpop

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// graphProblem returns a problem where agent i owns variable xi (binary)
// and every edge is a function between two agents.
func graphProblem(n int, edges [][2]int) *mva.Problem {
	p := &mva.Problem{Name: "graph"}
	for i := range n {
		p.Agents = append(p.Agents, mva.Agent{Name: fmt.Sprintf("a%d", i)})
		p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprintf("x%d", i), Domain: []string{"0", "1"}, Agent: i})
		p.Functions = append(p.Functions, mva.Function{Name: fmt.Sprintf("u%d", i), Scope: []int{i}, Costs: []float64{float64(i % 3), 1}})
	}
	for k, e := range edges {
		p.Functions = append(p.Functions, mva.Function{
			Name: fmt.Sprintf("e%d", k), Scope: []int{e[0], e[1]},
			Costs: []float64{float64(k % 4), 3, 2, float64((k + 1) % 5)},
		})
	}
	return p
}

func TestTreeShapes(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		edges    [][2]int
		h        float64
		children map[int][]int // agent → children, in visiting order
		pp       map[int][]int // agent → pseudo-parents
	}{
		{
			name: "most neighbours first", n: 6, edges: [][2]int{{0, 1}, {0, 2}, {2, 3}, {2, 4}},
			children: map[int][]int{0: {2, 1, 5}, 2: {3, 4}},
		},
		{
			name: "lowest id first", n: 6, edges: [][2]int{{0, 1}, {0, 2}, {2, 3}, {2, 4}}, h: LowestID,
			children: map[int][]int{0: {1, 2, 5}, 2: {3, 4}},
		},
		{
			name: "isolated root", n: 4, edges: [][2]int{{1, 2}, {2, 3}},
			children: map[int][]int{0: {1}, 1: {2}, 2: {3}},
		},
		{
			name: "triangle", n: 3, edges: [][2]int{{0, 1}, {1, 2}, {0, 2}},
			children: map[int][]int{0: {1}, 1: {2}}, pp: map[int][]int{2: {0}},
		},
		{
			name: "all isolated", n: 3,
			children: map[int][]int{0: {1, 2}},
		},
		{
			name: "single agent", n: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := graphProblem(tc.n, tc.edges)
			_, agents := buildAgents(t, p, map[string]float64{"heuristic": tc.h})
			trace, err := fifo(context.Background(), agents, -1)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range agents {
				tr, ok := a.Tree()
				if !ok {
					t.Fatalf("agent %d: DFS not done", i)
				}
				if !slices.Equal(tr.Children, tc.children[i]) {
					t.Errorf("agent %d: children %v, want %v", i, tr.Children, tc.children[i])
				}
				if !slices.Equal(tr.PseudoParents, tc.pp[i]) {
					t.Errorf("agent %d: pseudo-parents %v, want %v", i, tr.PseudoParents, tc.pp[i])
				}
			}
			checkTree(t, p, agents)
			want := 4 * (tc.n - 1)
			if tc.h == MostNeighbours {
				want += 2 * len(tc.edges)
			}
			if len(trace) != want {
				t.Errorf("%d messages, want %d", len(trace), want)
			}
			if got, opt := agents[0].Result().Cost, bruteForce(t, p); got != opt {
				t.Errorf("cost %v, brute force %v", got, opt)
			}
		})
	}
}

// TestRandomTrees checks the pseudo-tree of random problems.
func TestRandomTrees(t *testing.T) {
	for seed := range int64(100) {
		p := randomProblem(seed)
		_, agents := buildAgents(t, p, map[string]float64{"heuristic": float64(seed % 2)})
		if _, err := fifo(context.Background(), agents, -1); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		checkTree(t, p, agents)
	}
}

// checkTree verifies that the agents' trees form one pseudo-tree rooted at
// Root: parents and children agree, every pair of neighbours is on one
// root path, pseudo-parents and pseudo-children are the back edges seen
// from both ends, and a tree edge between non-neighbours links Root to
// the lowest agent of another component.
func checkTree(t *testing.T, p *mva.Problem, agents []*Agent) {
	t.Helper()
	nb := mva.Decompose(p).Neighbours()
	trees := make([]Tree, len(agents))
	for i, a := range agents {
		trees[i], _ = a.Tree()
	}
	ancestors := func(i int) []int {
		var out []int
		for j := trees[i].Parent; j >= 0; j = trees[j].Parent {
			if len(out) > len(agents) {
				t.Fatalf("agent %d: cycle of parents", i)
			}
			out = append(out, j)
		}
		return out
	}
	if trees[Root].Parent != -1 {
		t.Fatalf("root has parent %d", trees[Root].Parent)
	}
	comp := components(nb)
	for i, tr := range trees {
		anc := ancestors(i)
		if i != Root {
			if len(anc) == 0 || anc[len(anc)-1] != Root {
				t.Fatalf("agent %d: not under the root", i)
			}
			if !slices.Contains(trees[tr.Parent].Children, i) {
				t.Fatalf("agent %d: parent %d does not list it as a child", i, tr.Parent)
			}
			if !slices.Contains(nb[i], tr.Parent) && (tr.Parent != Root || comp[i] != i) {
				t.Fatalf("agent %d: tree edge to non-neighbour %d", i, tr.Parent)
			}
		}
		for _, c := range tr.Children {
			if trees[c].Parent != i {
				t.Fatalf("agent %d lists %d as a child, whose parent is %d", i, c, trees[c].Parent)
			}
		}
		for _, j := range nb[i] {
			jAnc := ancestors(j)
			isAnc, isDesc := slices.Contains(anc, j), slices.Contains(jAnc, i)
			if !isAnc && !isDesc {
				t.Fatalf("neighbours %d and %d are on different branches", i, j)
			}
			if isAnc && j != tr.Parent && !slices.Contains(tr.PseudoParents, j) {
				t.Fatalf("agent %d: ancestor neighbour %d is not a pseudo-parent", i, j)
			}
			if isDesc && !slices.Contains(tr.Children, j) && !slices.Contains(tr.PseudoChildren, j) {
				t.Fatalf("agent %d: descendant neighbour %d is not a pseudo-child", i, j)
			}
		}
		for _, j := range tr.PseudoParents {
			if !slices.Contains(trees[j].PseudoChildren, i) {
				t.Fatalf("agent %d has pseudo-parent %d, which lacks the pseudo-child", i, j)
			}
		}
	}
}

// components labels each agent with the lowest id of its component (the
// ids are scanned in increasing order, so the first of a component names
// it).
func components(nb [][]int) []int {
	comp := make([]int, len(nb))
	for i := range comp {
		comp[i] = -1
	}
	for s := range nb {
		if comp[s] >= 0 {
			continue
		}
		stack := []int{s}
		comp[s] = s
		for len(stack) > 0 {
			i := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, j := range nb[i] {
				if comp[j] < 0 {
					comp[j] = s
					stack = append(stack, j)
				}
			}
		}
	}
	return comp
}
