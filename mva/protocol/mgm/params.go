package mgm

import "github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"

// Named values of MGM's parameters, for callers that set them (-p
// name=value, or a policy such as the homes' in devices/homesolve) rather
// than copy the numbers.
const (
	// InitStart ("init") starts every agent at the row its local solver
	// suggests (mva.Starter); D-Gibbs and MGM-2 read the same value.
	InitStart = float64(localsearch.InitStart)
	// ResponseBlocks ("response") answers, where an exact best response
	// exceeds "response_entries", by an exact solve (local.Exact) within
	// "response_checks" and past it by block descent.
	ResponseBlocks = float64(localsearch.ResponseBlocks)
	// DefaultResponseChecks is the default of "response_checks".
	DefaultResponseChecks = float64(localsearch.DefaultResponseChecks)
)
