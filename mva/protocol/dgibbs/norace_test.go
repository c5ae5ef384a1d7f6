//go:build !race

package dgibbs

// raceEnabled: see race_test.go.
const raceEnabled = false
