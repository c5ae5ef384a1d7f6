//go:build race

package live

// underRace: TestRollingDay's four-home days solve fifteen rounds
// exactly each, about 2 s without the race detector and twenty times
// that under it; under it only the two-home day runs (about 1.5 s).
const underRace = true
