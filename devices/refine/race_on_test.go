//go:build race

package refine_test

// raceEnabled: under the race detector the brute-force comparison runs
// on fewer homes; the refinement is not concurrent.
const raceEnabled = true
