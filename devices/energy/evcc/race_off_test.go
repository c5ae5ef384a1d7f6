//go:build !race

package evcc_test

const raceEnabled = false
