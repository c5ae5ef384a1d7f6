//go:build race

package baseline

// raceEnabled: under the race detector TestSlotPeakMatchesLevels leaves
// out the example street, whose automatic levels make the level
// formulation slow; what it checks does not depend on concurrency.
const raceEnabled = true
