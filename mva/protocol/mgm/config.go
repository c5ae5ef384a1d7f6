package mgm

import (
	"fmt"

	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// Config is MGM's configuration. A run sets it by name on the command
// line (`-p rounds=40 -p init=start`, mva.Node.Params; the package
// comment says what each does); ParseConfig reads such a map, and the
// agents read only the Config.
type Config struct {
	Rounds   int              // rounds: 0..1<<30
	Init     localsearch.Init // init: InitStart and the others of -p init=name
	Joint    bool             // joint: joint moves of non-neighbours
	Quiet    bool             // quiet: stop after a round without gain
	Relay    bool             // relay: VALUEs and GAINs through the hub
	Response localsearch.ResponseConfig
}

// ParseConfig returns the configuration params set, the documented
// defaults for the parameters it lacks, validated. Names MGM does not
// read are ignored, as other protocols' parameters may share the map.
func ParseConfig(params map[string]float64) (Config, error) {
	var c Config
	var err error
	if c.Rounds, err = localsearch.Int(params, "rounds", DefaultRounds, 0, maxRounds); err != nil {
		return Config{}, fmt.Errorf("mgm: %w", err)
	}
	if c.Init, err = localsearch.InitParam(params, localsearch.InitRandom); err != nil {
		return Config{}, fmt.Errorf("mgm: %w", err)
	}
	if c.Joint, err = localsearch.Bool(params, "joint", false); err != nil {
		return Config{}, fmt.Errorf("mgm: %w", err)
	}
	if c.Quiet, err = localsearch.Bool(params, "quiet", false); err != nil {
		return Config{}, fmt.Errorf("mgm: %w", err)
	}
	if c.Relay, err = localsearch.Bool(params, "relay", false); err != nil {
		return Config{}, fmt.Errorf("mgm: %w", err)
	}
	if c.Response, err = localsearch.ParseResponse(params); err != nil {
		return Config{}, fmt.Errorf("mgm: %w", err)
	}
	return c, c.validate()
}

// validate reports a field out of range, naming its parameter.
func (c Config) validate() error {
	if c.Rounds < 0 || c.Rounds > maxRounds {
		return fmt.Errorf("mgm: parameter rounds = %d: want an integer in 0..%d", c.Rounds, maxRounds)
	}
	if c.Init < localsearch.InitFirst || c.Init > localsearch.InitStart {
		return fmt.Errorf("mgm: parameter init = %d: want an integer in %d..%d", c.Init, localsearch.InitFirst, localsearch.InitStart)
	}
	return nil
}
