//go:build race

package evcc_test

// raceEnabled: under the race detector the MILP comparisons run on fewer
// homes; the planner is single-threaded and its speed is all they cost.
const raceEnabled = true
