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
}

var registry = []Protocol{
	{"afb", afb.New, true},
	{"dgibbs", dgibbs.New, false},
	{"dpop", dpop.New, true},
	{"mgm", mgm.New, false},
	{"mgm2", mgm2.New, false},
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
