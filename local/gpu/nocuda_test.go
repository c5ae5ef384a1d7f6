//go:build !cuda

package gpu

import (
	"context"
	"errors"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
)

// TestWithoutCUDA checks the pure-Go build: nothing claims a GPU, and every
// entry point says why in an error wrapping ErrNoCUDA.
func TestWithoutCUDA(t *testing.T) {
	if Available() {
		t.Fatal("Available() = true without the cuda tag")
	}
	if _, err := Open(); !errors.Is(err, ErrNoCUDA) {
		t.Fatalf("Open: %v, want ErrNoCUDA", err)
	}
	if _, err := OpenWith(Options{Ordinal: 1}); !errors.Is(err, ErrNoCUDA) {
		t.Fatalf("OpenWith: %v, want ErrNoCUDA", err)
	}
	p := randprob.New(1, randprob.Options{Vars: 3, MinDomain: 2, MaxDomain: 2, MaxArity: 2, Functions: 2})
	if _, err := NewBE(mva.NewLocalProblem(p, mva.Whole(p)), nil, BEOptions{}); !errors.Is(err, ErrNoCUDA) {
		t.Fatalf("NewBE: %v, want ErrNoCUDA", err)
	}
	var d *Device
	if err := d.JoinProject(context.Background(), nil, nil, nil); !errors.Is(err, ErrNoCUDA) {
		t.Fatalf("JoinProject: %v, want ErrNoCUDA", err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
