//go:build race

package energyround

// raceEnabled: under the race detector TestRunMatchesCoordinate runs on
// two of the street's three homes; the planner is single-threaded and
// its speed is all the race detector costs.
const raceEnabled = true
