package solvefile

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"
)

// Profile environment variables, read by both `hearth` and `hearth-solve`
// at start-up. Environment variables rather than flags, so that every
// command, `hearth sim` and `hearth run` included, can be profiled as the
// user runs it, and so that a benchmark script profiles the lean binary
// and the full one by the same setting.
const (
	// CPUProfileEnv names the file that gets a CPU profile of the whole
	// process, for `go tool pprof`.
	CPUProfileEnv = "HEARTH_CPUPROFILE"
	// HeapProfileEnv names the file that gets a heap profile, rewritten
	// every HeapProfileEvery and at exit.
	HeapProfileEnv = "HEARTH_HEAPPROFILE"
)

// HeapProfileEvery is how often the heap profile is rewritten, so that a
// run killed for its memory still leaves the profile of what it held.
const HeapProfileEvery = 10 * time.Second

// Profile starts the profiles that HEARTH_CPUPROFILE and
// HEARTH_HEAPPROFILE ask for and returns what stops them and writes them
// out; cmd names the command in error messages. A profile that cannot be
// written is reported on stderr and skipped, never fatal: profiling must
// not change what the command does. With neither variable set it does
// nothing and costs nothing.
func Profile(cmd string, stderr io.Writer) (stop func()) {
	stopHeap := StartHeapProfile(cmd, os.Getenv(HeapProfileEnv), HeapProfileEvery, stderr)
	stopCPU := StartCPUProfile(cmd, os.Getenv(CPUProfileEnv), stderr)
	return func() {
		stopHeap()
		stopCPU()
	}
}

// StartCPUProfile writes a CPU profile to path until the returned
// function is called; with path empty it does nothing. Errors go to
// stderr, prefixed by cmd and the variable's name.
func StartCPUProfile(cmd, path string, stderr io.Writer) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s: %v\n", cmd, CPUProfileEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(stderr, "%s: %s: %v\n", cmd, CPUProfileEnv, err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "%s: %s: %v\n", cmd, CPUProfileEnv, err)
		}
	}
}

// StartHeapProfile writes a heap profile to path every `every` and when
// the returned function is called, each time through a temporary file
// renamed over the previous profile, so that the file is always a whole
// profile; with path empty it does nothing.
func StartHeapProfile(cmd, path string, every time.Duration, stderr io.Writer) (stop func()) {
	if path == "" {
		return func() {}
	}
	write := func() {
		tmp := path + ".tmp"
		f, err := os.Create(tmp)
		if err == nil {
			err = pprof.Lookup("heap").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err == nil {
			err = os.Rename(tmp, path)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: %s: %v\n", cmd, HeapProfileEnv, err)
		}
	}
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				write()
			case <-quit:
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-done
		write()
	}
}
