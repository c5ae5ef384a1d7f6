// Package dmcmc is DMCMC, Distributed MCMC sampling on the MVA framework
// (Fioretto, Yeoh and Pontelli, CP 2016; Fioretto's thesis §5.3), and the
// harness that compares it with DPOP, MGM and MGM-2 on the meeting
// scheduling benchmark of the thesis's Figure 5.7.
//
// DMCMC is not a protocol of its own: it is DPOP (package dpop) between
// multi-variable agents whose MVA tables a sampler (package sampler: Gibbs
// or Metropolis-Hastings, R runs × T trials per row, best sample kept)
// fills eagerly. mva.BuildNodes fills every eager table before any agent
// starts, and the simulated runtime charges each agent the time it spent
// filling its own as its starting clock (sim.Config.SetupMs): every agent
// samples its table at once, concurrently with the others and without
// waiting for its children's UTIL messages, then joins its table with
// those messages exactly as DPOP does (the paper's CALCUTILS). The
// answer is therefore the exact optimum of the problem in which every
// agent's local costs are replaced by its sampled table, and the sampled
// rows bound the optimum from above. `hearth solve --global dpop --local
// gibbs|mh` runs it (the command line makes the tables eager for it).
//
// SimOptions builds that configuration for sim.Solve; WriteMeetingCSV
// runs the comparison.
package dmcmc
