package main

import (
	"context"
	"fmt"
	"os"

	"github.com/hearth-dcop/hearth/devices/shds/street"
)

// genStreetKind is the `hearth gen` kind that samples SHDS homes into a
// street file rather than generating a DCOP.
const genStreetKind = "shds-street"

// defaultSHDSDir is where the street generator looks for the Des Moines
// files unless --from or HEARTH_SHDS_DATA says otherwise: the shared data
// beside the repository.
const defaultSHDSDir = "../shared/data/shds"

func runGenStreet(_ context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "gen "+genStreetKind, "--homes N [--feeder K] [--seed S] [-o FILE.json] [--from DIR] [--match GLOB] [SOURCE.json ...]\n\n"+
		"Samples homes of SHDS instance files (default: dm_*.json in --from) into one street of N homes,\n"+
		"a complete graph as the published files are (or, with --feeder K, feeders of K homes), written as an SHDS file that 'hearth sim --shds' reads.")
	homes := fs.Int("homes", 0, "number of homes of the street")
	feeder := fs.Int("feeder", 0, "homes per feeder: each home's neighbours are the other homes of its feeder (consecutive homes, the last feeder may be shorter); 0: one feeder, a complete graph")
	seed := fs.Uint64("seed", 1, "random seed: the same seed and sources give the same file")
	out := fs.String("o", "", "output file (default: standard output)")
	fromDefault := os.Getenv("HEARTH_SHDS_DATA")
	if fromDefault == "" {
		fromDefault = defaultSHDSDir
	}
	from := fs.String("from", fromDefault, "directory of SHDS instance files (default from HEARTH_SHDS_DATA when set)")
	match := fs.String("match", "dm_*.json", "which files of --from to sample")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	var srcs []*street.Source
	if len(pos) > 0 {
		for _, p := range pos {
			s, err := street.ReadSource(p)
			if err != nil {
				fmt.Fprintf(e.stderr, "hearth gen %s: %v\n", genStreetKind, err)
				return exitUsage
			}
			srcs = append(srcs, s)
		}
	} else if srcs, err = street.Sources(*from, *match); err != nil {
		fmt.Fprintf(e.stderr, "hearth gen %s: %v (give --from DIR or source files)\n", genStreetKind, err)
		return exitUsage
	}
	b, err := street.GenerateFeeders(srcs, *homes, *feeder, *seed)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth gen %s: %v\n", genStreetKind, err)
		return exitUsage
	}
	if *out == "" {
		if _, err := e.stdout.Write(b); err != nil {
			fmt.Fprintf(e.stderr, "hearth gen %s: %v\n", genStreetKind, err)
			return exitFailed
		}
		return exitOK
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintf(e.stderr, "hearth gen %s: %v\n", genStreetKind, err)
		return exitFailed
	}
	fmt.Fprintf(e.stderr, "wrote %s: %d homes sampled from %d SHDS files\n", *out, *homes, len(srcs))
	return exitOK
}
