//go:build !race

package refine_test

const raceEnabled = false
