package solvefile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProfile: the variables each give a whole profile (pprof's gzipped
// protobuf, which starts with gzip's magic bytes) at stop, unset ones
// give none, and a path that cannot be created is reported on stderr
// under the command's name and the variable's, without stopping
// anything.
func TestProfile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-dir", "x.prof")
	for _, tc := range []struct {
		name      string
		cpu, heap string // file names under dir; "" leaves the variable unset
		badCPU    bool   // the CPU profile's path is in a missing folder
		stderr    []string
	}{
		{name: "none"},
		{name: "cpu", cpu: "cpu.prof"},
		{name: "heap", heap: "heap.prof"},
		{name: "both", cpu: "cpu2.prof", heap: "heap2.prof"},
		{name: "bad cpu", badCPU: true, heap: "heap3.prof", stderr: []string{"hearth-solve: HEARTH_CPUPROFILE: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := func(env, file string) string {
				if file == "" {
					t.Setenv(env, "")
					return ""
				}
				p := filepath.Join(dir, file)
				t.Setenv(env, p)
				return p
			}
			cpu := set(CPUProfileEnv, tc.cpu)
			if tc.badCPU {
				t.Setenv(CPUProfileEnv, missing)
			}
			heap := set(HeapProfileEnv, tc.heap)
			var stderr bytes.Buffer
			stop := Profile("hearth-solve", &stderr)
			work := 0
			for i := range 1 << 16 {
				work += i * i
			}
			_ = work
			stop()
			for _, p := range []string{cpu, heap} {
				if p == "" {
					continue
				}
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatalf("profile %s: %v", p, err)
				}
				if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
					t.Errorf("profile %s: %d bytes, not gzip", p, len(b))
				}
			}
			if _, err := os.Stat(missing); err == nil {
				t.Errorf("%s exists", missing)
			}
			got := stderr.String()
			if len(tc.stderr) == 0 && got != "" {
				t.Errorf("stderr %q, want nothing", got)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(got, w) {
					t.Errorf("stderr %q, want %q", got, w)
				}
			}
		})
	}
}

// TestHeapProfileRewritten: the heap profile is written on its period
// too, not only at stop, so that a process killed for its memory still
// leaves one.
func TestHeapProfileRewritten(t *testing.T) {
	p := filepath.Join(t.TempDir(), "heap.prof")
	var stderr bytes.Buffer
	stop := StartHeapProfile("hearth", p, time.Millisecond, &stderr)
	defer stop()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if st, err := os.Stat(p); err == nil && st.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no heap profile written before stop")
		}
		time.Sleep(time.Millisecond)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr %q", stderr.String())
	}
}
