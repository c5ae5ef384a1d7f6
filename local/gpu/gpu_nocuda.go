//go:build !cuda

package gpu

import (
	"context"
	"fmt"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// This file is the documented pure-Go build: the API of the cuda build,
// every entry point reporting ErrNoCUDA, so that callers compile either way
// and choose the CPU at run time.

// Available reports whether a GPU can be used: never, in this build.
func Available() bool { return false }

// Open returns an error wrapping ErrNoCUDA.
func Open() (*Device, error) { return OpenWith(Options{}) }

// OpenWith returns an error wrapping ErrNoCUDA.
func OpenWith(Options) (*Device, error) {
	return nil, fmt.Errorf("gpu: %w", ErrNoCUDA)
}

// Device is a GPU; in this build none can be opened.
type Device struct{}

// Name returns "".
func (d *Device) Name() string { return "" }

// Close does nothing.
func (d *Device) Close() error { return nil }

// MemInfo returns an error wrapping ErrNoCUDA.
func (d *Device) MemInfo() (free, total int64, err error) {
	return 0, 0, fmt.Errorf("gpu: %w", ErrNoCUDA)
}

// JoinProject returns an error wrapping ErrNoCUDA.
func (d *Device) JoinProject(context.Context, *local.JoinProject, []float64, []int32) error {
	return fmt.Errorf("gpu: %w", ErrNoCUDA)
}

// BE is bucket elimination on a GPU; in this build none can be made.
type BE struct{}

// NewBE returns an error wrapping ErrNoCUDA.
func NewBE(*mva.LocalProblem, *Device, BEOptions) (*BE, error) {
	return nil, fmt.Errorf("gpu: %w", ErrNoCUDA)
}

// SolveRow returns an error wrapping ErrNoCUDA.
func (b *BE) SolveRow(context.Context, []int, []int) (float64, error) {
	return 0, fmt.Errorf("gpu: %w", ErrNoCUDA)
}

// SolveTable returns an error wrapping ErrNoCUDA.
func (b *BE) SolveTable(context.Context, *mva.Table) error {
	return fmt.Errorf("gpu: %w", ErrNoCUDA)
}

// Checks returns 0.
func (b *BE) Checks() int64 { return 0 }

// Supported reports whether the GPU kernel handles p: never, in this build.
func Supported(*local.JoinProject) bool { return false }

// UtilChain runs DPOP's UTIL joins on a GPU; in this build none can be
// made.
type UtilChain struct{}

// NewUtilChain returns a chain whose Offload is always false.
func NewUtilChain(*Device, int64) *UtilChain { return &UtilChain{} }

// Offload reports false: nothing runs on a GPU in this build.
func (u *UtilChain) Offload(*local.JoinProject) bool { return false }

// Step returns an error wrapping ErrNoCUDA.
func (u *UtilChain) Step(context.Context, *local.JoinProject, *local.Factor, bool, []int32) error {
	return fmt.Errorf("gpu: %w", ErrNoCUDA)
}

// Host returns an error wrapping ErrNoCUDA.
func (u *UtilChain) Host(context.Context, *local.Factor) error {
	return fmt.Errorf("gpu: %w", ErrNoCUDA)
}

// Close does nothing.
func (u *UtilChain) Close() error { return nil }
