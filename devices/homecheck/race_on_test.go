//go:build race

package homecheck_test

// raceEnabled: under the race detector the random streets are fewer; the
// checker is single-threaded and its speed is all they cost.
const raceEnabled = true
