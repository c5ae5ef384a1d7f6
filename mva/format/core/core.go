// Package core reads the instance formats that need no YAML parser — XCSP,
// WCSP and UAI — choosing the codec from the file name, and finishes every
// problem the same way (the --agents repartition, the default name, the
// model's validation). Package format adds pyDCOP's YAML and the writers
// on top of it.
//
// It is apart so that a binary that reads only these formats links no
// yaml.v3: cmd/hearth-solve, whose whole point is a short process start,
// where yaml.v3 and pyDCOP's reader cost 0.3–0.6 ms of CPU and ~40 page
// faults a process (docs/DESIGN.md, "hearth-solve").
package core

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format/uai"
	"github.com/hearth-dcop/hearth/mva/format/wcsp"
	"github.com/hearth-dcop/hearth/mva/format/xcsp"
)

// Kind is an instance format.
type Kind string

// The formats this package reads (package format adds PyDCOP).
const (
	XCSP Kind = "xcsp" // XCSP 2.1, FRODO dialect: .xml, .xcsp
	WCSP Kind = "wcsp" // toulbar2 cost function format: .wcsp
	UAI  Kind = "uai"  // UAI Markov networks: .uai
)

// MaxFileBytes bounds what ReadFile loads, so that a wrong path (a disk
// image, say) fails fast instead of exhausting memory.
const MaxFileBytes = 1 << 30

// KindOf picks the format from a file name's extension; ok is false for
// an extension this package does not read.
func KindOf(name string) (kind Kind, ok bool) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".xml", ".xcsp":
		return XCSP, true
	case ".wcsp":
		return WCSP, true
	case ".uai":
		return UAI, true
	}
	return "", false
}

// Options adjust what a reader returns.
type Options struct {
	// Agents, when positive, repartitions the variables into that many
	// agents with mva.Partition, replacing the file's own agents. Formats
	// without agents otherwise give every variable to one agent.
	Agents int
}

// Read decodes an instance of the given kind; name is used in errors.
func Read(r io.Reader, name string, kind Kind, o Options) (*mva.Problem, error) {
	var (
		p   *mva.Problem
		err error
	)
	switch kind {
	case XCSP:
		p, err = xcsp.Read(r, name)
	case WCSP:
		p, err = wcsp.Read(r, name)
	case UAI:
		p, err = uai.Read(r, name)
	default:
		return nil, fmt.Errorf("%s: unknown instance format %q", name, kind)
	}
	if err != nil {
		return nil, err
	}
	// The three readers validate what they return (xcsp.Read, wcsp.Read
	// and uai.Read end with Validate), so only a partition calls for
	// another check: a second Validate was 0.2M instructions of reading
	// a 20×20 grid's file (a map of the variables' names and every
	// table), about 1% of `hearth solve`'s.
	return finish(p, name, o, o.Agents > 0)
}

// Finish applies o to a decoded problem, names it after the file when the
// file gave it no name, and validates it: what every reader, package
// format's pyDCOP one included, does after decoding.
func Finish(p *mva.Problem, name string, o Options) (*mva.Problem, error) {
	return finish(p, name, o, true)
}

// finish is Finish, validating only when validate is set.
func finish(p *mva.Problem, name string, o Options, validate bool) (*mva.Problem, error) {
	if o.Agents > 0 {
		if err := mva.Partition(p, o.Agents); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	if !validate {
		return p, nil
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// ReadFile reads an instance in one of this package's formats, chosen from
// the extension.
func ReadFile(path string, o Options) (*mva.Problem, error) {
	kind, ok := KindOf(path)
	if !ok {
		return nil, fmt.Errorf("%s: unknown instance format (want .xml/.xcsp, .wcsp or .uai)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(io.LimitReader(f, MaxFileBytes), path, kind, o)
}
