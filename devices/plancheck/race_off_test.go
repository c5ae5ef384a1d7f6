//go:build !race

package plancheck_test

const raceEnabled = false
