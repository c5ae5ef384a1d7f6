//go:build race

package dgibbs

// raceEnabled shrinks the long statistical tests under the race
// detector, which slows the simulated runtime tenfold; their full power
// is measured in the ordinary run.
const raceEnabled = true
