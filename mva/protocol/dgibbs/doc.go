// Package dgibbs is D-Gibbs, Distributed Gibbs sampling (Nguyen, Yeoh and
// Lau, AAMAS 2013), over multi-variable agents, following
// notes/protocols-afb-dgibbs.md §2: over MVA rows by default, or as the
// thesis's MVA-DG with local Gibbs sampling of the interior (parameter
// interior = 1, below).
//
// DCOP minimisation is read as MAP estimation: P(x) ∝ exp(−cost(x)/τ).
// The agents form a DFS pseudo-tree over the agent graph and sample it
// top-down, one iteration (one complete sample x^t) at a time; agents in
// different subtrees share no function and sample concurrently. An agent's
// sample is one systematic sweep over its boundary variables, each drawn
// from its exact conditional exp(−E(v)/τ), where E(v) is the agent's MVA
// row cost for its boundary with that variable at v (the best completion
// of its interior) plus the external functions containing the variable,
// with the neighbours' current values. Weights are computed relative to
// the best value (log space), hard values have probability 0, and when
// every value is hard the values with the fewest hard violations are drawn
// uniformly. The interior is the row's completion (interior = 0).
//
// # MVA-DG
//
// With interior = 1 the agents run MVA-DG, the thesis's D-Gibbs with Gibbs
// as P_L (§3.2, Theorem 4): each agent keeps a current interior assignment
// too, starting from x⁰'s row completion. In each iteration it draws its
// boundary variables as above except that the local part of a variable's
// conditional is its local functions evaluated at the current interior,
// not the row's best completion, and then resamples its interior by one
// local Gibbs sweep given the new boundary values, with exp(−cost/τ)
// conditionals at the same τ (sampler.Conditional, the Gibbs sampler's own
// conditional code and Philox numbers). Interior variables share no
// function with other agents, so every draw is one of plain Gibbs on the
// whole problem: the chain over complete assignments is D-Gibbs's with
// one agent per variable, and its stationary distribution is
// exp(−cost(x)/τ)/Z (measured by the package's chi-square test). Δ and
// the root's Cum then track the cost of the whole sampled state, so the
// best sample's interior is its own, and Result returns it in
// mva.AgentResult.Interior. Hard constraints are handled as in the
// samplers: the conditionals prefer the fewest violated functions.
//
// MVA-DG needs no MVA table beyond x⁰'s row (and every row under init =
// 2); its interior moves are single-variable ones, so it mixes more slowly
// than interior = 0, which jumps to the best completion of every boundary
// value it considers, and can be cut off by hard constraints the way plain
// D-Gibbs is. Exact local solvers should keep interior = 0; the command
// line sets interior = 1 when dgibbs runs with --local gibbs.
//
// Each agent reports up the tree the change Δ of ℓ_i (its local cost plus
// all its external functions, the context held fixed) that its sample
// caused; the wait rules make the Δs of an iteration telescope to
// cost(x^t) − cost(x^{t−1}) exactly, so the root knows the cost of every
// sample relative to x⁰ and the best iteration t* without anyone holding
// the whole solution. t* travels down with the next VALUE (and with
// FINAL after the last iteration); each agent commits the value it had in
// iteration t* when it learns t* (notes §2.6). The best sample seen is
// what Result returns: D-Gibbs is anytime.
//
// Messages:
//
//	DFS(label, visited), DFS_BACK(label, visited)
//	        the pseudo-tree, built by token passing with root election
//	        (tree.go): 2·(|A_c|−1) per component when one agent starts
//	VALUE(t, t*, values)
//	        to every neighbour, every iteration: the boundary variables the
//	        receiver shares a function with
//	BACKTRACK(t, Δ[, A0])
//	        to the parent, every iteration; iteration 1 also carries the
//	        subtree's cost of x⁰, so that the root knows absolute costs
//	FINAL(t*, cost, whole)
//	        down the tree once, after the last iteration
//
// Per iteration: Σ_i |N_i| VALUE + (|A|−1) BACKTRACK; plus |A|−1 FINAL
// once (notes §5), the DFS, and Σ_i |N_i| VALUE of iteration 0 when x⁰ is
// not row 0 (init ≠ 0).
//
// Decisions:
//   - Costs are (hard violations, soft sum) pairs, so Δ and the root's
//     cumulative sum stay exact about feasibility; the root sums soft
//     parts with Kahan compensation (notes §2.6).
//   - The root is the lowest id of each connected component (elected by
//     the DFS); neighbours are visited in increasing id order.
//   - Result's Cost is cost(x⁰) + CumBest (plus the problem's constant
//     offset) as the root computed it, known to all agents through FINAL;
//     it is NaN when the agent graph is disconnected, since each root then
//     knows only its component.
//   - x⁰ is row 0 of every agent (init = 0, the notes' ValInit) and counts
//     as a candidate. init = 1 (random) and init = 2 (best row) announce
//     x⁰ as iteration 0 first.
//
// Parameters:
//
//	iterations   number of samples T (default 100)
//	alpha, epsilon
//	             instead of iterations: T = ⌈1/(α·ε)⌉, after which the best
//	             sample is in the top α fraction of all solutions with
//	             probability ≥ 1 − ε (thesis Corollary 1; assumes a mixed,
//	             irreducible chain, which hard constraints can break —
//	             notes §2.8). Giving iterations too is an error.
//	temperature  τ > 0 (default 1, the paper's mapping; costs in the
//	             hundreds make τ = 1 nearly greedy)
//	init         0 first values (default), 1 random, 2 best row, 3 the
//	             local solver's start (mva.Starter: a home's own schedule)
//	interior     0 the MVA row's best completion (default), 1 local Gibbs
//	             sweeps (MVA-DG, see above)
package dgibbs
