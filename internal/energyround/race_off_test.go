//go:build !race

package energyround

const raceEnabled = false
