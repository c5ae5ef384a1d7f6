package mgm2

import (
	"fmt"

	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// Config is MGM-2's configuration. A run sets it by name on the command
// line (`-p offer_prob=0.3`, mva.Node.Params; the package comment says
// what each does); ParseConfig reads such a map, and the agents read
// only the Config.
type Config struct {
	Rounds               int              // rounds: 0..1<<30
	OfferProb            float64          // offer_prob: the probability of being an offerer, [0, 1]
	PositiveOffers       bool             // positive_offers: offer only moves of positive unilateral gain
	MaxOffers            int              // max_offers: 0 (all) or the most offers an offerer sends, ..1<<22
	AcceptOverUnilateral bool             // accept_over_unilateral
	Init                 localsearch.Init // init: InitStart and the others of -p init=name
	Response             localsearch.ResponseConfig
}

// ParseConfig returns the configuration params set, the documented
// defaults for the parameters it lacks, validated. Names MGM-2 does not
// read are ignored, as other protocols' parameters may share the map.
func ParseConfig(params map[string]float64) (Config, error) {
	var c Config
	var err error
	if c.Rounds, err = localsearch.Int(params, "rounds", DefaultRounds, 0, maxRounds); err != nil {
		return Config{}, fmt.Errorf("mgm2: %w", err)
	}
	if c.OfferProb, err = localsearch.Prob(params, "offer_prob", DefaultOfferProb); err != nil {
		return Config{}, fmt.Errorf("mgm2: %w", err)
	}
	if c.PositiveOffers, err = localsearch.Bool(params, "positive_offers", false); err != nil {
		return Config{}, fmt.Errorf("mgm2: %w", err)
	}
	if c.MaxOffers, err = localsearch.Int(params, "max_offers", 0, 0, maxEntries); err != nil {
		return Config{}, fmt.Errorf("mgm2: %w", err)
	}
	if c.AcceptOverUnilateral, err = localsearch.Bool(params, "accept_over_unilateral", false); err != nil {
		return Config{}, fmt.Errorf("mgm2: %w", err)
	}
	if c.Init, err = localsearch.InitParam(params, localsearch.InitRandom); err != nil {
		return Config{}, fmt.Errorf("mgm2: %w", err)
	}
	if c.Response, err = localsearch.ParseResponse(params); err != nil {
		return Config{}, fmt.Errorf("mgm2: %w", err)
	}
	return c, c.validate()
}

// validate reports a field out of range, naming its parameter.
func (c Config) validate() error {
	switch {
	case c.Rounds < 0 || c.Rounds > maxRounds:
		return fmt.Errorf("mgm2: parameter rounds = %d: want an integer in 0..%d", c.Rounds, maxRounds)
	case !(c.OfferProb >= 0 && c.OfferProb <= 1):
		return fmt.Errorf("mgm2: parameter offer_prob = %v: want a probability in [0, 1]", c.OfferProb)
	case c.MaxOffers < 0 || c.MaxOffers > maxEntries:
		return fmt.Errorf("mgm2: parameter max_offers = %d: want an integer in 0..%d", c.MaxOffers, maxEntries)
	case c.Init < localsearch.InitFirst || c.Init > localsearch.InitStart:
		return fmt.Errorf("mgm2: parameter init = %d: want an integer in %d..%d", c.Init, localsearch.InitFirst, localsearch.InitStart)
	}
	return nil
}
