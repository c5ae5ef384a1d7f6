// Package baseline computes the schedules that hearth's coordinated
// results are compared with (issue 7, "Results people can read"):
//
//   - Uncoordinated: every home optimises alone, as a home energy manager
//     with a time-of-use tariff does today. Each home is compiled on its own
//     (no neighbours, no coordination windows, no feeder limit) and solved
//     exactly; by default it minimises its energy bill only
//     (Options.OwnPeak adds its own squared load, the SHDS "independent
//     optimum" of shds-model.md §5.1). Homes that all chase the cheapest
//     slots pile up there: this is the peak coordination removes.
//   - SHMGM: the SH-MGM protocol of the SHDS paper (shds-model.md §5) in
//     its recommended "shds" profile: each home's move is its best whole
//     energy profile given its neighbours' current load profiles, i.e. the
//     minimiser of J_i = price·P_i + peak·Σ_t (P_i(t) + N_i(t))², and
//     synchronous MGM rounds let a home move only when its gain beats every
//     neighbour's (ties to the lower index). It stops when no home can
//     improve or after Options.Rounds rounds.
//
// Both are deterministic — SH-MGM is bounded by rounds, never by time, so
// the same neighbourhood gives the same schedule on any machine — run the homes' local solves in parallel
// (Options.Workers) and report the schedule evaluated under the
// neighbourhood's own objective (devices.Neighbourhood.Evaluate), so their
// load, bill and peak compare directly with a coordinated solution's.
//
// Why J_i is per slot: SH-MGM prices the squared load of every slot, while
// hearth's coordinated model prices committed caps per coordination window.
// The baseline follows the paper over the slots the neighbourhood
// coordinates (every slot for SHDS imports, where each slot is a window),
// with the neighbourhood's peak weight. The per-slot square is exact: the
// home is compiled for its price alone and each coordinated slot gets one
// function over the slot's actions, peak·(max(draw, 0) + N(t))², which
// the neighbours' load rewrites between responses (home.go,
// newSlotPeakSolver). Where a slot's combinations of actions pass the
// compiler's table limit, the home is compiled instead with one window
// per slot and at most as many levels as it has distinct draws
// (devices.LevelCaps), a hard function keeping each slot's level the
// tightest its draw fits (otherwise a negative neighbour load would pay a
// home to commit a looser cap); fewer levels than draws make its answers
// coarse (Outcome.Coarse). The level formulation was the only one before
// automatic power levels gave a slot dozens of draws, each a value of the
// level variable that every bucket meeting it multiplied.
//
// Exact best responses need bucket elimination over a whole home, whose
// width grows with the properties it models: SHDS homes with five or six
// rules need tables of 10^8 entries. Such homes (Outcome.Approximate) use
// block coordinate descent instead — each group of devices that share
// properties is re-optimised exactly given the rest — which never raises
// J_i, as inexact as the published simulator's time-limited constraint
// solver and orders of magnitude faster than an exact solve.
package baseline
