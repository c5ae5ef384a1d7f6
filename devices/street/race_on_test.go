//go:build race

package street_test

// raceEnabled: under the race detector the CBC comparison runs on two
// streets (one with a compiled load); the planner is single-threaded
// and its speed is all the others cost.
const raceEnabled = true
