package config

import "strconv"

// positions maps key paths to 1-based line numbers. A path joins keys with
// '.' and gives the index of an element of an array or of an array of
// tables in brackets: "horizon.slots", "homes[1]", "device[2].rules[0]".
//
// BurntSushi/toml keeps the position of every key, but only privately, and
// keyed by a path without array indices (so all [[device]] tables share
// one entry, holding the last one's line). Errors about the second device
// must name the second device's line, so the loader indexes the source
// itself with this small scanner. It runs only on text that toml has
// already parsed, and it never fails: on anything it does not expect it
// skips to the next line, and a key it could not place falls back to the
// line of its table.
type positions map[string]int

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

type scanner struct {
	s      []byte
	i      int
	line   int
	pos    positions
	counts map[string]int // array-of-tables path → tables seen
	table  string
	depth  int
}

// locate indexes a TOML document.
func locate(src []byte) positions {
	sc := &scanner{s: src, line: 1, pos: positions{}, counts: map[string]int{}}
	for sc.i < len(sc.s) {
		start := sc.i
		sc.statement()
		if sc.i == start {
			sc.skipLine()
		}
	}
	return sc.pos
}

func (sc *scanner) peek() byte {
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

func (sc *scanner) advance() {
	if sc.i < len(sc.s) {
		if sc.s[sc.i] == '\n' {
			sc.line++
		}
		sc.i++
	}
}

// space skips blanks; with newlines it also skips line ends and comments.
func (sc *scanner) space(newlines bool) {
	for sc.i < len(sc.s) {
		switch c := sc.s[sc.i]; {
		case c == ' ' || c == '\t' || c == '\r':
			sc.advance()
		case c == '#':
			for sc.i < len(sc.s) && sc.s[sc.i] != '\n' {
				sc.advance()
			}
		case c == '\n' && newlines:
			sc.advance()
		default:
			return
		}
	}
}

func (sc *scanner) skipLine() {
	for sc.i < len(sc.s) && sc.s[sc.i] != '\n' {
		sc.advance()
	}
	sc.advance()
}

func (sc *scanner) statement() {
	sc.space(true)
	switch sc.peek() {
	case 0:
		return
	case '[':
		sc.header()
	default:
		line := sc.line
		keys := sc.keys()
		if len(keys) == 0 {
			return
		}
		path := sc.table
		for _, k := range keys {
			path = join(path, k)
			if _, ok := sc.pos[path]; !ok {
				sc.pos[path] = line
			}
		}
		sc.space(false)
		if sc.peek() != '=' {
			return
		}
		sc.advance()
		sc.space(false)
		sc.value(path)
	}
	sc.space(false)
	if sc.peek() == '\n' {
		sc.advance()
	}
}

// header reads [a.b] or [[a.b]] and makes it the current table.
func (sc *scanner) header() {
	line := sc.line
	sc.advance()
	array := sc.peek() == '['
	if array {
		sc.advance()
	}
	sc.space(false)
	keys := sc.keys()
	if len(keys) == 0 {
		return
	}
	path := ""
	for j, k := range keys {
		path = join(path, k)
		if j == len(keys)-1 && array {
			n := sc.counts[path]
			sc.counts[path] = n + 1
			if _, ok := sc.pos[path]; !ok {
				sc.pos[path] = line
			}
			path = index(path, n)
		} else if n, ok := sc.counts[path]; ok {
			path = index(path, n-1)
		}
	}
	sc.pos[path] = line
	sc.table = path
	sc.skipLine()
}

// keys reads a dotted key.
func (sc *scanner) keys() []string {
	var out []string
	for {
		sc.space(false)
		k, ok := sc.key()
		if !ok {
			return out
		}
		out = append(out, k)
		sc.space(false)
		if sc.peek() != '.' {
			return out
		}
		sc.advance()
	}
}

func (sc *scanner) key() (string, bool) {
	switch c := sc.peek(); {
	case c == '"' || c == '\'':
		return sc.str(), true
	case isBare(c):
		start := sc.i
		for sc.i < len(sc.s) && isBare(sc.s[sc.i]) {
			sc.advance()
		}
		return string(sc.s[start:sc.i]), true
	}
	return "", false
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// str reads a basic, literal or multi-line string and returns its raw
// content (escapes are kept; only keys use the result).
func (sc *scanner) str() string {
	q := sc.peek()
	triple := sc.i+2 < len(sc.s) && sc.s[sc.i+1] == q && sc.s[sc.i+2] == q
	if triple {
		sc.advance()
		sc.advance()
		sc.advance()
	} else {
		sc.advance()
	}
	start := sc.i
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		switch {
		case c == '\\' && q == '"':
			sc.advance()
			sc.advance()
		case c == q && triple:
			if sc.i+2 < len(sc.s) && sc.s[sc.i+1] == q && sc.s[sc.i+2] == q {
				// Up to two more quotes may belong to the content.
				for sc.i+3 < len(sc.s) && sc.s[sc.i+3] == q {
					sc.advance()
				}
				end := sc.i
				sc.advance()
				sc.advance()
				sc.advance()
				return string(sc.s[start:end])
			}
			sc.advance()
		case c == q:
			end := sc.i
			sc.advance()
			return string(sc.s[start:end])
		case c == '\n' && !triple:
			return string(sc.s[start:sc.i])
		default:
			sc.advance()
		}
	}
	return string(sc.s[start:])
}

// value reads one value, recording the lines of array elements and inline
// table keys under path.
func (sc *scanner) value(path string) {
	if sc.depth > 64 {
		return
	}
	sc.depth++
	defer func() { sc.depth-- }()
	switch sc.peek() {
	case '"', '\'':
		sc.str()
	case '[':
		sc.advance()
		for j := 0; ; j++ {
			sc.space(true)
			switch sc.peek() {
			case ']':
				sc.advance()
				return
			case 0:
				return
			}
			sc.pos[index(path, j)] = sc.line
			start := sc.i
			sc.value(index(path, j))
			sc.space(true)
			if sc.peek() == ',' {
				sc.advance()
			} else if sc.peek() != ']' || sc.i == start {
				return
			}
		}
	case '{':
		sc.advance()
		for {
			sc.space(true)
			switch sc.peek() {
			case '}':
				sc.advance()
				return
			case 0:
				return
			}
			line := sc.line
			keys := sc.keys()
			if len(keys) == 0 {
				return
			}
			p := path
			for _, k := range keys {
				p = join(p, k)
				if _, ok := sc.pos[p]; !ok {
					sc.pos[p] = line
				}
			}
			sc.space(false)
			if sc.peek() != '=' {
				return
			}
			sc.advance()
			sc.space(false)
			sc.value(p)
			sc.space(true)
			if sc.peek() == ',' {
				sc.advance()
			}
		}
	default:
		for sc.i < len(sc.s) {
			switch sc.s[sc.i] {
			case ',', ']', '}', '\n', '#':
				return
			}
			sc.advance()
		}
	}
}
