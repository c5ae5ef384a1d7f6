package dpop

import (
	"fmt"
	"math"
)

// Config is DPOP's configuration. A run sets it by name on the command
// line (`-p max_util_entries=1048576 -p heuristic=1`, mva.Node.Params);
// ParseConfig reads such a map, and the agents read only the Config.
type Config struct {
	// MaxUtilEntries is the largest UTIL table an agent builds or
	// accepts (max_util_entries, 1..math.MaxInt32): a larger separator is
	// an error naming the agent, not an out-of-memory crash.
	MaxUtilEntries int
	// Heuristic orders the DFS (heuristic): MostNeighbours or LowestID.
	Heuristic int
}

// DefaultConfig is the configuration of a run that sets no parameter.
func DefaultConfig() Config {
	return Config{MaxUtilEntries: DefaultMaxUtilEntries, Heuristic: MostNeighbours}
}

// ParseConfig returns DefaultConfig with the parameters of params in
// place, validated. Names DPOP does not read are ignored, as other
// protocols' parameters may share the map.
func ParseConfig(params map[string]float64) (Config, error) {
	c := DefaultConfig()
	if v, ok := params["max_util_entries"]; ok {
		if v != math.Trunc(v) || v < 1 || v > math.MaxInt32 {
			return Config{}, fmt.Errorf("dpop: parameter max_util_entries = %v: want a whole number in 1..%d", v, math.MaxInt32)
		}
		c.MaxUtilEntries = int(v)
	}
	if v, ok := params["heuristic"]; ok {
		if v != MostNeighbours && v != LowestID {
			return Config{}, fmt.Errorf("dpop: parameter heuristic = %v: want %d (most neighbours first) or %d (lowest id first)", v, MostNeighbours, LowestID)
		}
		c.Heuristic = int(v)
	}
	return c, c.validate()
}

// validate reports a field out of range, naming its parameter.
func (c Config) validate() error {
	if c.MaxUtilEntries < 1 || c.MaxUtilEntries > math.MaxInt32 {
		return fmt.Errorf("dpop: parameter max_util_entries = %d: want a whole number in 1..%d", c.MaxUtilEntries, math.MaxInt32)
	}
	if c.Heuristic != MostNeighbours && c.Heuristic != LowestID {
		return fmt.Errorf("dpop: parameter heuristic = %d: want %d (most neighbours first) or %d (lowest id first)", c.Heuristic, MostNeighbours, LowestID)
	}
	return nil
}
