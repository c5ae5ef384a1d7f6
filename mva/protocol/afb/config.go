package afb

import (
	"fmt"
	"math"
)

// Config is MVA-AFB's configuration. A run sets it by name on the
// command line (`-p afb_order=2`, mva.Node.Params; the package comment
// says what each does); ParseConfig reads such a map, and the agents
// read only the Config.
type Config struct {
	Order      int  // afb_order: OrderID, OrderDegree or OrderLinks
	Candidates int  // afb_candidates: CandidatesBestFirst, CandidatesStatic or CandidatesLex
	Estimate   int  // afb_estimate: EstimateExact, EstimateHybrid or EstimateDecoupled
	HPlus      bool // afb_hplus: the later agents' local bounds in the test
	ZeroStop   bool // afb_zero_stop: stop at the first solution of cost 0
	Recheck    bool // afb_recheck: re-test the current row on NEW_SOLUTION
}

// ParseConfig returns the configuration params set (zero, the defaults,
// for the parameters it lacks), validated. Names AFB does not read are
// ignored, as other protocols' parameters may share the map.
func ParseConfig(params map[string]float64) (Config, error) {
	var c Config
	var hplus, zero, recheck int
	for _, p := range []struct {
		name string
		hi   int
		dst  *int
	}{
		{"afb_order", OrderLinks, &c.Order}, {"afb_candidates", CandidatesLex, &c.Candidates}, {"afb_estimate", EstimateDecoupled, &c.Estimate},
		{"afb_hplus", 1, &hplus}, {"afb_zero_stop", 1, &zero}, {"afb_recheck", 1, &recheck},
	} {
		v := params[p.name]
		if v != math.Trunc(v) || v < 0 || v > float64(p.hi) {
			return Config{}, fmt.Errorf("afb: parameter %s = %v: want an integer in 0..%d", p.name, v, p.hi)
		}
		*p.dst = int(v)
	}
	c.HPlus, c.ZeroStop, c.Recheck = hplus == 1, zero == 1, recheck == 1
	return c, c.validate()
}

// validate reports a mode out of range, naming its parameter.
func (c Config) validate() error {
	for _, m := range []struct {
		name  string
		v, hi int
	}{{"afb_order", c.Order, OrderLinks}, {"afb_candidates", c.Candidates, CandidatesLex}, {"afb_estimate", c.Estimate, EstimateDecoupled}} {
		if m.v < 0 || m.v > m.hi {
			return fmt.Errorf("afb: parameter %s = %d: want an integer in 0..%d", m.name, m.v, m.hi)
		}
	}
	return nil
}
