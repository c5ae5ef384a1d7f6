// Package solvefile solves one instance file centrally: the part of
// `hearth solve FILE --global none` that the lean binary hearth-solve
// (cmd/hearth-solve) shares with cmd/hearth. It holds the local solver's
// choice (Local, with --local auto's policy), the central solve (Central),
// the one-shot collector settings (GC), the flags both commands declare,
// the result's text summary and exit codes, and the profiles that the
// HEARTH_CPUPROFILE and HEARTH_HEAPPROFILE variables ask of either binary
// (Profile).
//
// It exists apart from internal/solve because Go runs the init of every
// linked package: internal/solve also knows the protocols, the homes
// (devices/homesolve, which links gonum/plot), `hearth bench` and the MQTT
// daemon, whose inits cost a process 2.5–3 ms of CPU and ~400 page faults
// before it reads a byte (docs/DESIGN.md, "Process start-up"). This
// package must link none of them, nor yaml.v3 (it reads instances through
// mva/format/core, without pyDCOP; `hearth solve` passes Job the full
// mva/format reader): cmd/hearth-solve's TestLean checks it.
package solvefile
