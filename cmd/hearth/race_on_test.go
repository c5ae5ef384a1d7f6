//go:build race

package main

// raceEnabled: the race detector slows MQTT runs several times over, so
// throughput tests scale down under it.
const raceEnabled = true
