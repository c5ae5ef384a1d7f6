//go:build race

package compile_test

// raceEnabled: under the race detector the MILP comparison and
// TestProgrammeEndsAtGoal run on fewer homes; what they check does not
// depend on concurrency.
const raceEnabled = true
