//go:build race

package sampler_test

// raceEnabled shrinks the DMCMC quality test under the race detector,
// which slows DFBnB and the samplers twenty- to thirtyfold; its full size
// runs in the ordinary run.
const raceEnabled = true
