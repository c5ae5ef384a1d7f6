package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/hearth-dcop/hearth/mva/format"
	"github.com/hearth-dcop/hearth/mva/gen"
)

func runGen(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "gen", "KIND [name=value ...] [flags]\n\n"+genKinds())
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same instance")
	out := fs.String("o", "", "output file; the extension picks the format (.xml XCSP with agents, .wcsp, .uai, .yaml); default: XCSP on standard output")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) == 0 {
		fmt.Fprintln(e.stderr, "hearth gen: want a KIND")
		fs.Usage()
		return exitUsage
	}
	params := map[string]string{}
	for _, kv := range pos[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			fmt.Fprintf(e.stderr, "hearth gen: parameter %q is not name=value\n", kv)
			return exitUsage
		}
		params[k] = v
	}
	p, err := gen.Generate(pos[0], *seed, params)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth gen: %v\n", err)
		return exitUsage
	}
	if *out == "" {
		if err := format.Write(e.stdout, p, format.XCSP); err != nil {
			fmt.Fprintf(e.stderr, "hearth gen: %v\n", err)
			return exitFailed
		}
		return exitOK
	}
	if err := format.WriteFile(*out, p); err != nil {
		fmt.Fprintf(e.stderr, "hearth gen: %v\n", err)
		return exitFailed
	}
	st := p.Stats()
	fmt.Fprintf(e.stderr, "wrote %s: %d agents, %d variables, %d functions\n", *out, st.Agents, st.Variables, st.Functions)
	return exitOK
}

// genKinds lists every generator with its parameters and defaults, for the
// usage text.
func genKinds() string {
	var b strings.Builder
	b.WriteString("Kinds and their parameters (name=default):\n")
	for _, k := range gen.Kinds() {
		ps, err := gen.Params(k)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "  %s\n", k)
		for _, p := range ps {
			fmt.Fprintf(&b, "      %-12s %s\n", p.Name+"="+p.Default, p.Doc)
		}
	}
	return b.String()
}
