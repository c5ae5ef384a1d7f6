//go:build race

package live

// underRace: TestRollingDay solves fifteen rounds exactly, about 3 s
// without the race detector and ten times that under it, and runs no
// goroutine of its own that the detector would check.
const underRace = true
