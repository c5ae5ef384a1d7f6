//go:build race

package compile_test

// raceEnabled: under the race detector the MILP comparison runs on fewer
// homes; what it checks does not depend on concurrency.
const raceEnabled = true
