package refine

import "github.com/hearth-dcop/hearth/devices"

// HomePasses is Home in at most maxPasses passes over the devices with
// exact actions (1: the one pass of before MaxPasses), for the tests that
// measure what the further passes gain.
func HomePasses(n *devices.Neighbourhood, hi int, hs devices.HomeSchedule, maxPasses int) (devices.HomeSchedule, bool, error) {
	return home(n, hi, hs, false, false, maxPasses)
}
