// Package protocol is the registry of hearth's distributed protocols, the
// names `--global` and a neighbourhood's [solver] global take. Each
// protocol lives in its own sub-package (dpop, afb, dgibbs, mgm, mgm2) as
// a pure state machine (mva.Protocol); this package only names them,
// beside them, so that a new protocol is registered where it is written.
package protocol

import (
	"slices"

	"github.com/hearth-dcop/hearth/mva/pipeline"
	"github.com/hearth-dcop/hearth/mva/protocol/afb"
	"github.com/hearth-dcop/hearth/mva/protocol/dgibbs"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
	"github.com/hearth-dcop/hearth/mva/protocol/mgm"
	"github.com/hearth-dcop/hearth/mva/protocol/mgm2"
)

// Protocol is a registered protocol.
type Protocol struct {
	Name string
	New  pipeline.ProtocolFactory
	// Exact protocols are complete: over exact MVA rows they prove
	// optimality, and infeasibility when they find no feasible
	// assignment. The others (local search, sampling) prove neither.
	Exact bool
	// Check parses and validates the protocol's -p parameters (its
	// ParseConfig) before any agent is built, so that a bad value is a
	// usage error naming the parameter. Checks that need the agents
	// (mgm's quiet stop on a complete graph) still come when they are
	// built.
	Check func(params map[string]float64) error
}

var registry = []Protocol{
	{"afb", afb.New, true, checker(afb.ParseConfig)},
	{"dgibbs", dgibbs.New, false, checker(dgibbs.ParseConfig)},
	{"dpop", dpop.New, true, checker(dpop.ParseConfig)},
	{"mgm", mgm.New, false, checker(mgm.ParseConfig)},
	{"mgm2", mgm2.New, false, checker(mgm2.ParseConfig)},
}

// checker turns a protocol's ParseConfig into a Protocol.Check.
func checker[C any](parse func(map[string]float64) (C, error)) func(map[string]float64) error {
	return func(params map[string]float64) error {
		_, err := parse(params)
		return err
	}
}

// Names returns the registered names, sorted.
func Names() []string {
	names := make([]string, len(registry))
	for i, p := range registry {
		names[i] = p.Name
	}
	slices.Sort(names)
	return names
}

// Lookup returns the protocol called name.
func Lookup(name string) (Protocol, bool) {
	i := slices.IndexFunc(registry, func(p Protocol) bool { return p.Name == name })
	if i < 0 {
		return Protocol{}, false
	}
	return registry[i], true
}

// ParamValue returns the value the name stands for in a parameter that
// takes one of a few modes — init (first, random, best, start), response
// (auto, enumerate, solve, blocks), interior (best, gibbs) — so that
// `-p init=start` says what `-p init=3` means. Each name means the same in
// every protocol that reads the parameter.
func ParamValue(param, name string) (float64, bool) {
	switch param {
	case "init":
		v, ok := localsearch.InitNames[name]
		return float64(v), ok
	case "response":
		v, ok := localsearch.ResponseNames[name]
		return float64(v), ok
	case "interior":
		v, ok := dgibbs.InteriorNames[name]
		return float64(v), ok
	}
	return 0, false
}

// ParamValueNames returns the names ParamValue knows for param, sorted;
// none for a parameter that takes numbers only.
func ParamValueNames(param string) []string {
	var names []string
	switch param {
	case "init":
		for n := range localsearch.InitNames {
			names = append(names, n)
		}
	case "response":
		for n := range localsearch.ResponseNames {
			names = append(names, n)
		}
	case "interior":
		for n := range dgibbs.InteriorNames {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
