//go:build !cuda

package gpu

import (
	"context"
	"errors"
	"testing"

	"github.com/hearth-dcop/hearth/internal/samplertest"
	lgpu "github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/sampler"
)

// TestWithoutCUDA checks the pure-Go build: every constructor says why in
// an error wrapping local/gpu.ErrNoCUDA, and the methods of the (unmakeable)
// types do too rather than panic.
func TestWithoutCUDA(t *testing.T) {
	lp := samplertest.MeetingAgent(1, 1, 4, false)
	if _, err := NewGibbs(lp, nil, sampler.Options{}); !errors.Is(err, lgpu.ErrNoCUDA) {
		t.Fatalf("NewGibbs: %v, want ErrNoCUDA", err)
	}
	if _, err := NewMH(lp, nil, sampler.Options{Proposal: sampler.ProposalDiscrete}); !errors.Is(err, lgpu.ErrNoCUDA) {
		t.Fatalf("NewMH: %v, want ErrNoCUDA", err)
	}
	for _, name := range sampler.Names() {
		if _, err := New(name, lp, nil, sampler.Options{}); !errors.Is(err, lgpu.ErrNoCUDA) {
			t.Fatalf("New(%q): %v, want ErrNoCUDA", name, err)
		}
	}
	if _, err := New("annealing", lp, nil, sampler.Options{}); err == nil || errors.Is(err, lgpu.ErrNoCUDA) {
		t.Fatalf("New(annealing): %v, want an unknown-sampler error", err)
	}
	g := &Gibbs{}
	if _, err := g.SolveRow(context.Background(), nil, nil); !errors.Is(err, lgpu.ErrNoCUDA) {
		t.Fatalf("SolveRow: %v", err)
	}
	m := &MH{}
	if err := m.SolveTable(context.Background(), nil); !errors.Is(err, lgpu.ErrNoCUDA) {
		t.Fatalf("SolveTable: %v", err)
	}
	if g.Checks() != 0 || m.OnDevice() || g.Options() != (sampler.Options{}) {
		t.Fatal("zero values")
	}
}
