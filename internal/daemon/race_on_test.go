//go:build race

package daemon_test

// raceEnabled: the race detector is on (its runs are several times slower).
const raceEnabled = true
