// Package format reads and writes instance files in every format hearth
// knows, choosing the codec from the file name, so that commands and tests
// need one call whatever the file is. The codecs themselves live in one
// sub-package each.
package format

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format/core"
	"github.com/hearth-dcop/hearth/mva/format/pydcop"
	"github.com/hearth-dcop/hearth/mva/format/uai"
	"github.com/hearth-dcop/hearth/mva/format/wcsp"
	"github.com/hearth-dcop/hearth/mva/format/xcsp"
)

// Kind is an instance format.
type Kind = core.Kind

// The formats hearth reads and writes: those of package core, which need
// no YAML parser, and pyDCOP's.
const (
	XCSP        = core.XCSP // XCSP 2.1, FRODO dialect: .xml, .xcsp
	WCSP        = core.WCSP // toulbar2 cost function format: .wcsp
	UAI         = core.UAI  // UAI Markov networks: .uai
	PyDCOP Kind = "pydcop"  // pyDCOP YAML: .yaml, .yml
)

// MaxFileBytes bounds what ReadFile loads, so that a wrong path (a disk
// image, say) fails fast instead of exhausting memory.
const MaxFileBytes = core.MaxFileBytes

// KindOf picks the format from a file name's extension.
func KindOf(name string) (Kind, error) {
	if kind, ok := core.KindOf(name); ok {
		return kind, nil
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		return PyDCOP, nil
	}
	return "", fmt.Errorf("%s: unknown instance format (want .xml/.xcsp, .wcsp, .uai or .yaml/.yml)", name)
}

// Options adjust what a reader returns (core.Options: Agents).
type Options = core.Options

// Read decodes an instance of the given kind; name is used in errors. A
// pyDCOP file whose constraints name source files needs ReadFile.
func Read(r io.Reader, name string, kind Kind, o Options) (*mva.Problem, error) {
	return read(r, name, kind, o, nil)
}

// read is Read with open to read the source files of pyDCOP constraints.
func read(r io.Reader, name string, kind Kind, o Options, open pydcop.Opener) (*mva.Problem, error) {
	if kind != PyDCOP {
		return core.Read(r, name, kind, o)
	}
	p, err := pydcop.ReadSources(r, name, open)
	if err != nil {
		return nil, err
	}
	return core.Finish(p, name, o)
}

// ReadFile reads an instance, choosing the format from the extension. The
// source files of a pyDCOP file are read relative to its directory.
func ReadFile(path string, o Options) (*mva.Problem, error) {
	kind, err := KindOf(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(io.LimitReader(f, MaxFileBytes), path, kind, o, pydcop.SourceDir(filepath.Dir(path)))
}

// Write encodes p in the given format.
func Write(w io.Writer, p *mva.Problem, kind Kind) error {
	switch kind {
	case XCSP:
		return xcsp.Write(w, p)
	case WCSP:
		return wcsp.Write(w, p)
	case UAI:
		return uai.Write(w, p)
	case PyDCOP:
		return pydcop.Write(w, p)
	}
	return fmt.Errorf("unknown instance format %q", kind)
}

// WriteFile writes p to path in the format its extension names. Nothing is
// written when encoding fails.
func WriteFile(path string, p *mva.Problem) error {
	kind, err := KindOf(path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := Write(&buf, p, kind); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
