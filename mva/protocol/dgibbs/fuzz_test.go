package dgibbs

import (
	"testing"

	"github.com/hearth-dcop/hearth/internal/simbench"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch/lstest"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// The agents count their external-function checks for NCCC.
var _ sim.CheckCounter = (*Agent)(nil)

func FuzzStep(f *testing.F) {
	lstest.Fuzz(f, testSolvers(), lstest.Fixed(), New, map[string]float64{"iterations": 6, "init": 1}, []string{KindToken, KindTokenBack, KindValue, KindBacktrack, KindFinal, "BOGUS"})
}

func FuzzStepMVADG(f *testing.F) {
	lstest.Fuzz(f, testSolvers(), lstest.Fixed(), New, map[string]float64{"iterations": 6, "init": 1, "interior": InteriorGibbs}, []string{KindToken, KindTokenBack, KindValue, KindBacktrack, KindFinal, "BOGUS"})
}

// BenchmarkDGibbs runs 100 iterations on random 8-agent problems and reports the
// messages and simulated time per run.
func BenchmarkDGibbs(b *testing.B) {
	simbench.Run(b, lstest.Configs(testSolvers())[0].Options, New, map[string]float64{"iterations": 100})
}
