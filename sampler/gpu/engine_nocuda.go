//go:build !cuda

package gpu

import (
	"context"
	"fmt"

	lgpu "github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
)

// This file is the documented pure-Go build: the constructors report
// local/gpu.ErrNoCUDA, so that callers compile either way and choose the
// CPU samplers at run time. The methods exist only to keep the API the
// same; no value of these types can be made in this build.

type engine struct{}

func newEngine(name string, _ *mva.LocalProblem, _ *lgpu.Device, _ sampler.Options, _ int) (*engine, error) {
	return nil, fmt.Errorf("gpu %s: %w", name, lgpu.ErrNoCUDA)
}

func (e *engine) err() error { return fmt.Errorf("gpu sampler: %w", lgpu.ErrNoCUDA) }

func (e *engine) solveRow(context.Context, []int, []int) (float64, error) { return 0, e.err() }

func (e *engine) solveTable(context.Context, *mva.Table) error { return e.err() }

func (e *engine) checksSoFar() int64 { return 0 }

func (e *engine) options() sampler.Options { return sampler.Options{} }

func (e *engine) onDevice() bool { return false }
