// Package bench holds the experiments of `hearth bench`: the published
// figures and tables of the research hearth reproduces, each written as a
// small declarative description — parameter sweeps × algorithms × seeds —
// that one runner turns into rows of raw results, a CSV file, plots and a
// summary table.
//
// An Experiment's Plan lists its sweeps (a generator kind, the base
// parameters and the points of one varied parameter), its algorithms (a
// protocol, a local solver, a table mode and a reformulation, exactly the
// flags of `hearth solve`), the number of seeds and the time limit of one
// run. Run generates each instance once per (point, seed), runs every
// algorithm on it through a SolveFunc and records one Row per run. The
// SolveFunc is supplied by the command (cmd/hearth), which passes the code
// path of `hearth solve` itself, so a benchmark measures exactly what a
// user runs; tests pass fakes.
//
// Failures are data, not crashes: a run past its time limit is a
// "timeout", a reformulation or table over its size limit is "memory", a
// GPU row in a build without CUDA is "unavailable", and in a sweep whose
// difficulty grows with the parameter (Sweep.Monotone) an algorithm that
// failed on every seed at one point is "skipped" at the larger ones, as
// the papers stop a curve at its first time-out.
//
// Rows carry the key (experiment, sweep, x, seed, algorithm, device) and
// the host that produced them, so rows made on different machines — the
// CPU rows here, the GPU rows on a GPU machine — concatenate into one CSV
// that Summarize and Plot treat as one run (see ReadCSV and Merge).
package bench
