//go:build !race

package live

// underRace: see rollingday_race_test.go.
const underRace = false
