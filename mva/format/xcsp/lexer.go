package xcsp

import "unicode"

func isSpace(r rune) bool { return unicode.IsSpace(r) }

// isSep reports whether b separates words: XML white space, which is all
// the white space encoding/xml leaves in character data that matters here.
func isSep(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// lexer splits an element's text into words, tracking the line of each.
// With punct set, "|" and ":" are words of their own (relation tuples).
type lexer struct {
	t     *text
	punct bool
	pos   int
	seg   int // index of the segment holding pos
	line  int
}

func newLexer(t *text, punct bool) *lexer {
	l := &lexer{t: t, punct: punct}
	if len(t.segs) > 0 {
		l.line = t.segs[0].line
	}
	return l
}

// advance moves past the byte at pos.
func (l *lexer) advance() {
	if l.t.s[l.pos] == '\n' {
		l.line++
	}
	l.pos++
	for l.seg+1 < len(l.t.segs) && l.t.segs[l.seg+1].off <= l.pos {
		l.seg++
		l.line = l.t.segs[l.seg].line
	}
}

func (l *lexer) special(b byte) bool {
	return l.punct && (b == '|' || b == ':')
}

// next returns the next word and its line, or false at the end.
func (l *lexer) next() (string, int, bool) {
	s := l.t.s
	for l.pos < len(s) && isSep(s[l.pos]) {
		l.advance()
	}
	if l.pos >= len(s) {
		return "", l.line, false
	}
	start, line := l.pos, l.line
	if l.special(s[l.pos]) {
		l.advance()
		return s[start:l.pos], line, true
	}
	for l.pos < len(s) && !isSep(s[l.pos]) && !l.special(s[l.pos]) {
		l.advance()
	}
	return s[start:l.pos], line, true
}
