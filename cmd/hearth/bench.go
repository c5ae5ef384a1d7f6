package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/hearth-dcop/hearth/internal/bench"
	"github.com/hearth-dcop/hearth/internal/solve"
	"github.com/hearth-dcop/hearth/local/gpu"
)

// runBench is `hearth bench NAME`: it runs an experiment of package bench
// end to end and writes results.csv, summary.md and the plots into the
// output directory, printing the summary.
func runBench(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "bench", "NAME [flags]\n       hearth bench --list")
	list := fs.Bool("list", false, "list the experiments and exit")
	quick := fs.Bool("quick", false, "run the reduced version (seconds; what CI runs)")
	out := fs.String("o", "", "output directory (default ./bench-out/NAME)")
	seeds := fs.Int("seeds", 0, "instances per point (default: the experiment's)")
	timeout := fs.Duration("timeout", 0, "time limit of one run (default: the experiment's)")
	sweeps := fs.String("sweep", "", "run only these sweeps, comma-separated")
	delay := fs.Duration("delay", 0, "simulated latency of every message (e.g. 1ms), added to the simulated runtime")
	progress := fs.Bool("progress", false, "show the progress bar even when stderr is not a terminal")
	plots := fs.Bool("plots", true, "write PNG and SVG plots")
	data := fs.String("data", "", "folder of the data set files (shds: the SHDS dm_*.json files; default: data/shds, then devices/shds/testdata)")
	merge := fs.String("merge", "", "instead of running, merge these CSV files (comma-separated; later rows replace earlier ones of the same run) and write the summary and plots")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if *list {
		for _, x := range bench.Experiments() {
			fmt.Fprintf(e.stdout, "%-16s %s\n", x.Name, x.Summary)
		}
		return exitOK
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "hearth bench: want exactly one experiment NAME (hearth bench --list shows them)")
		fs.Usage()
		return exitUsage
	}
	x, err := bench.Lookup(pos[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth bench: %v\n", err)
		return exitUsage
	}
	if x.Unavailable != "" && *merge == "" {
		fmt.Fprintf(e.stderr, "hearth bench %s: %s\n", x.Name, x.Unavailable)
		return exitUsage
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("bench-out", x.Name)
	}
	var rows []bench.Row
	var runErr error
	if *merge != "" {
		if rows, err = bench.ReadFiles(strings.Split(*merge, ",")); err != nil {
			fmt.Fprintf(e.stderr, "hearth bench: %v\n", err)
			return exitUsage
		}
	} else {
		g := &solve.Bench{}
		defer g.Close()
		host := bench.Host()
		if gpu.Available() {
			if d, err := g.Device(); err == nil {
				host += ", GPU " + d.Name()
			}
		}
		o := bench.Options{Quick: *quick, Seeds: *seeds, Timeout: *timeout, Delay: *delay, Solve: g.Solve, Host: host, DataDir: *data}
		if *sweeps != "" {
			o.Sweeps = strings.Split(*sweeps, ",")
		}
		if *progress || isTerminal(e.stderr) {
			bar := newBar(e, x.Name)
			o.Progress = func(done, total int, what string) {
				bar.ChangeMax(total)
				bar.Describe(what)
				_ = bar.Set(done)
			}
			defer func() { _ = bar.Finish() }()
		}
		rows, runErr = bench.Run(ctx, x, o)
		if runErr != nil && rows == nil {
			fmt.Fprintf(e.stderr, "hearth bench: %v\n", runErr)
			if ctx.Err() != nil {
				return exitFailed // interrupted before the first run ended
			}
			return exitUsage // an unknown sweep, say
		}
	}
	sum, nplots, err := bench.WriteDir(dir, x, rows, *plots)
	e.stdout.Write(sum)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth bench %s: %v\n", x.Name, err)
		return exitFailed
	}
	fmt.Fprintf(e.stderr, "wrote %s: results.csv (%d runs), summary.md, %d plot files\n", dir, len(rows), nplots)
	if runErr != nil {
		fmt.Fprintf(e.stderr, "hearth bench %s: stopped: %v (the %d runs so far are in %s)\n", x.Name, runErr, len(rows), dir)
		return exitFailed
	}
	if err := bench.Check(rows); err != nil {
		fmt.Fprintf(e.stderr, "hearth bench %s: the results are inconsistent:\n%v\n", x.Name, err)
		return exitFailed
	}
	return exitOK
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newBar(e *env, name string) *progressbar.ProgressBar {
	return progressbar.NewOptions(-1,
		progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionSetDescription(name),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(e.stderr) }),
	)
}
