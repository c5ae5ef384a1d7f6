// Package uai reads and writes Markov networks in the UAI format of the
// UAI inference competitions (the format of the UCI graphical-models
// repository and of toulbar2's .uai files).
//
// # Format
//
// A file is a preamble followed by one table per factor, all numbers
// separated by white space (line breaks are not significant):
//
//	MARKOV                 network type: MARKOV or BAYES
//	3                      number of variables
//	2 2 3                  their cardinalities
//	2                      number of factors
//	1 0                    scope of factor 0: size, then variable indices
//	2 0 2                  scope of factor 1
//	2  0.4 0.6             table of factor 0: entry count, then the entries
//	6  1 2 3 4 5 6         table of factor 1 (last scope variable fastest)
//
// Entries are laid out in row-major order with the last variable of the
// scope varying fastest, which is also hearth's layout, so tables are
// copied as they are. A factor with an empty scope (one entry) is accepted.
//
// # Mapping
//
// The task is MPE: find the assignment maximising the product of the
// factors. hearth minimises, so every entry p becomes the cost −ln(p), and
// the product is maximised exactly where the sum of the costs is minimised.
// An entry 0 is an impossible combination and becomes [mva.Hard]. Negative,
// infinite or NaN entries are errors. Entries above 1 are accepted, since
// Markov potentials need not be normalised. A factor with an empty scope
// contributes −ln(p) to [mva.Problem.Offset] (it stays a zero-arity
// function when p is 0, as the offset must be finite).
//
// BAYES files are read the same way: for MPE a Bayesian network is the
// product of its conditional probability tables, which are factors whose
// scope lists the parents and then the child. (The two types differ only
// for other tasks, such as computing marginals, which hearth does not do.)
//
// Sense stays [mva.Minimize], so the objective hearth reports for a UAI
// file is the energy −ln(probability) of the solution, not the probability
// itself. This is the "energy" that toulbar2 prints: for
// testdata/fabe_misc_simple2.uai, `toulbar2 fabe_misc_simple2.uai` prints
// "Optimum: 6773987 energy: 4.415 prob: 1.210e-02", and 4.415 = −ln(0.0121)
// is the natural logarithm, the figure to compare with hearth's objective.
// (The leading integer is toulbar2's internal cost: it normalises each
// table by its largest entry and scales −ln by 10^7, see its -precision
// option; it is not comparable.)
//
// The file has no names: variable i is called "x<i>" and its values are
// labelled "0" to "d-1". A UAI file describes a centralised problem, so a
// single agent "a0" owns every variable; the command line's agent options
// can repartition it.
//
// # Writing
//
// [Write] turns each cost c back into the probability exp(−c) (Hard into 0)
// and writes it with the shortest decimal that round-trips, so Read(Write(p))
// restores every cost to within about 1e-12 relative (absolute for costs
// near zero, where −ln(exp(−c)) cannot be more accurate). Labels, names and
// agents are not written; the file is always MARKOV. exp(−c) only holds
// costs between about −709 and 745, so a function whose finite costs leave
// [−700, 700] is shifted by its smallest finite cost, the shift going to
// the offset, and [Write] fails when one function's finite costs span more
// than 700. The offset is folded into the first factor when that keeps its
// costs in range; otherwise it is written as one extra unary factor with
// equal entries when it is within ±700 (over the variable with the smallest
// domain), and as zero-arity factors of at most 700 each beyond that or
// when there are no variables. toulbar2 reads zero-arity factors. Either
// way the energy of every assignment is preserved.
package uai

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/hearth-dcop/hearth/mva"
)

// maxCard bounds a variable's cardinality. Labels are allocated for every
// value, so a number in the header must not decide an allocation unchecked.
const maxCard = 1 << 20

// Read parses a UAI network from r. file names the input in errors, which
// are *mva.ParseError values carrying the line of the offending token.
func Read(r io.Reader, file string) (*mva.Problem, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	s := &scanner{data: data, file: file, line: 1}
	p, err := s.parse()
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, mva.Errorf(file, 0, "%v", err)
	}
	return p, nil
}

// scanner reads white-space separated tokens from the whole input and
// tracks their line numbers.
type scanner struct {
	data     []byte
	pos      int
	file     string
	line     int // line of the next byte
	tokLine  int // line of the last token read
	lastLine int // line of the last token read, for end-of-file errors
}

// spaceClass classifies a byte for next: 0 part of a token, 1 white space
// (' ', '\t', '\r', '\v', '\f'), 2 a newline: one load a byte where six
// comparisons a byte were most of next's instructions.
var spaceClass = func() (t [256]uint8) {
	for _, b := range []byte(" \t\r\v\f") {
		t[b] = 1
	}
	t['\n'] = 2
	return t
}()

// next returns the next token, or ok == false at the end of the input. The
// token is a view of the input, not a string: a string a token was an
// allocation per number (DBN_15.uai's 3,400 tokens), and the numbers are
// parsed from the bytes.
func (s *scanner) next() (tok []byte, ok bool) {
	data, pos, line := s.data, s.pos, s.line
	for pos < len(data) {
		c := spaceClass[data[pos]]
		if c == 0 {
			break
		}
		if c == 2 {
			line++
		}
		pos++
	}
	if pos == len(data) {
		s.pos, s.line = pos, line
		return nil, false
	}
	start := pos
	for pos < len(data) && spaceClass[data[pos]] == 0 {
		pos++
	}
	s.pos, s.line = pos, line
	s.tokLine = line
	s.lastLine = line
	return data[start:pos], true
}

// remaining returns an upper bound on the number of tokens left: each needs
// a byte and, but for the last, a separator. Counts read from the file are
// checked against it before anything is allocated for them.
func (s *scanner) remaining() int {
	return (len(s.data)-s.pos)/2 + 1
}

func (s *scanner) errorf(format string, args ...any) error {
	return mva.Errorf(s.file, s.tokLine, format, args...)
}

func (s *scanner) eof(what string) error {
	line := s.lastLine
	if line == 0 {
		line = s.line
	}
	return mva.Errorf(s.file, line, "unexpected end of file: expected %s", what)
}

// int reads a non-negative integer at most limit. what names it in
// errors; with n ≥ 0 it is a format of one %d, n its argument, formatted
// only for an error (formatting it for every number was a fifth of
// reading DBN_15.uai).
func (s *scanner) int(what string, n, limit int) (int, error) {
	tok, ok := s.next()
	if !ok {
		return 0, s.eof(describe(what, n))
	}
	v, ok := digits(tok)
	if !ok {
		var err error
		if v, err = strconv.Atoi(string(tok)); err != nil || v < 0 {
			return 0, s.errorf("bad %s %q: want a non-negative integer", describe(what, n), tok)
		}
	}
	if v > limit {
		return 0, s.errorf("%s is %d, more than %d", describe(what, n), v, limit)
	}
	return v, nil
}

// describe formats what with n when n ≥ 0, for int's errors.
func describe(what string, n int) string {
	if n < 0 {
		return what
	}
	return fmt.Sprintf(what, n)
}

// digits parses tok when it is 1 to 18 decimal digits, which no int
// overflows; anything else is left to strconv.Atoi, which decides.
func digits(tok []byte) (int, bool) {
	if len(tok) == 0 || len(tok) > 18 {
		return 0, false
	}
	v := 0
	for _, c := range tok {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// count reads the number of items that follow it in the file, so that it
// cannot exceed what the rest of the input holds.
func (s *scanner) count(what string) (int, error) {
	n, err := s.int(what, -1, math.MaxInt)
	if err != nil {
		return 0, err
	}
	if n > s.remaining() {
		return 0, s.errorf("%s is %d, more than the rest of the file holds", what, n)
	}
	return n, nil
}

func (s *scanner) parse() (*mva.Problem, error) {
	tok, ok := s.next()
	if !ok {
		return nil, s.eof("MARKOV or BAYES")
	}
	if string(tok) != "MARKOV" && string(tok) != "BAYES" {
		return nil, s.errorf("unknown network type %q: want MARKOV or BAYES", tok)
	}
	nvars, err := s.count("number of variables")
	if err != nil {
		return nil, err
	}
	p := &mva.Problem{Agents: []mva.Agent{{Name: "a0"}}}
	p.Variables = make([]mva.Variable, nvars)
	var labels []string // shared by all domains: domain d is labels[:d:d]
	for i := range p.Variables {
		d, err := s.int("cardinality of variable %d", i, maxCard)
		if err != nil {
			return nil, err
		}
		if d == 0 {
			return nil, s.errorf("variable %d has cardinality 0", i)
		}
		for len(labels) < d {
			labels = append(labels, strconv.Itoa(len(labels)))
		}
		p.Variables[i] = mva.Variable{Name: "x" + strconv.Itoa(i), Domain: labels[:d:d]}
	}
	nfactors, err := s.count("number of factors")
	if err != nil {
		return nil, err
	}
	scopes := make([][]int, nfactors)
	for f := range scopes {
		k, err := s.int("scope size of factor %d", f, math.MaxInt)
		if err != nil {
			return nil, err
		}
		if k > nvars {
			return nil, s.errorf("factor %d: scope of %d variables, but there are only %d", f, k, nvars)
		}
		if k > s.remaining() {
			return nil, s.eof(fmt.Sprintf("the %d variables of factor %d", k, f))
		}
		scope := make([]int, k)
		for j := range scope {
			v, err := s.int("variable of factor %d", f, math.MaxInt)
			if err != nil {
				return nil, err
			}
			if v >= nvars {
				return nil, s.errorf("factor %d: variable index %d out of range (%d variables)", f, v, nvars)
			}
			for _, u := range scope[:j] {
				if u == v {
					return nil, s.errorf("factor %d: variable %d appears twice in the scope", f, v)
				}
			}
			scope[j] = v
		}
		scopes[f] = scope
	}
	for f, scope := range scopes {
		n, err := s.int("entry count of factor %d", f, math.MaxInt)
		if err != nil {
			return nil, err
		}
		want, err := p.TableSize(scope)
		if err != nil {
			return nil, s.errorf("factor %d: %v", f, err)
		}
		if n != want {
			return nil, s.errorf("factor %d: table has %d entries, its scope needs %d", f, n, want)
		}
		if n > s.remaining() {
			return nil, s.eof(fmt.Sprintf("%d entries for factor %d", n, f))
		}
		costs := make([]float64, n)
		for i := range costs {
			c, err := s.cost(f)
			if err != nil {
				return nil, err
			}
			costs[i] = c
		}
		if len(scope) == 0 && !mva.IsHard(costs[0]) {
			p.Offset += costs[0]
			continue
		}
		p.Functions = append(p.Functions, mva.Function{Name: "f" + strconv.Itoa(f), Scope: scope, Costs: costs})
	}
	if tok, ok := s.next(); ok {
		return nil, s.errorf("unexpected %q after the last table", tok)
	}
	return p, nil
}

// cost reads one probability and returns −ln of it.
func (s *scanner) cost(f int) (float64, error) {
	tok, ok := s.next()
	if !ok {
		return 0, s.eof(fmt.Sprintf("an entry of factor %d", f))
	}
	v, ok := shortDecimal(tok)
	if !ok {
		if !isDecimal(tok) {
			return 0, s.errorf("factor %d: bad probability %q", f, tok)
		}
		var err error
		v, err = strconv.ParseFloat(string(tok), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, s.errorf("factor %d: bad probability %q", f, tok)
		}
	}
	switch {
	case math.IsInf(v, 0):
		return 0, s.errorf("factor %d: probability %q is out of range", f, tok)
	case v < 0:
		return 0, s.errorf("factor %d: negative probability %s", f, tok)
	case v == 0:
		return mva.Hard, nil
	}
	c := -math.Log(v)
	if c == 0 {
		c = 0 // no negative zero
	}
	return c, nil
}

// pow10 holds the powers of ten that a float64 holds exactly, for
// shortDecimal.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// shortDecimal parses tok when it is digits with at most one point, at
// most 15 digits from the first non-zero one and at most 15 after the
// point, the usual UAI entry ("0.184761"): the digits
// make an integer m below 2^53 and the point a power of ten p ≤ 10^15,
// both exact in a float64, so m/p is the correctly rounded value that
// strconv.ParseFloat returns (its own exact path does the same
// division). Anything else (a sign, an exponent, more digits) is left to
// ParseFloat; shortDecimal was a third of reading DBN_15.uai's
// instructions less than ParseFloat with its string.
func shortDecimal(tok []byte) (float64, bool) {
	var m uint64
	digits, nd, frac, point := false, 0, 0, false
	for _, c := range tok {
		switch {
		case c >= '0' && c <= '9':
			digits = true
			m = m*10 + uint64(c-'0')
			if m != 0 {
				nd++ // leading zeros add no digit to m
			}
			if point {
				frac++
			}
		case c == '.' && !point:
			point = true
		default:
			return 0, false
		}
	}
	if !digits || nd > 15 || frac > 15 {
		return 0, false
	}
	return float64(m) / pow10[frac], true
}

// isDecimal reports whether tok is a plain decimal number:
// [+-] digits [. digits] [(e|E) [+-] digits], with digits on at least one
// side of the point. It keeps out what strconv.ParseFloat also accepts but
// a UAI file never holds: "inf", "NaN", hexadecimal and underscores.
func isDecimal(tok []byte) bool {
	i := 0
	if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
		i++
	}
	digits := func() int {
		j := i
		for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
			i++
		}
		return i - j
	}
	n := digits()
	if i < len(tok) && tok[i] == '.' {
		i++
		n += digits()
	}
	if n == 0 {
		return false
	}
	if i < len(tok) && (tok[i] == 'e' || tok[i] == 'E') {
		i++
		if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(tok)
}

// costLimit is the largest magnitude of a cost that Write turns into a
// probability directly: exp(−700) and exp(700) are comfortably inside the
// range of normal float64 values, so −ln gives the cost back accurately.
const costLimit = 700

// maxOffsetFactors bounds the extra factors written for a large offset.
const maxOffsetFactors = 1 << 16

// Write writes p as a MARKOV network whose MPE energy (−ln of the product)
// equals p's cost for every assignment. See the package documentation for
// what is and is not kept.
func Write(w io.Writer, p *mva.Problem) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("uai: %w", err)
	}
	funcs := make([]mva.Function, len(p.Functions))
	offset := p.Offset
	for i, f := range p.Functions {
		lo, hi, ok := finiteRange(f.Costs)
		funcs[i] = f
		if !ok || (lo >= -costLimit && hi <= costLimit) {
			continue
		}
		if hi-lo > costLimit {
			return fmt.Errorf("uai: function %s: finite costs span %g, more than a probability can hold (%d)", name(f, i), hi-lo, costLimit)
		}
		shifted := make([]float64, len(f.Costs))
		for j, c := range f.Costs {
			shifted[j] = c - lo // Hard stays Hard
		}
		funcs[i].Costs = shifted
		offset += lo
	}
	if offset != 0 {
		folded := false
		if len(funcs) > 0 {
			lo, hi, ok := finiteRange(funcs[0].Costs)
			if ok && lo+offset >= -costLimit && hi+offset <= costLimit {
				c := make([]float64, len(funcs[0].Costs))
				for j, v := range funcs[0].Costs {
					c[j] = v + offset
				}
				funcs[0].Costs = c
				folded = true
			}
		}
		if !folded {
			extra, err := offsetFactors(p, offset)
			if err != nil {
				return err
			}
			funcs = append(funcs, extra...)
		}
	}

	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "MARKOV\n%d\n", len(p.Variables))
	for i, v := range p.Variables {
		if i > 0 {
			bw.WriteByte(' ')
		}
		bw.WriteString(strconv.Itoa(len(v.Domain)))
	}
	fmt.Fprintf(bw, "\n%d\n", len(funcs))
	for _, f := range funcs {
		bw.WriteString(strconv.Itoa(len(f.Scope)))
		for _, v := range f.Scope {
			bw.WriteByte(' ')
			bw.WriteString(strconv.Itoa(v))
		}
		bw.WriteByte('\n')
	}
	var buf []byte
	for _, f := range funcs {
		row := 1 // one line per assignment of all but the last variable
		if len(f.Scope) > 0 {
			row = p.DomainSize(f.Scope[len(f.Scope)-1])
		}
		fmt.Fprintf(bw, "\n%d\n", len(f.Costs))
		for j, c := range f.Costs {
			if j%row != 0 {
				bw.WriteByte(' ')
			}
			buf = strconv.AppendFloat(buf[:0], prob(c), 'g', -1, 64)
			bw.Write(buf)
			if j%row == row-1 {
				bw.WriteByte('\n')
			}
		}
	}
	return bw.Flush()
}

// offsetFactors returns constant factors whose costs add up to offset,
// each within ±costLimit: one unary factor over the variable with the
// smallest domain when one is enough, zero-arity factors otherwise (they
// hold a single entry however large the domains are).
func offsetFactors(p *mva.Problem, offset float64) ([]mva.Function, error) {
	n := math.Ceil(math.Abs(offset) / costLimit)
	if n > maxOffsetFactors {
		return nil, fmt.Errorf("uai: constant cost %g is too large to write as probabilities", offset)
	}
	if n == 1 && len(p.Variables) > 0 {
		v := 0
		for u := range p.Variables {
			if p.DomainSize(u) < p.DomainSize(v) {
				v = u
			}
		}
		c := make([]float64, p.DomainSize(v))
		for j := range c {
			c[j] = offset
		}
		return []mva.Function{{Name: "offset", Scope: []int{v}, Costs: c}}, nil
	}
	out := make([]mva.Function, 0, int(n))
	for left, k := offset, int(n); k > 0; k-- {
		part := left / float64(k)
		left -= part
		out = append(out, mva.Function{Name: "offset", Costs: []float64{part}})
	}
	return out, nil
}

// finiteRange returns the smallest and largest finite costs, and whether
// there is any.
func finiteRange(costs []float64) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, c := range costs {
		if mva.IsHard(c) {
			continue
		}
		lo, hi, ok = min(lo, c), max(hi, c), true
	}
	return lo, hi, ok
}

func prob(c float64) float64 {
	if mva.IsHard(c) {
		return 0
	}
	return math.Exp(-c)
}

func name(f mva.Function, i int) string {
	if f.Name != "" {
		return f.Name
	}
	return "#" + strconv.Itoa(i)
}
