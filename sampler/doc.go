// Package sampler holds hearth's sampling local solvers: Gibbs and
// Metropolis-Hastings (MH) fill the rows of an agent's MVA table, as the
// DMCMC algorithm of Fioretto, Yeoh and Pontelli (CP 2016) and chapter 5
// of Fioretto's thesis do on the GPU. They implement mva.LocalSolver (one
// row) and mva.TableSolver (the eager table at once).
//
// # Sampling a row
//
// A row fixes the boundary variables; the chains sample the interior ones
// from π(z) ∝ exp(−cost(z)/τ), cost being the sum of the agent's local
// functions, so that the cheapest completions are the most likely (the
// DCOP ↔ MAP mapping of Nguyen, Yeoh and Lau, 2013). Each row runs R =
// Options.Runs independent chains from different random starting points,
// each of T = Options.Trials trials (a Gibbs sweep or an MH proposal); a
// chain keeps the best sample it saw after its start and each trial, and
// the row takes the best of its chains. A row's reported cost is lp.Eval
// of the reported assignment, bit for bit. Samplers do not prove
// optimality; QualityBound gives the papers' probabilistic guarantee.
//
// # Hard constraints
//
// An infeasible state (one with a Hard entry) has probability 0; the
// DMCMC paper leaves such problems out, we handle them as follows.
//
//   - A row whose boundary values alone hit a Hard entry (a function over
//     boundary variables only) is reported Hard without sampling.
//   - A chain that starts infeasible first repairs itself greedily: sweeps
//     of min-conflict moves, each variable taking the value that minimises
//     (number of Hard entries, sum of the other costs) lexicographically
//     over its functions, until the state is feasible, a sweep changes
//     nothing, or Options.RepairSweeps sweeps are done. Sampling proceeds
//     from wherever repair stopped.
//   - While a state is still infeasible, both samplers use the same
//     lexicographic energy: a Gibbs conditional is restricted to the values
//     of fewest Hard entries (and is then π's exact conditional once the
//     state is feasible), an MH move that removes Hard entries is always
//     taken and one that adds them never. A feasible chain therefore never
//     becomes infeasible again, and an infeasible one can walk out.
//   - A row for which no chain ever reached a feasible state is reported
//     as mva.Hard, with zeros for its interior. This is not a proof that
//     the row is infeasible: an exact solver (local.New("dfbnb", …)) is
//     needed for that. Likewise, single-variable moves cannot cross a wall
//     of infeasible states, so a feasible region cut into pieces is only
//     sampled in the piece a chain reaches; independent runs help.
//
// # Random numbers
//
// All randomness comes from Philox-4x32-10 (package philox), keyed by
// Options.Seed (key = {low 32 bits, high 32 bits}). Draw j of a chain's
// step is word j mod 4 of
//
//	Block({row, run, step, j / 4}, key)
//
// where row is the MVA row index (mixed radix over the boundary, last
// variable fastest, as mva.LocalProblem.EncodeRow; a row SolveRow gets
// from a boundary space beyond 2³² rows is folded to 32 bits, low word
// xor high word), run the chain's index 0..R−1, and step 0 the starting
// point or t = 1..T the trial. Within a step:
//
//   - step 0: draw i sets interior variable i to philox.IntN(draw, |D_i|);
//   - Gibbs: draw i samples interior variable i (in local order);
//   - MH normal: draw i gives variable i's new value by inverse CDF of
//     the rounded, clamped normal step (see MH), draw n (the number of
//     interior variables) decides acceptance;
//   - MH discrete: draw 0 picks the variable (philox.IntN over the
//     interior variables with two values or more, in local order), draw 1
//     its new value (y = philox.IntN(draw, |D|−1), plus one if y is at or
//     above the current value), draw 2 decides acceptance.
//
// Uniforms are philox.Float64: (u + 0.5)·2⁻³² in float64, in (0, 1).
// Repair uses no random numbers. The numbers a chain sees depend on
// nothing but the seed and its (row, run), so tables are identical for
// any Options.Workers and GOMAXPROCS, and a CUDA kernel that computes the
// same counters and does the same double-precision arithmetic (Gibbs
// weights exp((cmin − c)·(1/τ)) summed in value order; an MH move taken
// when a = −Δc·(1/τ) + h ≥ 0 or u < exp(a); the normal step's CDF tables
// computed once here and copied to the device, not recomputed there) runs
// the same chains — up to the last-bit differences of the device's
// exp, which can rarely flip a choice, so CPU and GPU agree statistically
// and almost always exactly.
//
// # Parallelism
//
// Every (row, run) pair is an independent chain. SolveTable and SolveRow
// hand the pairs out in chunks to Options.Workers goroutines; each result
// is merged into its row under a lock, keeping the least cost and, on
// ties, the lowest run index. That minimum does not depend on the order
// of the merges, so the table is deterministic.
//
// # Conditionals for other chains
//
// Conditional exports the Gibbs conditionals one variable at a time, with
// the same weights, infeasibility handling and Philox counters, for
// callers that own a chain's state: MVA-D-Gibbs (package dgibbs, thesis
// Theorem 4) draws an agent's boundary variables in its protocol, adding
// the functions it shares with its neighbours to Conditional.Energies, and
// resamples the interior with Conditional.Sweep between those draws.
//
// # Checks
//
// Checks counts cost-table entries read (the unit of the NCCC metric):
// |D| entries per function of a variable for each Gibbs conditional or
// repair move, one entry per function for each full evaluation of a
// sample or a normal proposal, two per function of the moved variable for
// a discrete proposal.
package sampler
