package mva

import "fmt"

// ParseError locates a problem in an input file. Every instance reader
// returns one for malformed input, so the command line can print the
// compiler-style "file:line: what is wrong" that editors understand.
type ParseError struct {
	File string
	// Line is 1-based; 0 means the error concerns the file as a whole.
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	switch {
	case e.File == "" && e.Line == 0:
		return e.Msg
	case e.Line == 0:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.File == "":
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Errorf builds a ParseError.
func Errorf(file string, line int, format string, args ...any) error {
	return &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}
