package mgm

import (
	"testing"

	"github.com/hearth-dcop/hearth/internal/simbench"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch/lstest"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// The agents count their external-function checks for NCCC.
var _ sim.CheckCounter = (*Agent)(nil)

func FuzzStep(f *testing.F) {
	lstest.Fuzz(f, testSolvers(), lstest.Fixed(), New, map[string]float64{"rounds": 4}, []string{KindValue, KindGain, "BOGUS"})
}

// FuzzStepJoint fuzzes the GAIN messages of joint moves, which carry the
// sender's candidate values.
func FuzzStepJoint(f *testing.F) {
	lstest.Fuzz(f, testSolvers(), lstest.Fixed(), New, map[string]float64{"rounds": 4, "joint": 1}, []string{KindValue, KindGain, "BOGUS"})
}

// BenchmarkMGM runs 50 rounds on random 8-agent problems and reports the
// messages and simulated time per run.
func BenchmarkMGM(b *testing.B) {
	simbench.Run(b, lstest.Configs(testSolvers())[0].Options, New, map[string]float64{"rounds": 50})
}

// FuzzStepRelay fuzzes the relay's messages (relay = 1, joint moves):
// VALUE and GAIN to the hub, the hub's VALUES and GAINS bundles.
func FuzzStepRelay(f *testing.F) {
	lstest.Fuzz(f, testSolvers(), completeRelayInstance(), New, map[string]float64{"rounds": 4, "joint": 1, "relay": 1},
		[]string{KindValue, KindGain, KindValues, KindGains, "BOGUS"})
}
