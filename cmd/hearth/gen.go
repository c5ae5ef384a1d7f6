package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/hearth-dcop/hearth/mva/format"
	"github.com/hearth-dcop/hearth/mva/gen"
)

func runGen(ctx context.Context, e *env, args []string) int {
	if len(args) > 0 && args[0] == genStreetKind {
		return runGenStreet(ctx, e, args[1:])
	}
	fs := newFlagSet(e, "gen", "KIND [name=value | --name value ...] [flags]\n       hearth gen shds-street --homes N [--seed S] [-o FILE.json] (see hearth gen shds-street -h)\n\n"+genKinds())
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same instance")
	out := fs.String("o", "", "output file; the extension picks the format (.xml XCSP with agents, .wcsp, .uai, .yaml); default: XCSP on standard output")
	args, err := genParamFlags(args, fs)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth gen: %v\n", err)
		return exitUsage
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	// The kind is the first argument that is not name=value, so that
	// parameters given as flags may come before it.
	kind := ""
	var kvs []string
	for _, a := range pos {
		if kind == "" && !strings.Contains(a, "=") {
			kind = a
		} else {
			kvs = append(kvs, a)
		}
	}
	if kind == "" {
		fmt.Fprintln(e.stderr, "hearth gen: want a KIND")
		fs.Usage()
		return exitUsage
	}
	params := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			fmt.Fprintf(e.stderr, "hearth gen: parameter %q is not name=value: write, for instance, agents=5 or --agents 5 ('hearth gen -h' lists every kind's parameters)\n", kv)
			return exitUsage
		}
		params[k] = v
	}
	p, err := gen.Generate(kind, *seed, params)
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

// genParamFlags rewrites the generators' parameters given as flags,
// --name value or --name=value (one dash or two), into the name=value
// form, so that `hearth gen meeting --agents 5` works as `hearth gen
// meeting agents=5` does. A parameter whose default is true or false may
// stand alone (--plant means plant=true). The command's own flags (fs)
// and everything after "--" are left as they are.
func genParamFlags(args []string, fs *flag.FlagSet) ([]string, error) {
	params := map[string]bool{} // name → is a yes/no parameter
	for _, k := range gen.Kinds() {
		ps, err := gen.Params(k)
		if err != nil {
			continue
		}
		for _, p := range ps {
			params[p.Name] = p.Default == "true" || p.Default == "false"
		}
	}
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		isBool, known := params[name]
		if !strings.HasPrefix(a, "-") || !known || fs.Lookup(name) != nil {
			out = append(out, a)
			continue
		}
		switch {
		case hasValue:
		case isBool && (i+1 == len(args) || args[i+1] != "true" && args[i+1] != "false"):
			value = "true"
		case i+1 < len(args):
			i++
			value = args[i]
		default:
			return nil, fmt.Errorf("%s needs a value: write %s VALUE or %s=VALUE", a, a, name)
		}
		out = append(out, name+"="+value)
	}
	return out, nil
}

// genKinds lists every generator with its parameters and defaults, for the
// usage text.
func genKinds() string {
	var b strings.Builder
	b.WriteString("Kinds and their parameters (name=default), given as name=value, --name value or --name=value:\n")
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
