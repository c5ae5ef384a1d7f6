package formattest

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// fakeTB records whether a helper failed t; Fatal ends the goroutine as
// testing's does, so run calls the helper on a goroutine of its own.
type fakeTB struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.failed, f.msg = true, fmt.Sprintf(format, args...)
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit()
}

func (f *fakeTB) Fatal(args ...any) {
	f.failed, f.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}

// run calls fn with a fresh fakeTB and returns it once fn has returned or
// failed fatally.
func run(fn func(t testing.TB)) *fakeTB {
	f := &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

// textRead and textWrite are a toy format for the round-trip helpers:
// the problem's name and nothing else.
func textRead(r io.Reader, file string) (*mva.Problem, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(string(b), "bad") {
		return nil, &mva.ParseError{File: file, Line: 1, Msg: "bad name"}
	}
	return &mva.Problem{Name: string(b)}, nil
}

func textWrite(w io.Writer, p *mva.Problem) error {
	if p.Name == "unwritable" {
		return errors.New("cannot write")
	}
	_, err := io.WriteString(w, p.Name)
	return err
}

func TestCheckParseError(t *testing.T) {
	pe := &mva.ParseError{File: "t.x", Line: 3, Msg: "unexpected thing"}
	tests := []struct {
		name   string
		err    error
		file   string
		line   int
		msg    string
		failed bool
	}{
		{"match", pe, "t.x", 3, "unexpected", false},
		{"wrapped", fmt.Errorf("reading: %w", pe), "t.x", 3, "thing", true}, // the prefix is the wrapper's
		{"no error", nil, "t.x", 3, "unexpected", true},
		{"not a ParseError", errors.New("t.x:3: unexpected thing"), "t.x", 3, "unexpected", true},
		{"other line", pe, "t.x", 4, "unexpected", true},
		{"other file", pe, "u.x", 3, "unexpected", true},
		{"other message", pe, "t.x", 3, "expected a number", true},
	}
	for _, tc := range tests {
		f := run(func(t testing.TB) { CheckParseError(t, tc.err, tc.file, tc.line, tc.msg) })
		if f.failed != tc.failed {
			t.Errorf("%s: failed = %v (%s), want %v", tc.name, f.failed, f.msg, tc.failed)
		}
	}
}

func TestCheckParseErrorPrefix(t *testing.T) {
	pe := &mva.ParseError{File: "t.x", Line: 3, Msg: "unexpected thing"}
	tests := []struct {
		name   string
		err    error
		prefix string
		failed bool
	}{
		{"match", pe, "t.x:3: unexpected", false},
		{"whole message", pe, "t.x:3: unexpected thing", false},
		{"no error", nil, "t.x:3:", true},
		{"not a ParseError", errors.New("t.x:3: unexpected thing"), "t.x:3:", true},
		{"other prefix", pe, "t.x:4:", true},
	}
	for _, tc := range tests {
		f := run(func(t testing.TB) { CheckParseErrorPrefix(t, tc.err, tc.prefix) })
		if f.failed != tc.failed {
			t.Errorf("%s: failed = %v (%s), want %v", tc.name, f.failed, f.msg, tc.failed)
		}
	}
}

func TestParsed(t *testing.T) {
	valid := &mva.Problem{Agents: []mva.Agent{{Name: "a"}}, Variables: []mva.Variable{{Name: "x", Domain: []string{"0"}}}}
	invalid := &mva.Problem{Variables: []mva.Variable{{Name: "x", Domain: []string{"0"}, Agent: 2}}}
	tests := []struct {
		name   string
		p      *mva.Problem
		err    error
		want   bool
		failed bool
	}{
		{"valid", valid, nil, true, false},
		{"parse error", nil, &mva.ParseError{File: "f", Line: 1, Msg: "m"}, false, false},
		{"other error", nil, errors.New("disk"), false, true},
		{"invalid problem", invalid, nil, false, true},
	}
	for _, tc := range tests {
		var got bool
		f := run(func(t testing.TB) { got = Parsed(t, tc.p, tc.err) })
		if f.failed != tc.failed || (!tc.failed && got != tc.want) {
			t.Errorf("%s: Parsed = %v, failed = %v (%s); want %v, failed = %v", tc.name, got, f.failed, f.msg, tc.want, tc.failed)
		}
	}
}

func TestRoundTripAndReadFile(t *testing.T) {
	var q *mva.Problem
	var out []byte
	if f := run(func(t testing.TB) { q, out = RoundTrip(t, textWrite, textRead, &mva.Problem{Name: "abc"}, "rt") }); f.failed || q.Name != "abc" || string(out) != "abc" {
		t.Errorf("round trip: %+v %q, failed %v (%s)", q, out, f.failed, f.msg)
	}
	for _, name := range []string{"unwritable", "bad name"} {
		if f := run(func(t testing.TB) { RoundTrip(t, textWrite, textRead, &mva.Problem{Name: name}, "rt") }); !f.failed {
			t.Errorf("round trip of %q did not fail", name)
		}
	}
	var p *mva.Problem
	if f := run(func(t testing.TB) { p = ReadFile(t, textRead, "sample.txt") }); f.failed || p.Name != "sample-name" {
		t.Errorf("ReadFile: %+v, failed %v (%s)", p, f.failed, f.msg)
	}
	if f := run(func(t testing.TB) { ReadFile(t, textRead, "missing.txt") }); !f.failed {
		t.Error("ReadFile of a missing file did not fail")
	}
}

func TestEntry(t *testing.T) {
	p := &mva.Problem{Variables: []mva.Variable{{Domain: []string{"a", "b"}}, {Domain: []string{"a", "b", "c"}}}}
	f := &mva.Function{Scope: []int{1, 0}, Costs: []float64{0, 1, 2, 3, 4, 5}}
	// Scope (x1, x0): x1 = 2, x0 = 1 is index 2·2 + 1.
	if got := Entry(p, f, 2, 1); got != 5 {
		t.Errorf("Entry(2, 1) = %v, want 5", got)
	}
	if got := Entry(p, f, 1, 0); got != 2 {
		t.Errorf("Entry(1, 0) = %v, want 2", got)
	}
}
