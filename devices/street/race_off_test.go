//go:build !race

package street_test

const raceEnabled = false
