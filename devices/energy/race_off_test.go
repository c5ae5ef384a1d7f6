//go:build !race

package energy_test

const raceEnabled = false
