package mgm2

import (
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch/lstest"
	"github.com/hearth-dcop/hearth/sampler"
)

// testSolvers are the local solvers these tests run the protocol with.
func testSolvers() lstest.Solvers {
	return lstest.Solvers{New: local.New, Exact: local.Exact, Sampler: sampler.NewConditionalSampler}
}
