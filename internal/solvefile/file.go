package solvefile

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format/core"
	"github.com/hearth-dcop/hearth/sampler"
)

// RegisterLocal declares the flags of the local solver on fs, --local
// defaulting to def ("be" for hearth's commands, whose protocols ask rows;
// `hearth solve --global none` and hearth-solve switch an unset --local to
// LocalAuto).
func RegisterLocal(fs *flag.FlagSet, o *Local, def string) {
	fs.StringVar(&o.Name, "local", def, "local solver: be (bucket elimination), dfbnb (depth-first branch and bound), aobb (AND/OR branch and bound), edac (branch and bound maintaining soft arc consistency), vac (edac with virtual arc consistency at the root), bruteforce, gibbs, mh (Metropolis-Hastings), auto (one row: be, edac or aobb, chosen per subproblem, the default of solve --global none; agents: be where its tables fit 2^16 entries, else gibbs)")
	fs.Int64Var(&o.Memory, "memory", 0, "memory budget of the exact local solvers in MiB (aobb's heuristics and caches, auto's choice); 0 means a quarter of physical memory")
	fs.IntVar(&o.Runs, "runs", sampler.DefaultRuns, "gibbs/mh: independent chains R per MVA row")
	fs.IntVar(&o.Trials, "trials", sampler.DefaultTrials, "gibbs/mh: samples T per chain (Gibbs sweeps or MH proposals)")
	fs.Float64Var(&o.Temperature, "temperature", 0, "gibbs/mh: temperature τ of exp(−cost/τ); 0: a tenth of each agent's cost scale (sampler.ScaleTemperature)")
	fs.StringVar(&o.Proposal, "proposal", sampler.ProposalNormal, "mh: proposal, normal (the DMCMC paper's) or discrete")
	fs.Float64Var(&o.Alpha, "alpha", 0.05, "gibbs/mh: the top fraction α the quality guarantee is reported for")
}

// RegisterRun declares the flags of a solve that are not the solver's:
// --agents, --seed, --timeout and --json.
func RegisterRun(fs *flag.FlagSet, agents *int, seed *uint64, timeout *time.Duration, asJSON *bool) {
	fs.IntVar(agents, "agents", 0, "repartition the variables into N agents (formats without agents default to one)")
	fs.Uint64Var(seed, "seed", 1, "random seed for sampling protocols and delivery order")
	fs.BoolVar(asJSON, "json", false, "print the result object as JSON")
	fs.DurationVar(timeout, "timeout", 0, "give up after this long (e.g. 30s; 0 means no limit)")
}

// ParseArgs parses flags that may come before or after the positional
// arguments (`hearth solve FILE --json` as well as `hearth solve --json
// FILE`), which the flag package alone does not allow.
func ParseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// Load reads the instance file at path in a format of mva/format/core
// (XCSP, WCSP, UAI: not pyDCOP's YAML, whose parser hearth-solve does not
// link), repartitioned into agents agents when agents > 0 (--agents).
func Load(path string, agents int) (*mva.Problem, error) {
	return core.ReadFile(path, core.Options{Agents: agents})
}

// Job is one solve of an instance file, as `hearth solve FILE` and
// hearth-solve run it once their flags are checked.
type Job struct {
	Cmd     string // the command, for messages: "hearth solve", "hearth-solve"
	Path    string // the instance file
	Agents  int    // --agents
	Memory  int64  // --memory in MiB, for the collector's limit (GC)
	Timeout time.Duration
	JSON    bool
	// Load reads the file; nil: Load (`hearth solve` passes
	// mva/format's reader, which adds pyDCOP).
	Load func(path string, agents int) (*mva.Problem, error)
	// Solve solves the loaded problem; nil: Central with Local and Seed
	// on the CPU (hearth-solve; `hearth solve` passes its protocols and
	// GPU).
	Solve func(ctx context.Context, p *mva.Problem) (mva.Result, error)
	Local Local
	Seed  uint64
}

// Run loads the file under GC's one-shot collector settings, solves it
// within Timeout, prints the result (text or JSON) on stdout or the error
// on stderr, and returns the exit code: ExitUsage for a file that does not
// load (the error names the file and, for a syntax error, the line),
// ExitFailed for a solve that fails or is stopped, else ResultExit.
func (j Job) Run(ctx context.Context, stdout, stderr io.Writer) int {
	defer GC(j.Memory)()
	load := j.Load
	if load == nil {
		load = Load
	}
	p, err := load(j.Path, j.Agents)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return ExitUsage
	}
	if j.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, j.Timeout)
		defer cancel()
	}
	solve := j.Solve
	if solve == nil {
		solve = func(ctx context.Context, p *mva.Problem) (mva.Result, error) {
			return Central(ctx, p, &j.Local, j.Seed, nil)
		}
	}
	res, err := solve(ctx, p)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %s: %v\n", j.Cmd, j.Path, err)
		return ExitFailed
	}
	res.Instance = j.Path
	if j.JSON {
		b, err := res.JSON()
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", j.Cmd, err)
			return ExitFailed
		}
		if _, err := stdout.Write(b); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", j.Cmd, err)
			return ExitFailed
		}
	} else {
		PrintSummary(stdout, p, res)
	}
	return ResultExit(res)
}
