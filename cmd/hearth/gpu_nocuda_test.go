//go:build !cuda

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestGPUOnWithoutCUDA: the default build has no GPU support, so --gpu on
// must fail with the reason and auto must quietly use the CPU.
func TestGPUOnWithoutCUDA(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"solve", "../../examples/thesis-3.1.xml", "--gpu", "on"}, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "without CUDA support") {
		t.Errorf("--gpu on: exit %d, stderr %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	code = run(context.Background(), []string{"solve", "../../examples/thesis-3.1.xml", "--gpu", "auto", "--global", "dpop"}, &out, &errb)
	if code != exitOK || !strings.Contains(out.String(), "objective   12") {
		t.Errorf("--gpu auto: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	if code := run(context.Background(), []string{"solve", "../../examples/thesis-3.1.xml", "--gpu", "maybe"}, &out, &errb); code != exitUsage {
		t.Errorf("--gpu maybe: exit %d", code)
	}
}
