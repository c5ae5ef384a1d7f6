//go:build !race

package homecheck_test

const raceEnabled = false
