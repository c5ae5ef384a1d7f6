package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

// runVersion prints the module version and the VCS revision the binary
// was built from, as the Go toolchain records them (runtime/debug).
func runVersion(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "version", "")
	if _, err := parseArgs(fs, args); err != nil {
		return flagExit(err)
	}
	bi, ok := debug.ReadBuildInfo()
	fmt.Fprintln(e.stdout, versionLine(bi, ok))
	return exitOK
}

// versionLine formats build information: "hearth VERSION (revision
// REV[, modified], TIME) GOVERSION". A binary built from a checkout
// (go build, go run) has version (devel) and the revision; one installed
// with go install MODULE@vX has the version and no revision.
func versionLine(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "hearth (unknown version: built without module information)"
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var rev, when string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	var b strings.Builder
	b.WriteString("hearth " + version)
	if rev != "" {
		b.WriteString(" (revision " + rev)
		if modified {
			b.WriteString(", modified")
		}
		if when != "" {
			b.WriteString(", " + when)
		}
		b.WriteString(")")
	}
	if bi.GoVersion != "" {
		b.WriteString(" " + bi.GoVersion)
	}
	return b.String()
}
