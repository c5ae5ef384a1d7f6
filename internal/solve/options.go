// Package solve is the solver choice of hearth's commands: the local
// solver by name (solvefile.Local, with --local auto's policy), the
// protocol between agents, the MVA table and reformulation, the GPU
// (OpenGPU), and the runs they make — Prepare and Distributed for a
// protocol through mva/pipeline, Homes for a neighbourhood with the
// homes' policy of devices/homesolve. The local solver's choice and the
// central solve of one subproblem (solvefile.Local, solvefile.Central)
// live in internal/solvefile, which the lean cmd/hearth-solve links
// without this package's protocols, homes, bench and MQTT code; callers
// use them from there.
//
// It sits apart from local, sampler and mva because it is the one place
// that knows them all: mva and its protocols receive their solvers as
// factories and never import local or sampler, and cmd/hearth keeps
// only its flags, exit codes and printing. `hearth solve`, `hearth sim`
// and `hearth run` share Options, so that one instance runs the same
// way on the simulated runtime, over MQTT in one process, and one home
// per process.
package solve

import (
	"github.com/hearth-dcop/hearth/internal/solvefile"
	"time"

	"github.com/hearth-dcop/hearth/mva/protocol"
)

// Options choose how a problem is solved (the flags of `hearth solve`).
type Options struct {
	Global     string // a registered protocol (protocol.Names) or "none": central
	Local      solvefile.Local
	Table      string // lazy or eager MVA tables; empty: Check's default
	Reform     string // reform.Names; empty: "mva"
	Agents     int    // repartition into this many agents (format.Options)
	Seed       uint64
	Params     map[string]float64 // the protocol's -p name=value parameters
	Delay      time.Duration      // simulated latency of each message
	MaxEntries int                // the compilation reformulation's bound
	GPU        string             // auto, on or off (OpenGPU)
	Timeout    time.Duration      // 0: no limit
	// Start, when set, is a full assignment every agent's local solver
	// suggests as its start (StartSolver; homes: the uncoordinated
	// schedules).
	Start []int
}

// GlobalNames lists every --global: none, then the registered protocols.
func GlobalNames() []string { return append([]string{"none"}, protocol.Names()...) }
