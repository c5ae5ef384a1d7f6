package local

import (
	"context"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/cputime"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format/wcsp"
)

// TestTreeCandidatesExperiment solves each .wcsp of $HEARTH_TREE_FILES
// (comma-separated) with AOBB over every candidate pseudo-tree, each within
// $HEARTH_TREE_SECONDS (default 5) of wall time and
// $HEARTH_TREE_CHECKS checks (default 2^28), with $HEARTH_TREE_TRIES orders
// per rule, and logs the tree's
// measures beside the CPU time: the measurements behind treeBetter.
// With $HEARTH_TREE_RACE set it races instead, each candidate first
// (AOBB.race). Skipped unless set.
func TestTreeCandidatesExperiment(t *testing.T) {
	files := os.Getenv("HEARTH_TREE_FILES")
	if files == "" {
		t.Skip("set HEARTH_TREE_FILES")
	}
	limit := 5 * time.Second
	if s := os.Getenv("HEARTH_TREE_SECONDS"); s != "" {
		d, err := time.ParseDuration(s + "s")
		if err != nil {
			t.Fatal(err)
		}
		limit = d
	}
	tries, checks := 4, int64(1<<28)
	if s := os.Getenv("HEARTH_TREE_CHECKS"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		checks = n
	}
	if s := os.Getenv("HEARTH_TREE_TRIES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		tries = n
	}
	for _, file := range strings.Split(files, ",") {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		p, err := wcsp.Read(f, file)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		var cands []treeCandidate
		newAOBB(lp, AOBBOptions{}, func(nv, nb int, doms []int, scopes [][]int, interior []int) []*pseudoTree {
			t0 := time.Now()
			for _, r := range []orderRule{ruleMinFill, ruleMinDegree, ruleMinWeight, ruleWeightedFill} {
				cands = append(cands, pseudoTreeCandidates(nv, nb, doms, scopes, interior, r, tries)...)
			}
			t.Logf("%s: %d candidates in %v", file, len(cands), time.Since(t0))
			return []*pseudoTree{cands[0].pt}
		})
		if os.Getenv("HEARTH_TREE_RACE") != "" {
			// Each candidate first, the usual others after it.
			for k := range cands {
				c := cands[k]
				s := newAOBB(lp, AOBBOptions{}, func(nv, nb int, doms []int, scopes [][]int, interior []int) []*pseudoTree {
					return append([]*pseudoTree{c.pt}, raceTrees(nv, doms, scopes, interior, bestPseudoTree(nv, nb, scopes, interior))...)
				})
				ctx, cancel := context.WithTimeout(context.Background(), limit)
				cpu0 := cputime.Used()
				cost, err := s.SolveRow(ctx, nil, make([]int, len(lp.Vars)))
				cancel()
				if err != nil {
					t.Logf("%-14s seed %d first: %v", c.rule, c.seed, err)
					continue
				}
				t.Logf("%-14s seed %d first: race solved %v cpu %.3fs checks %.3g", c.rule, c.seed, cost, float64(cputime.Used()-cpu0)/1e9, float64(s.Checks()))
			}
			continue
		}
		for k := range cands {
			c := cands[k]
			s := newAOBB(lp, AOBBOptions{}, func(int, int, []int, [][]int, []int) []*pseudoTree { return []*pseudoTree{c.pt} })
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			in := make([]int, len(lp.Vars))
			cpu0 := cputime.Used()
			cost, _, done, err := s.SolveRowWithin(ctx, nil, in, math.Inf(1), checks)
			cancel()
			cpu := time.Duration(cputime.Used() - cpu0)
			res := "solved"
			switch {
			case errors.Is(err, context.DeadlineExceeded):
				res, cost = "timeout", math.NaN()
			case err != nil:
				t.Fatal(err)
			case !done:
				res, cost = "past checks", math.NaN()
			}
			t.Logf("%-14s seed %d: width %2d height %3d log10space %5.2f ibound %2d: %s %v cpu %.3fs checks %.3g",
				c.rule, c.seed, c.pt.width, c.pt.height(), math.Log10(c.pt.space(lp.Domains)), s.IBound(), res, cost, cpu.Seconds(), float64(s.Checks()))
		}
	}
}
