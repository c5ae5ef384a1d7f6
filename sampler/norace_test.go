//go:build !race

package sampler_test

const raceEnabled = false
