package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format"
)

func runInspect(ctx context.Context, e *env, args []string) int {
	var hf homeFlags
	fs := newFlagSet(e, "inspect", "FILE [flags]\n\n"+
		"Prints the MVA decomposition of FILE — an instance, or a neighbourhood .toml or\n"+
		"--shds FILE.json, one agent per home.")
	agents := fs.Int("agents", 0, "repartition the variables into N agents (formats without agents default to one)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	hf.register(fs, false)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	path, isHomes, ok := hf.file(pos)
	if !ok {
		fmt.Fprintln(e.stderr, "hearth inspect: want exactly one instance FILE (an instance, a neighbourhood .toml, or --shds FILE.json)")
		fs.Usage()
		return exitUsage
	}
	var p *mva.Problem
	if isHomes {
		r, err := homesolve.Load(path, hf.shds != "", homesolve.Overrides{})
		if err != nil {
			return loadExit(e.stderr, "inspect", err)
		}
		p = r.Problem()
	} else if p, err = format.ReadFile(path, format.Options{Agents: *agents}); err != nil {
		fmt.Fprintln(e.stderr, err)
		return exitUsage
	}
	rep := mva.Inspect(p)
	rep.Instance = path
	if *asJSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", b)
		return exitOK
	}
	printInspect(e.stdout, rep)
	return exitOK
}

func printInspect(w io.Writer, r mva.Inspection) {
	fmt.Fprintf(w, "instance   %s (%s)\n", r.Instance, r.Sense)
	fmt.Fprintf(w, "problem    %d variables, %d functions (max arity %d), %d between agents, min-fill induced width %d\n",
		r.Variables, r.Functions, r.MaxArity, r.External, r.Width)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "agent\t|L|\t|B|\t|L\\B|\tlocal f\texternal f\twidth\tdomains\tMVA rows\t")
	for _, a := range r.Agents {
		dom := fmt.Sprint(a.MinDomain)
		if a.MaxDomain != a.MinDomain {
			dom = fmt.Sprintf("%d..%d", a.MinDomain, a.MaxDomain)
		}
		rows := fmt.Sprint(a.Rows)
		if a.Rows < 0 {
			rows = "overflow"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", a.Agent, a.Local, a.Boundary, a.Interior, a.LocalFns, a.External, a.Width, dom, rows)
	}
	tw.Flush()
}
