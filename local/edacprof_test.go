package local

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/cputime"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format"
)

// TestEDACFiles runs EDAC without dead-end elimination, with and without
// last-conflict branching, then with both (only that with
// HEARTH_EDAC_DEE_ONLY set), on the files of HEARTH_EDAC_FILES (comma
// separated) and logs nodes, checks and CPU time of SolveRow (the median of
// HEARTH_EDAC_RUNS runs, each on a new solver, and of NewEDAC): a measuring aid (go test
// -run EDACFiles -v -cpuprofile), skipped without the variable. With
// HEARTH_EDAC_VERIFY set, dee and eliminateSmall check their queues
// against a scan of every variable (verifyQueues) and the test fails where
// a queue missed one.
func TestEDACFiles(t *testing.T) {
	files, runs := measureFiles(t, "HEARTH_EDAC_FILES", "HEARTH_EDAC_RUNS")
	for _, f := range files {
		p, err := format.ReadFile(f, format.Options{})
		if err != nil {
			t.Fatal(err)
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		var first float64
		for i, lc := range []bool{false, true, true} {
			s := NewEDAC(lp)
			s.noLastConflict = !lc
			s.noDEE = i < 2
			if s.noDEE && os.Getenv("HEARTH_EDAC_DEE_ONLY") != "" {
				continue
			}
			in := make([]int, lp.NumInterior())
			var (
				v          float64
				err        error
				cpus, news []time.Duration
			)
			for r := range runs {
				if r > 0 {
					c0 := cputime.Used()
					ns := NewEDAC(lp)
					news = append(news, cputime.Used()-c0)
					ns.noLastConflict, ns.noDEE = s.noLastConflict, s.noDEE
					s = ns
				}
				s.verifyQueues = os.Getenv("HEARTH_EDAC_VERIFY") != ""
				c0 := cputime.Used()
				v, err = s.SolveRow(context.Background(), nil, in)
				cpus = append(cpus, cputime.Used()-c0)
			}
			slices.Sort(cpus)
			slices.Sort(news)
			newCPU := time.Duration(0)
			if len(news) > 0 {
				newCPU = news[len(news)/2]
			}
			t.Logf("%s last-conflict=%v dee=%v: %v %v root=%v nodes=%d checks=%d cpu=%v new=%v (medians of %d)", f, lc, !s.noDEE, v, err, s.rootLB, s.Nodes(), s.Checks(), cpus[len(cpus)/2].Round(100*time.Microsecond), newCPU.Round(100*time.Microsecond), runs)
			if s.deeMissed > 0 || s.elimMissed > 0 {
				t.Errorf("%s: the queues missed %d dead-end removals and %d eliminations", f, s.deeMissed, s.elimMissed)
			}
			if err != nil {
				t.Fatal(err)
			}
			if first == 0 {
				first = v
			} else if v != first {
				t.Errorf("%s: %v with last-conflict branching, %v without", f, v, first)
			}
		}
	}
}

// BenchmarkEDACFiles times NewEDAC and a whole SolveRow of each file of
// HEARTH_EDAC_FILES (comma separated), skipped without the variable.
func BenchmarkEDACFiles(b *testing.B) {
	env := os.Getenv("HEARTH_EDAC_FILES")
	if env == "" {
		b.Skip("HEARTH_EDAC_FILES not set")
	}
	for _, f := range strings.Split(env, ",") {
		p, err := format.ReadFile(f, format.Options{})
		if err != nil {
			b.Fatal(err)
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		in := make([]int, lp.NumInterior())
		name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		b.Run(name+"/new", func(b *testing.B) {
			for b.Loop() {
				NewEDAC(lp)
			}
		})
		b.Run(name+"/solve", func(b *testing.B) {
			for b.Loop() {
				if _, err := NewEDAC(lp).SolveRow(context.Background(), nil, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// measureFiles returns the files named by the environment variable files
// (comma separated) and the runs of each measurement, from runs (1 when
// unset), for the measuring aids of this package; it skips the test when
// files is not set.
func measureFiles(t *testing.T, files, runs string) ([]string, int) {
	t.Helper()
	env := os.Getenv(files)
	if env == "" {
		t.Skip(files + " not set")
	}
	n := 1
	if v := os.Getenv(runs); v != "" {
		r, err := strconv.Atoi(v)
		if err != nil || r < 1 {
			t.Fatalf("%s=%q: want a positive number of runs", runs, v)
		}
		n = r
	}
	return strings.Split(env, ","), n
}
