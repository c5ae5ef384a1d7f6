package wcsp

import (
	"fmt"
	"io"
	"strconv"

	"github.com/hearth-dcop/hearth/mva"
)

// maxExact is 2^53: integers of smaller magnitude are exact in a float64.
const maxExact = 1 << 53

// Read parses a wcsp file. file names the input in error messages.
// Malformed input yields an [mva.ParseError] carrying the line of the
// offending token; a failing reader yields its error, wrapped.
func Read(r io.Reader, file string) (*mva.Problem, error) {
	return read(r, file, defaultLimits())
}

func read(r io.Reader, file string, lim limits) (*mva.Problem, error) {
	p := &parser{
		file: file,
		lim:  lim,
		sc:   scanner{r: r, line: 1},
		prob: &mva.Problem{Agents: []mva.Agent{{Name: "a0"}}},
	}
	if err := p.parse(); err != nil {
		return nil, err
	}
	if err := p.prob.Validate(); err != nil {
		// The checks of the parser should make this unreachable.
		return nil, mva.Errorf(file, 0, "%v", err)
	}
	return p.prob, nil
}

// scanner splits its input into white-space separated tokens and counts
// lines. It reads the input in chunks of its own and hands out tokens as
// views of the chunk (bufio.Reader's ReadByte, a call a byte, was most
// of reading a 60×60 grid's file).
type scanner struct {
	r    io.Reader
	line int
	buf  []byte // a token that spans two chunks
	in   []byte // the chunk, in[pos:] not scanned yet
	pos  int
	err  error // the reader's error after the chunk
}

// scanChunk is the size of the scanner's chunks.
const scanChunk = 64 << 10

// fill reads the next chunk; false at the end of the input or on an
// error (s.err).
func (s *scanner) fill() bool {
	if s.err != nil {
		return false
	}
	if s.in == nil {
		s.in = make([]byte, scanChunk)
	}
	for range 100 {
		n, err := s.r.Read(s.in[:cap(s.in)])
		s.in, s.pos, s.err = s.in[:n], 0, err
		if n > 0 || err != nil {
			return n > 0
		}
	}
	s.err = io.ErrNoProgress
	return false
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// errTooLong reports a token longer than maxTokenSize.
type errTooLong struct{}

func (errTooLong) Error() string { return "token too long" }

// next returns the next token and its line; io.EOF at the end of the input.
func (s *scanner) next() (string, int, error) {
	b, line, err := s.nextBytes()
	return string(b), line, err
}

// spaceClass classifies a byte for nextBytes: 0 part of a token, 1 white
// space (isSpace), 2 a newline.
var spaceClass = func() (t [256]uint8) {
	for _, b := range []byte(" \t\r\v\f") {
		t[b] = 1
	}
	t['\n'] = 2
	return t
}()

// nextBytes is next with the token as bytes, valid until the next call:
// integers are parsed from them without a string each (a 40×40 grid's file
// holds 15000 tokens). The common case, a token inside the chunk, works on
// local copies of the chunk, position and line and classifies bytes by
// spaceClass: the fields through s and isSpace's six comparisons were
// reloaded and made for every byte.
func (s *scanner) nextBytes() ([]byte, int, error) {
	in, pos, line := s.in, s.pos, s.line
	// Skip white space.
	for {
		for pos < len(in) {
			c := spaceClass[in[pos]]
			if c == 0 {
				break
			}
			if c == 2 {
				line++
			}
			pos++
		}
		if pos < len(in) {
			break
		}
		s.line = line
		if !s.fill() {
			if s.err == io.EOF {
				return nil, s.line, io.EOF
			}
			return nil, s.line, s.err
		}
		in, pos = s.in, s.pos
	}
	start := pos
	for pos < len(in) && spaceClass[in[pos]] == 0 {
		pos++
	}
	if pos < len(in) || s.err == io.EOF {
		tok := in[start:pos]
		if len(tok) > maxTokenSize {
			s.pos, s.line = pos, line
			return nil, line, errTooLong{}
		}
		// Consume the white space byte that ended the token (end): a
		// newline counts after the token.
		tline := line
		if pos < len(in) {
			if in[pos] == '\n' {
				line++
			}
			pos++
		}
		s.pos, s.line = pos, line
		return tok, tline, nil
	}
	s.pos, s.line = pos, line
	// The token runs to the chunk's end: it goes on in the next one.
	s.buf = append(s.buf[:0], s.in[start:s.pos]...)
	for {
		if len(s.buf) > maxTokenSize {
			return nil, s.line, errTooLong{}
		}
		if !s.fill() {
			if s.err != io.EOF {
				return nil, s.line, s.err
			}
			return s.buf, s.line, nil
		}
		start := s.pos
		for s.pos < len(s.in) && !isSpace(s.in[s.pos]) {
			s.pos++
		}
		s.buf = append(s.buf, s.in[start:s.pos]...)
		if s.pos < len(s.in) {
			if len(s.buf) > maxTokenSize {
				return nil, s.line, errTooLong{}
			}
			return s.buf, s.end(), nil
		}
	}
}

// digits reads the next token when it is 1 to 18 decimal digits (no int64
// overflows) followed by white space inside the chunk, the usual token of
// a wcsp file, and returns its value and line; ok is false, and nothing
// consumed, for anything else (a sign, a token at the chunk's end, a
// long or malformed one), which nextBytes and strconv then read and judge.
// One pass over the bytes where nextBytes, tokenBytes and smallInt made
// three: a 20×20 grid's file has 13,000 tokens.
func (s *scanner) digits() (v int64, line int, ok bool) {
	in, pos, line := s.in, s.pos, s.line
	for pos < len(in) {
		c := spaceClass[in[pos]]
		if c == 0 {
			break
		}
		line += int(c >> 1) // a newline
		pos++
	}
	// A single digit and its white space, the commonest token (a
	// tuple's values, arities, most tuple counts), without the loop.
	if pos+1 < len(in) {
		if d := in[pos] - '0'; d <= 9 {
			if c := spaceClass[in[pos+1]]; c != 0 {
				s.pos, s.line = pos+2, line+int(c>>1)
				return int64(d), line, true
			}
		}
	}
	start := pos
	for pos < len(in) {
		d := in[pos] - '0'
		if d > 9 {
			break
		}
		v = v*10 + int64(d)
		pos++
	}
	if n := pos - start; n == 0 || n > 18 || pos == len(in) {
		return 0, 0, false
	}
	c := spaceClass[in[pos]]
	if c == 0 {
		return 0, 0, false
	}
	// The white space byte that ended the token is consumed, as
	// nextBytes does: a newline counts after the token.
	s.pos, s.line = pos+1, line+int(c>>1)
	return v, line, true
}

// end consumes the white space byte that ended a token, if any, and
// returns the token's line: a newline counts after the token.
func (s *scanner) end() int {
	line := s.line
	if s.pos < len(s.in) {
		if s.in[s.pos] == '\n' {
			s.line++
		}
		s.pos++
	}
	return line
}

type parser struct {
	file string
	lim  limits
	sc   scanner
	prob *mva.Problem

	ub     int64
	doms   []int // domain size of each variable
	shared []shared
	total  int // table entries so far
	nfun   int // functions read so far, constants included
	last   int // line of the last token, for errors at the end of input
	// intSlab and floatSlab are what is left of the slabs that carve
	// cuts scopes and tables from.
	intSlab   []int
	floatSlab []float64
}

// shared is a table defined with a negative arity, for later reuse.
type shared struct {
	doms  []int
	costs []float64
	line  int
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return mva.Errorf(p.file, line, format, args...)
}

// token returns the next token; describe says what was expected, for the
// error at the end of the input (it is called only on failure, so that
// reading a big file formats no messages).
func (p *parser) token(describe func() string) (string, int, error) {
	tok, line, err := p.tokenBytes(describe)
	return string(tok), line, err
}

// tokenBytes is token with the token as bytes (scanner.nextBytes).
func (p *parser) tokenBytes(describe func() string) ([]byte, int, error) {
	tok, line, err := p.sc.nextBytes()
	if err == nil {
		p.last = line
		return tok, line, nil
	}
	if _, ok := err.(errTooLong); ok {
		return nil, line, p.errorf(line, "%s: token longer than %d bytes", describe(), maxTokenSize)
	}
	if err == io.EOF {
		// Point at the last token: the line after it may not exist.
		return nil, line, p.errorf(max(p.last, 1), "unexpected end of file: want %s", describe())
	}
	return nil, line, fmt.Errorf("reading %s: %w", p.file, err)
}

// integer reads an integer token.
func (p *parser) integer(describe func() string) (int64, int, error) {
	if v, line, ok := p.sc.digits(); ok {
		p.last = line
		return v, line, nil
	}
	tok, line, err := p.tokenBytes(describe)
	if err != nil {
		return 0, line, err
	}
	if v, ok := smallInt(tok); ok {
		return v, line, nil
	}
	v, err := strconv.ParseInt(string(tok), 10, 64)
	if err != nil {
		return 0, line, p.errorf(line, "%s: %q is not an integer", describe(), tok)
	}
	return v, line, nil
}

// smallInt parses b when it is an optional minus sign and 1 to 18 decimal
// digits, which no int64 overflows; anything else is left to
// strconv.ParseInt, which decides and words the errors.
func smallInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

func text(s string) func() string { return func() string { return s } }

// count reads an integer in [0, limit].
func (p *parser) count(what string, limit int64) (int, int, error) {
	v, line, err := p.integer(text(what))
	if err != nil {
		return 0, line, err
	}
	if v < 0 || v > limit {
		return 0, line, p.errorf(line, "%s: %d is not between 0 and %d", what, v, limit)
	}
	return int(v), line, nil
}

// cost reads a cost and maps it to the model: Hard at or above ub.
func (p *parser) cost(describe func() string) (float64, int, error) {
	c, line, err := p.integer(describe)
	if err != nil {
		return 0, line, err
	}
	return p.internal(c, line)
}

func (p *parser) internal(c int64, line int) (float64, int, error) {
	switch {
	case c >= p.ub:
		return mva.Hard, line, nil
	case c < 0:
		return 0, line, p.errorf(line, "negative cost %d (wcsp costs are non-negative)", c)
	case c >= maxExact:
		return 0, line, p.errorf(line, "cost %d is too large to be exact in a float64 (it must be below 2^53)", c)
	}
	return float64(c), line, nil
}

func (p *parser) parse() error {
	name, _, err := p.token(text("the problem name"))
	if err != nil {
		return err
	}
	p.prob.Name = name
	nvars, _, err := p.count("the number of variables", 1<<31-1)
	if err != nil {
		return err
	}
	maxDom, _, err := p.count("the maximum domain size", 1<<31-1)
	if err != nil {
		return err
	}
	nfun, _, err := p.count("the number of cost functions", 1<<62)
	if err != nil {
		return err
	}
	ub, line, err := p.integer(text("the upper bound"))
	if err != nil {
		return err
	}
	if ub <= 0 {
		return p.errorf(line, "the upper bound %d is not positive", ub)
	}
	p.ub = ub

	// Domain sizes, appended as they come: nvars is not trusted to
	// allocate.
	largest := 0
	for i := 0; i < nvars; i++ {
		what := func() string { return fmt.Sprintf("the domain size of variable %d", i) }
		d, line, err := p.integer(what)
		if err != nil {
			return err
		}
		switch {
		case d < 0:
			return p.errorf(line, "%s is %d: interval domains (negative sizes) are not supported", what(), d)
		case d == 0:
			return p.errorf(line, "%s is 0: a domain must have a value", what())
		case d > int64(maxDom):
			return p.errorf(line, "%s is %d, more than the maximum %d of the header", what(), d, maxDom)
		case d > int64(p.lim.domain):
			return p.errorf(line, "%s is %d, more than the %d values this reader accepts", what(), d, p.lim.domain)
		}
		p.doms = append(p.doms, int(d))
		largest = max(largest, int(d))
	}
	// All variables share one slice of labels (capacity capped, so an
	// append copies).
	labels := make([]string, largest)
	for i := range labels {
		labels[i] = strconv.Itoa(i)
	}
	p.prob.Variables = make([]mva.Variable, len(p.doms))
	names := indexNames("x", len(p.doms))
	for i, d := range p.doms {
		p.prob.Variables[i] = mva.Variable{Name: names(i), Domain: labels[:d:d]}
	}

	// Room for the functions the header announces, up to maxPresize
	// (it is not trusted to allocate more): growing the list by
	// doubling copied a 60×60 grid's 7080 functions, pointers and all,
	// about twice.
	p.prob.Functions = make([]mva.Function, 0, min(nfun, maxPresize))
	for p.nfun = 0; p.nfun < nfun; p.nfun++ {
		if err := p.function(); err != nil {
			return err
		}
	}
	names = indexNames("f", len(p.prob.Functions))
	for i := range p.prob.Functions {
		p.prob.Functions[i].Name = names(i)
	}
	tok, line, err := p.sc.next()
	switch {
	case err == nil:
		return p.errorf(line, "unexpected %q after the last of the %d cost functions", tok, nfun)
	case err != io.EOF:
		if _, ok := err.(errTooLong); ok {
			return p.errorf(line, "unexpected long token after the last of the %d cost functions", nfun)
		}
		return fmt.Errorf("reading %s: %w", p.file, err)
	}
	return nil
}

// defaultCost reads the default cost of a function of arity arity where
// scanner.digits declined it: "-1" (a function in intension, refused), a
// signed or long integer, or an error.
func (p *parser) defaultCost(arity int) (int64, int, error) {
	deftok, defline, err := p.tokenBytes(func() string { return p.fn() + ": the default cost" })
	if err != nil {
		return 0, defline, err
	}
	if arity > 0 && string(deftok) == "-1" {
		kw, kline, err := p.token(func() string { return p.fn() + ": the keyword of a cost function in intension" })
		if err != nil {
			return 0, kline, err
		}
		return 0, kline, p.errorf(kline, "%s: cost functions in intension and global cost functions (keyword %q) are not supported", p.fn(), kw)
	}
	def64, ok := smallInt(deftok)
	if !ok {
		def64, err = strconv.ParseInt(string(deftok), 10, 64)
	}
	if err != nil {
		return 0, defline, p.errorf(defline, "%s: the default cost %q is not an integer", p.fn(), deftok)
	}
	return def64, defline, nil
}

// fn names the function being read, for errors (made only for one: a
// 40×40 grid's file has 3120 functions).
func (p *parser) fn() string { return "cost function " + strconv.Itoa(p.nfun) }

// function reads one cost function.
func (p *parser) function() error {
	// Plain numbers through digits first, as the tuples below.
	arity64, line, ok := p.sc.digits()
	var err error
	if ok {
		p.last = line
	} else if arity64, line, err = p.integer(func() string { return p.fn() + ": the arity" }); err != nil {
		return err
	}
	share := arity64 < 0
	if share {
		arity64 = -arity64
	}
	if arity64 > int64(len(p.doms)) || arity64 < 0 {
		return p.errorf(line, "%s: arity %d exceeds the %d variables", p.fn(), arity64, len(p.doms))
	}
	arity := int(arity64)
	if share && arity == 0 {
		return p.errorf(line, "%s: a shared cost function needs a scope", p.fn())
	}
	scope := carve(&p.intSlab, arity)
	for i := range scope {
		v, vline, ok := p.sc.digits()
		if ok {
			p.last = vline
		} else if v, vline, err = p.integer(func() string { return fmt.Sprintf("%s: variable %d of the scope", p.fn(), i) }); err != nil {
			return err
		}
		if v < 0 || v >= int64(len(p.doms)) {
			return p.errorf(vline, "%s: variable index %d is not between 0 and %d", p.fn(), v, len(p.doms)-1)
		}
		for _, w := range scope[:i] {
			if w == int(v) {
				return p.errorf(vline, "%s: variable %d appears twice in the scope", p.fn(), v)
			}
		}
		scope[i] = int(v)
	}

	def64, defline, ok := p.sc.digits()
	if ok {
		p.last = defline
	} else if def64, defline, err = p.defaultCost(arity); err != nil {
		return err
	}
	def, _, err := p.internal(def64, defline)
	if err != nil {
		return err
	}
	ntuples, tline, ok := p.sc.digits()
	if ok {
		p.last = tline
	} else if ntuples, tline, err = p.integer(func() string { return p.fn() + ": the number of tuples" }); err != nil {
		return err
	}

	if arity == 0 {
		return p.constant(p.fn(), def, ntuples, tline)
	}
	if ntuples < 0 {
		if share {
			return p.errorf(tline, "%s: a shared cost function must list its tuples, not reuse table %d", p.fn(), -ntuples)
		}
		return p.reuse(p.fn(), scope, -ntuples, tline)
	}

	size := 1
	for _, v := range scope {
		d := p.doms[v]
		if size > p.lim.table/d {
			return p.errorf(line, "%s: its table would have more than %d entries", p.fn(), p.lim.table)
		}
		size *= d
	}
	if err := p.reserve(line, size); err != nil {
		return err
	}
	costs := carve(&p.floatSlab, size)
	for i := range costs {
		costs[i] = def
	}
	// The tuples take the scanner's plain numbers first (digits) and call
	// integer, with its description of the token, only where it declines:
	// building that description's closure and the call were a third of
	// reading a tuple.
	for t := int64(0); t < ntuples; t++ {
		idx := 0
		for j, v := range scope {
			val, vline, ok := p.sc.digits()
			if ok {
				p.last = vline
			} else if val, vline, err = p.integer(func() string { return fmt.Sprintf("%s: value %d of tuple %d", p.fn(), j, t) }); err != nil {
				return err
			}
			if val < 0 || val >= int64(p.doms[v]) {
				return p.errorf(vline, "%s: value %d is outside the domain of variable %d (size %d)", p.fn(), val, v, p.doms[v])
			}
			idx = idx*p.doms[v] + int(val)
		}
		c64, cline, ok := p.sc.digits()
		if ok {
			p.last = cline
		} else if c64, cline, err = p.integer(func() string { return fmt.Sprintf("%s: the cost of tuple %d", p.fn(), t) }); err != nil {
			return err
		}
		c, _, err := p.internal(c64, cline)
		if err != nil {
			return err
		}
		costs[idx] = c
	}
	if share {
		doms := make([]int, arity)
		for i, v := range scope {
			doms[i] = p.doms[v]
		}
		p.shared = append(p.shared, shared{doms: doms, costs: costs, line: line})
	}
	p.add(scope, costs)
	return nil
}

// maxPresize bounds the functions parse makes room for from the header.
const maxPresize = 1 << 14

// slabSize is the entries of the slabs that small scopes and tables are
// carved from (one allocation for many functions); larger ones are
// allocated alone.
const slabSize = 4096

// carve returns a zeroed slice of n elements, carved from *slab when
// small (a new slab when what is left is too short), allocated alone
// when large.
func carve[T int | float64](slab *[]T, n int) []T {
	if n > slabSize/16 {
		return make([]T, n)
	}
	if len(*slab) < n {
		*slab = make([]T, slabSize)
	}
	s := (*slab)[:n:n]
	*slab = (*slab)[n:]
	return s
}

func (p *parser) reserve(line, size int) error {
	if size > p.lim.tableTotal-p.total {
		return p.errorf(line, "%s: the tables would have more than %d entries in all", p.fn(), p.lim.tableTotal)
	}
	p.total += size
	return nil
}

// add appends a function; parse names them all at the end (indexNames).
func (p *parser) add(scope []int, costs []float64) {
	p.prob.Functions = append(p.prob.Functions, mva.Function{Scope: scope, Costs: costs})
}

// indexNames returns the names prefix+"0" … prefix+(n-1), as views of one
// string: a 60×60 grid's file has 3600 variables and 7080 functions, whose
// names were two allocations each.
func indexNames(prefix string, n int) func(i int) string {
	var b []byte
	ends := make([]int, n)
	for i := range n {
		b = append(b, prefix...)
		b = strconv.AppendInt(b, int64(i), 10)
		ends[i] = len(b)
	}
	all := string(b)
	return func(i int) string {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		return all[start:ends[i]]
	}
}

// constant handles an arity-0 function: nbtuples is 0 (the default cost
// applies) or 1 (a tuple of no values, just a cost).
func (p *parser) constant(fn string, c float64, ntuples int64, line int) error {
	switch ntuples {
	case 0:
	case 1:
		var err error
		if c, _, err = p.cost(text(fn + ": the cost of its tuple")); err != nil {
			return err
		}
	default:
		return p.errorf(line, "%s: a function of arity 0 has %d tuples, want 0 or 1", fn, ntuples)
	}
	if mva.IsHard(c) {
		p.add([]int{}, []float64{mva.Hard})
		return nil
	}
	p.prob.Offset += c
	return nil
}

// reuse copies the n-th shared table (1-based) for scope.
func (p *parser) reuse(fn string, scope []int, n int64, line int) error {
	if n > int64(len(p.shared)) {
		return p.errorf(line, "%s: reuses shared cost function %d, but %d are defined so far", fn, n, len(p.shared))
	}
	s := p.shared[n-1]
	if len(s.doms) != len(scope) {
		return p.errorf(line, "%s: arity %d differs from the arity %d of shared cost function %d (line %d)", fn, len(scope), len(s.doms), n, s.line)
	}
	for i, v := range scope {
		if p.doms[v] != s.doms[i] {
			return p.errorf(line, "%s: variable %d has %d values, but position %d of shared cost function %d (line %d) has %d",
				fn, v, p.doms[v], i, n, s.line, s.doms[i])
		}
	}
	if err := p.reserve(line, len(s.costs)); err != nil {
		return err
	}
	p.add(scope, append([]float64(nil), s.costs...))
	return nil
}
