package sampler

import "github.com/hearth-dcop/hearth/mva"

// NewConditionalSampler is NewConditional as the mva.SamplerFactory
// protocols receive through their node (mva.Node.Sampler).
func NewConditionalSampler(lp *mva.LocalProblem, tau float64, seed uint64) (mva.ConditionalSampler, error) {
	c, err := NewConditional(lp, tau, seed)
	if err != nil {
		return nil, err
	}
	return c, nil
}
