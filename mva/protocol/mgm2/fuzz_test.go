package mgm2

import (
	"testing"

	"github.com/hearth-dcop/hearth/internal/simbench"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch/lstest"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// The agents count their external-function checks for NCCC.
var _ sim.CheckCounter = (*Agent)(nil)

func FuzzStep(f *testing.F) {
	lstest.Fuzz(f, testSolvers(), lstest.Fixed(), New, map[string]float64{"rounds": 4, "offer_prob": 0.7}, []string{KindValue, KindOffer, KindAccept, KindReject, KindGain, KindGo, KindNoGo, "BOGUS"})
}

// BenchmarkMGM2 runs 50 rounds on random 8-agent problems and reports the
// messages and simulated time per run.
func BenchmarkMGM2(b *testing.B) {
	simbench.Run(b, lstest.Configs(testSolvers())[0].Options, New, map[string]float64{"rounds": 50})
}
