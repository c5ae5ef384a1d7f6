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

// agentReport is one agent's line of `hearth inspect`.
type agentReport struct {
	Agent     string `json:"agent"`
	Local     int    `json:"local"`
	Boundary  int    `json:"boundary"`
	Interior  int    `json:"interior"`
	LocalFns  int    `json:"local_functions"`
	External  int    `json:"external_functions"`
	Width     int    `json:"induced_width"`
	MinDomain int    `json:"min_domain"`
	MaxDomain int    `json:"max_domain"`
	// Rows is the number of MVA table rows, -1 when it overflows.
	Rows int `json:"mva_rows"`
}

// inspectReport is the whole output of `hearth inspect --json`.
type inspectReport struct {
	Instance  string        `json:"instance"`
	Sense     string        `json:"sense"`
	Variables int           `json:"variables"`
	Functions int           `json:"functions"`
	External  int           `json:"external_functions"`
	MaxArity  int           `json:"max_arity"`
	Width     int           `json:"induced_width"`
	Agents    []agentReport `json:"agents"`
}

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
	rep := inspect(p)
	rep.Instance = path
	if *asJSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", b)
		return exitOK
	}
	printInspect(e.stdout, rep)
	return exitOK
}

// inspect computes the MVA decomposition figures of p. The induced width
// of an agent is that of a min-fill order eliminating its interior
// variables with the boundary kept, which is what an eager MVA table by
// bucket elimination costs; the problem's width eliminates everything.
func inspect(p *mva.Problem) inspectReport {
	st := p.Stats()
	d := mva.Decompose(p)
	all := make([]int, len(p.Variables))
	for i := range all {
		all[i] = i
	}
	_, width := p.PrimalGraph().MinFill(all)
	rep := inspectReport{
		Sense: p.Sense.String(), Variables: st.Variables, Functions: st.Functions,
		External: len(d.External), MaxArity: st.MaxArity, Width: width,
	}
	ext := make([]int, len(p.Agents))
	for _, fi := range d.External {
		seen := map[int]bool{}
		for _, v := range p.Functions[fi].Scope {
			a := p.Variables[v].Agent
			if !seen[a] {
				seen[a] = true
				ext[a]++
			}
		}
	}
	for i := range d.Subs {
		s := &d.Subs[i]
		lp := mva.NewLocalProblem(p, s)
		interior := make([]int, lp.NumInterior())
		for k := range interior {
			interior[k] = lp.NB + k
		}
		_, w := lp.PrimalGraph().MinFill(interior)
		ar := agentReport{
			Agent: p.Agents[i].Name, Local: len(s.Local), Boundary: len(s.Boundary), Interior: len(s.Interior),
			LocalFns: len(s.Functions), External: ext[i], Width: w, Rows: -1,
		}
		for k, dsz := range lp.Domains {
			if k == 0 || dsz < ar.MinDomain {
				ar.MinDomain = dsz
			}
			ar.MaxDomain = max(ar.MaxDomain, dsz)
		}
		if rows, err := lp.Rows(); err == nil {
			ar.Rows = rows
		}
		rep.Agents = append(rep.Agents, ar)
	}
	return rep
}

func printInspect(w io.Writer, r inspectReport) {
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
