//go:build !race

package dmcmc

// raceEnabled: see race_test.go.
const raceEnabled = false
