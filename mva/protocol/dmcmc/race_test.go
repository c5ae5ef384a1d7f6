//go:build race

package dmcmc

// raceEnabled shrinks the quality tests under the race detector, which
// slows sampling about tenfold; their full size runs in the ordinary run.
const raceEnabled = true
