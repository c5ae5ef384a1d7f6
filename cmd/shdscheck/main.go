// Command shdscheck checks `hearth sim --shds FILE --json` output against
// the SHDS instance with the independent checker of internal/shdscheck,
// for hearth's plan and for both baselines, and prints what it recomputed.
//
//	hearth sim --shds dm_7_1_2.json --json > out.json
//	go run ./cmd/shdscheck dm_7_1_2.json out.json
//
// The dictionary is DeviceDictionary.json beside the instance unless
// -dict names one. The exit status is 1 when any plan disagrees with the
// recomputation, 2 on bad input.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hearth-dcop/hearth/internal/shdscheck"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("shdscheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dictPath := fs.String("dict", "", "DeviceDictionary.json (default: beside the instance)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: shdscheck [-dict FILE] INSTANCE.json HEARTH-OUTPUT.json")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return 2
	}
	inst, err := shdscheck.ReadInstance(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if *dictPath == "" {
		*dictPath = filepath.Join(filepath.Dir(fs.Arg(0)), "DeviceDictionary.json")
	}
	dict, err := shdscheck.ReadDictionary(*dictPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	out, err := shdscheck.ReadOutput(fs.Arg(1))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	plans := []struct {
		name string
		p    *shdscheck.Plan
	}{{"hearth", out.Coordinated()}, {"uncoordinated", out.Baselines.Uncoordinated}, {"shmgm", out.Baselines.SHMGM}}
	code := 0
	for _, pl := range plans {
		if pl.p == nil {
			fmt.Fprintf(stdout, "%s: not in the output\n", pl.name)
			continue
		}
		if len(pl.p.Schedules) == 0 {
			fmt.Fprintf(stdout, "%s: no schedules in the output; only its reported load can be scored\n", pl.name)
			continue
		}
		r, err := shdscheck.Check(inst, dict, pl.p)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		fmt.Fprintf(stdout, "%s: homes %d (dropped %d), rules %d held of %d listed (%d counted kept, %d dropped), values %d, peak %.1f kW, bill $%.3f ($%.3f at whole cents), real objective %.0f",
			pl.name, r.Homes, len(r.DroppedHomes), r.Held, r.Rules, r.Claimed, r.DroppedRules, r.Values, r.Peak, r.Bill, r.BillCents, r.RealObjective)
		if r.HasLevels {
			fmt.Fprintf(stdout, ", committed-level objective %d, max slack %.1f kW", r.LevelObjective, r.MaxSlack)
		}
		if pl.p.Objective != nil {
			fmt.Fprintf(stdout, ", reported objective %.0f (%s)", *pl.p.Objective, r.Matched)
		}
		if pl.name == "shmgm" {
			fmt.Fprintf(stdout, ", rounds %d, converged %v", pl.p.Rounds, pl.p.Converged)
		}
		fmt.Fprintln(stdout)
		for _, f := range r.Findings {
			fmt.Fprintf(stdout, "  finding: %s\n", f)
		}
		for _, p := range r.Problems {
			fmt.Fprintf(stdout, "  PROBLEM: %s\n", p)
		}
		if len(r.Problems) > 0 {
			code = 1
		}
	}
	return code
}
