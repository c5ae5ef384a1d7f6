// Package formattest holds the helpers that the tests of the file formats
// (mva/format/pydcop, uai, wcsp, xcsp) share: reading sample files, round
// trips through Write and Read, and the checks on parse errors that every
// reader's contract (mva.ParseError, file:line: message) asks for. Only
// tests import it.
package formattest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// Reader is a format's Read: it parses r, naming it file in errors.
type Reader func(r io.Reader, file string) (*mva.Problem, error)

// Writer is a format's Write.
type Writer func(w io.Writer, p *mva.Problem) error

// ReadFile reads testdata/name (relative to the test's package) with read
// and fails t if that fails.
func ReadFile(t testing.TB, read Reader, name string) *mva.Problem {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := read(f, name)
	if err != nil {
		t.Fatalf("Read(%s): %v", name, err)
	}
	return p
}

// RoundTrip writes p with write and reads it back with read under the
// file name file, failing t if either fails; it returns what was read and
// the bytes written.
func RoundTrip(t testing.TB, write Writer, read Reader, p *mva.Problem, file string) (*mva.Problem, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf, p); err != nil {
		t.Fatalf("Write: %v", err)
	}
	q, err := read(bytes.NewReader(buf.Bytes()), file)
	if err != nil {
		t.Fatalf("Read(Write(p)): %v\n%s", err, buf.Bytes())
	}
	return q, buf.Bytes()
}

// CheckParseError fails t unless err is an *mva.ParseError whose message
// starts with "file:line: " and contains msg.
func CheckParseError(t testing.TB, err error, file string, line int, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want line %d: %s", line, msg)
	}
	CheckParseErrorPrefix(t, err, fmt.Sprintf("%s:%d: ", file, line))
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("error %q, want %q in it", err, msg)
	}
}

// CheckParseErrorPrefix fails t unless err is an *mva.ParseError whose
// message starts with prefix.
func CheckParseErrorPrefix(t testing.TB, err error, prefix string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", prefix)
	}
	var pe *mva.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is a %T, want *mva.ParseError", err, err)
	}
	if !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("error\n%q\nwant prefix\n%q", err, prefix)
	}
}

// Parsed checks what a reader returned on arbitrary input, as a fuzz
// target must: either an *mva.ParseError (Parsed returns false: nothing
// more to check) or a problem that passes Validate (true). Any other error,
// or an invalid problem, fails t.
func Parsed(t testing.TB, p *mva.Problem, err error) bool {
	t.Helper()
	if err != nil {
		var pe *mva.ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("error %v is a %T, want *mva.ParseError", err, err)
		}
		return false
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("Read returned an invalid problem: %v", err)
	}
	return true
}

// AddFiles adds the bytes of each testdata/name to f's seed corpus,
// failing f if one cannot be read.
func AddFiles(f *testing.F, names ...string) {
	f.Helper()
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// Entry returns f's cost for the given value indices of its scope (mixed
// radix, last variable fastest: the order of mva.Function.Costs).
func Entry(p *mva.Problem, f *mva.Function, vals ...int) float64 {
	idx := 0
	for i, v := range f.Scope {
		idx = idx*p.DomainSize(v) + vals[i]
	}
	return f.Costs[idx]
}
