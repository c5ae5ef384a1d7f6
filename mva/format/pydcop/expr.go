package pydcop

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds the parser of the Python expressions of intentional
// constraints. The grammar is the expression part of Python's, restricted
// to what DCOP files use:
//
//	expr       = disjunction ["if" disjunction "else" expr]
//	disjunction = conjunction {"or" conjunction}
//	conjunction = inversion {"and" inversion}
//	inversion  = "not" inversion | comparison
//	comparison = sum {("=="|"!="|"<"|"<="|">"|">=") sum}
//	sum        = term {("+"|"-") term}
//	term       = factor {("*"|"/"|"//"|"%") factor}
//	factor     = ("+"|"-") factor | power
//	power      = primary ["**" factor]
//	primary    = NAME "(" [expr {"," expr} [","]] ")" | atom
//	atom       = NAME | NUMBER | STRING {STRING} | "True" | "False" | "(" expr ")"
//
// so that -2**2 is -(2**2) and 2**-1 is 2**(-1), as in Python.

// maxDepth bounds the nesting of an expression (parentheses, unary
// operators, powers, calls) and maxHeight the height of its tree (long
// chains such as 1+1+...+1 included), so that a hostile file cannot
// exhaust the stack of the recursive parser and evaluator.
const (
	maxDepth  = 200
	maxHeight = 10000
)

type opcode uint8

const (
	opConst opcode = iota
	opName         // unresolved name; bind turns it into opVar or opConst
	opVar
	opNeg
	opPos
	opNot
	opAdd
	opSub
	opMul
	opDiv
	opFloorDiv
	opMod
	opPow
	opAnd
	opOr
	opCompare
	opCond
	opCall
	opUser // a call of a function of a source file (node.user)
	// comparison operators, in node.cmps
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
)

var opText = map[opcode]string{
	opAdd: "+", opSub: "-", opMul: "*", opDiv: "/", opFloorDiv: "//", opMod: "%", opPow: "**",
	opEq: "==", opNe: "!=", opLt: "<", opLe: "<=", opGt: ">", opGe: ">=",
	opNeg: "unary -", opPos: "unary +",
}

// node is an expression tree node. Operands are in kids, in source order:
// a conditional x if c else y keeps [x, c, y].
type node struct {
	op   opcode
	pos  int    // byte offset in the source, for errors
	name string // opName, opCall
	slot int    // opVar: index in the environment
	val  value  // opConst
	fn   builtin
	user *function // opUser, set when the module is linked
	cmps []opcode  // opCompare: len(kids)-1 operators
	kids []*node
	// height is the length of the longest path to a leaf.
	height int
}

// mk sets n's height from its operands and checks it against maxHeight.
func mk(n *node) (*node, error) {
	for _, k := range n.kids {
		n.height = max(n.height, k.height+1)
	}
	if n.height > maxHeight {
		return nil, &exprError{n.pos, fmt.Sprintf("expression more than %d operators deep", maxHeight)}
	}
	return n, nil
}

// exprError is a syntax or name error at a byte offset of the source.
type exprError struct {
	pos int
	msg string
}

func (e *exprError) Error() string { return e.msg }

type tokKind uint8

const (
	tEOF tokKind = iota
	tName
	tNumber
	tString
	tOp
	tBad // a character outside the language; text holds the message
)

type token struct {
	kind tokKind
	text string // name, operator, or the literal's source
	val  value  // tNumber, tString
	pos  int
}

var keywords = map[string]bool{
	"and": true, "or": true, "not": true, "if": true, "else": true, "True": true, "False": true,
}

// Python keywords that this subset does not support, reported by name.
var unsupported = map[string]string{
	"None": "None", "in": "the operator in", "is": "the operator is", "lambda": "lambda",
	"return": "statements (return)", "def": "statements (def)", "for": "comprehensions",
	"import": "statements (import)", "await": "await", "yield": "yield",
}

func lex(src string) ([]token, error) { return lexMode(src, false) }

// exprOps are the operators of expressions, longest first; stmtOps adds
// those of statements (assignments, and the colon of if, elif, else and
// def).
var (
	exprOps = []string{"**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "<", ">", "(", ")", ","}
	stmtOps = []string{"**=", "//=", "**", "//", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=",
		"+", "-", "*", "/", "%", "<", ">", "(", ")", ",", ":", "="}
)

// lexMode splits src into tokens. In statement mode (stmt) the operators
// of statements are tokens too and triple-quoted strings (docstrings) are
// allowed.
func lexMode(src string, stmt bool) ([]token, error) {
	ops := exprOps
	if stmt {
		ops = stmtOps
	}
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			t, err := lexNumber(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i += len(t.text)
		case c == '\'' || c == '"':
			t, err := lexString(src, i, stmt)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i += len(t.text)
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf:
			j := i
			for j < len(src) {
				r, n := utf8.DecodeRuneInString(src[j:])
				if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				j += n
			}
			if j == i {
				r, _ := utf8.DecodeRuneInString(src[i:])
				return nil, &exprError{i, fmt.Sprintf("unexpected character %q", r)}
			}
			if j < len(src) && (src[j] == '\'' || src[j] == '"') {
				return nil, &exprError{i, fmt.Sprintf("string prefix %s is not supported", src[i:j])}
			}
			toks = append(toks, token{kind: tName, text: src[i:j], pos: i})
			i = j
		case c == '.':
			// An operator so that source.f(x) parses; anywhere else the
			// parser reports attribute access as unsupported.
			toks = append(toks, token{kind: tOp, text: ".", pos: i})
			i++
		default:
			op := ""
			for _, o := range ops {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				// Reported by the parser if it gets there, so that a
				// keyword before it (lambda x: ...) explains more.
				r, n := utf8.DecodeRuneInString(src[i:])
				toks = append(toks, token{kind: tBad, text: fmt.Sprintf("unexpected character %q", r), pos: i})
				i += n
				continue
			}
			toks = append(toks, token{kind: tOp, text: op, pos: i})
			i += len(op)
		}
	}
	end := len(strings.TrimRight(src, " \t\n\r\f\\"))
	return append(toks, token{kind: tEOF, pos: end}), nil
}

// lexNumber reads a Python integer or float literal starting at i.
func lexNumber(src string, i int) (token, error) {
	j := i
	isDigit := func(c byte, base int) bool {
		switch base {
		case 16:
			return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
		case 8:
			return c >= '0' && c <= '7'
		case 2:
			return c == '0' || c == '1'
		}
		return c >= '0' && c <= '9'
	}
	digits := func(base int) {
		for j < len(src) && (isDigit(src[j], base) || src[j] == '_' && j+1 < len(src) && isDigit(src[j+1], base) && j > i && isDigit(src[j-1], base)) {
			j++
		}
	}
	bad := func() (token, error) {
		for j < len(src) && (src[j] == '_' || src[j] == '.' || src[j] < utf8.RuneSelf && (unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j])))) {
			j++
		}
		return token{}, &exprError{i, fmt.Sprintf("bad number %q", src[i:j])}
	}
	if src[j] == '0' && j+1 < len(src) && strings.ContainsRune("xXoObB", rune(src[j+1])) {
		base := map[byte]int{'x': 16, 'X': 16, 'o': 8, 'O': 8, 'b': 2, 'B': 2}[src[j+1]]
		j += 2
		start := j
		for j < len(src) && (isDigit(src[j], base) || src[j] == '_') {
			j++
		}
		if j == start || j < len(src) && (src[j] == '.' || unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j]))) {
			return bad()
		}
		n, err := strconv.ParseInt(src[i:j], 0, 64)
		if err != nil {
			return token{}, &exprError{i, fmt.Sprintf("integer %s is out of range", src[i:j])}
		}
		return token{kind: tNumber, text: src[i:j], val: intValue(n), pos: i}, nil
	}
	digits(10)
	float := false
	if j < len(src) && src[j] == '.' {
		float = true
		j++
		start := j
		digits(10)
		if j > start && src[start] == '_' {
			return bad()
		}
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		float = true
		j++
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		start := j
		digits(10)
		if j == start {
			return bad()
		}
	}
	if j < len(src) && (src[j] == '_' || src[j] == '.' || src[j] == 'j' || src[j] == 'J' || src[j] < utf8.RuneSelf && unicode.IsLetter(rune(src[j]))) {
		return bad()
	}
	text := src[i:j]
	clean := strings.ReplaceAll(text, "_", "")
	if float {
		f, err := strconv.ParseFloat(clean, 64)
		if err != nil && !math.IsInf(f, 0) {
			return bad()
		}
		return token{kind: tNumber, text: text, val: floatValue(f), pos: i}, nil
	}
	if len(clean) > 1 && clean[0] == '0' && strings.Trim(clean, "0") != "" {
		return token{}, &exprError{i, fmt.Sprintf("leading zeros in %q are not allowed (use 0o for octal)", text)}
	}
	n, err := strconv.ParseInt(clean, 10, 64)
	if err != nil {
		return token{}, &exprError{i, fmt.Sprintf("integer %s is out of range", text)}
	}
	return token{kind: tNumber, text: text, val: intValue(n), pos: i}, nil
}

// lexString reads a single- or double-quoted string literal with the
// common backslash escapes; triple-quoted ones (which may span lines) when
// triple is set.
func lexString(src string, i int, triple bool) (token, error) {
	q := src[i]
	end := string(q)
	if strings.HasPrefix(src[i:], strings.Repeat(string(q), 3)) {
		if !triple {
			return token{}, &exprError{i, "triple-quoted strings are not supported"}
		}
		end = strings.Repeat(string(q), 3)
	}
	var b strings.Builder
	j := i + len(end)
	for {
		if j >= len(src) || src[j] == '\n' && len(end) == 1 {
			return token{}, &exprError{i, "unterminated string"}
		}
		c := src[j]
		if strings.HasPrefix(src[j:], end) {
			j += len(end)
			break
		}
		if c == '\\' && j+1 < len(src) {
			j++
			switch e := src[j]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"':
				b.WriteByte(e)
			case '\n':
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			j++
			continue
		}
		b.WriteByte(c)
		j++
	}
	return token{kind: tString, text: src[i:j], val: strValue(b.String()), pos: i}, nil
}

type parser struct {
	toks  []token
	i     int
	depth int
	names []string // variable references in order of first appearance
	seen  map[string]bool
	// mod is the source file whose functions calls may name: as
	// source.f(...) from a constraint (inModule false), or as f(...)
	// between the functions of the file (inModule true).
	mod      *module
	inModule bool
	// calls collects the opUser nodes, for linking.
	calls []*node
}

// parseExpr parses src into a tree whose names are unresolved (opName),
// and returns the names read as values, in order of first appearance.
func parseExpr(src string) (*node, []string, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, nil, err
	}
	p := &parser{toks: toks, seen: make(map[string]bool)}
	n, err := p.expr()
	if err != nil {
		return nil, nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, nil, p.unexpected(t)
	}
	return n, p.names, nil
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) is(text string) bool {
	t := p.peek()
	return (t.kind == tOp || t.kind == tName) && t.text == text
}

func (p *parser) unexpected(t token) error {
	switch {
	case t.kind == tEOF:
		return &exprError{t.pos, "unexpected end of expression"}
	case t.kind == tBad:
		return &exprError{t.pos, t.text}
	case t.kind == tName && unsupported[t.text] != "":
		return &exprError{t.pos, unsupported[t.text] + " is not supported"}
	case t.kind == tName && t.text == "if" && p.i == 0:
		return &exprError{t.pos, "statements are not supported: write a single expression, such as 1 if a == b else 0, or a function body that returns the cost"}
	case t.kind == tOp && t.text == ".":
		return &exprError{t.pos, "attribute access (.) is not supported"}
	}
	return &exprError{t.pos, fmt.Sprintf("unexpected %q", t.text)}
}

func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > maxDepth {
		return &exprError{pos, fmt.Sprintf("expression nested more than %d levels deep", maxDepth)}
	}
	return nil
}

func (p *parser) expr() (*node, error) {
	if err := p.enter(p.peek().pos); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	body, err := p.disjunction()
	if err != nil {
		return nil, err
	}
	if !p.is("if") {
		return body, nil
	}
	t := p.next()
	test, err := p.disjunction()
	if err != nil {
		return nil, err
	}
	if !p.is("else") {
		return nil, &exprError{p.peek().pos, "conditional expression without else"}
	}
	p.next()
	orelse, err := p.expr()
	if err != nil {
		return nil, err
	}
	return mk(&node{op: opCond, pos: t.pos, kids: []*node{body, test, orelse}})
}

func (p *parser) boolChain(word string, op opcode, sub func() (*node, error)) (*node, error) {
	n, err := sub()
	if err != nil {
		return nil, err
	}
	if !p.is(word) {
		return n, nil
	}
	chain := &node{op: op, pos: p.peek().pos, kids: []*node{n}}
	for p.is(word) {
		p.next()
		k, err := sub()
		if err != nil {
			return nil, err
		}
		chain.kids = append(chain.kids, k)
	}
	return mk(chain)
}

func (p *parser) disjunction() (*node, error) { return p.boolChain("or", opOr, p.conjunction) }

func (p *parser) conjunction() (*node, error) { return p.boolChain("and", opAnd, p.inversion) }

func (p *parser) inversion() (*node, error) {
	if p.is("not") {
		t := p.next()
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		x, err := p.inversion()
		if err != nil {
			return nil, err
		}
		return mk(&node{op: opNot, pos: t.pos, kids: []*node{x}})
	}
	return p.comparison()
}

var cmpOps = map[string]opcode{"==": opEq, "!=": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe}

func (p *parser) comparison() (*node, error) {
	n, err := p.sum()
	if err != nil {
		return nil, err
	}
	var cmp *node
	for {
		t := p.peek()
		op, ok := cmpOps[t.text]
		if t.kind != tOp || !ok {
			if t.kind == tName && (t.text == "in" || t.text == "is") || t.kind == tName && t.text == "not" {
				return nil, p.unexpected(t)
			}
			break
		}
		p.next()
		k, err := p.sum()
		if err != nil {
			return nil, err
		}
		if cmp == nil {
			cmp = &node{op: opCompare, pos: t.pos, kids: []*node{n}}
		}
		cmp.cmps = append(cmp.cmps, op)
		cmp.kids = append(cmp.kids, k)
	}
	if cmp == nil {
		return n, nil
	}
	return mk(cmp)
}

func (p *parser) binary(ops map[string]opcode, sub func() (*node, error)) (*node, error) {
	n, err := sub()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		op, ok := ops[t.text]
		if t.kind != tOp || !ok {
			return n, nil
		}
		p.next()
		k, err := sub()
		if err != nil {
			return nil, err
		}
		if n, err = mk(&node{op: op, pos: t.pos, kids: []*node{n, k}}); err != nil {
			return nil, err
		}
	}
}

var sumOps = map[string]opcode{"+": opAdd, "-": opSub}
var termOps = map[string]opcode{"*": opMul, "/": opDiv, "//": opFloorDiv, "%": opMod}

func (p *parser) sum() (*node, error) { return p.binary(sumOps, p.term) }

func (p *parser) term() (*node, error) { return p.binary(termOps, p.factor) }

func (p *parser) factor() (*node, error) {
	if t := p.peek(); t.kind == tOp && (t.text == "-" || t.text == "+") {
		p.next()
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		x, err := p.factor()
		if err != nil {
			return nil, err
		}
		op := opNeg
		if t.text == "+" {
			op = opPos
		}
		return mk(&node{op: op, pos: t.pos, kids: []*node{x}})
	}
	return p.power()
}

func (p *parser) power() (*node, error) {
	base, err := p.primary()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind == tOp && t.text == "**" {
		p.next()
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		exp, err := p.factor()
		if err != nil {
			return nil, err
		}
		return mk(&node{op: opPow, pos: t.pos, kids: []*node{base, exp}})
	}
	return base, nil
}

func (p *parser) primary() (*node, error) {
	t := p.next()
	switch t.kind {
	case tNumber:
		return &node{op: opConst, pos: t.pos, val: t.val}, nil
	case tString:
		s := t.val.s
		for p.peek().kind == tString { // adjacent literals concatenate
			s += p.next().val.s
		}
		return &node{op: opConst, pos: t.pos, val: strValue(s)}, nil
	case tName:
		switch {
		case t.text == "True" || t.text == "False":
			return &node{op: opConst, pos: t.pos, val: boolValue(t.text == "True")}, nil
		case keywords[t.text] || unsupported[t.text] != "":
			p.i--
			return nil, p.unexpected(t)
		case p.is("("):
			return p.call(t)
		case p.is("."):
			return p.attrCall(t)
		}
		if !p.seen[t.text] {
			p.seen[t.text] = true
			p.names = append(p.names, t.text)
		}
		return &node{op: opName, pos: t.pos, name: t.text}, nil
	case tOp:
		if t.text == "(" {
			n, err := p.expr()
			if err != nil {
				return nil, err
			}
			if !p.is(")") {
				return nil, p.closing(t)
			}
			p.next()
			return n, nil
		}
	}
	p.i--
	return nil, p.unexpected(t)
}

func (p *parser) closing(open token) error {
	if t := p.peek(); t.kind != tEOF {
		return p.unexpected(t)
	}
	return &exprError{open.pos, "unclosed parenthesis"}
}

func (p *parser) call(name token) (*node, error) {
	open := p.next() // "("
	fn, ok := builtins[name.text]
	if !ok && p.inModule {
		return p.args(&node{op: opUser, pos: name.pos, name: name.text}, open)
	}
	if !ok {
		return nil, &exprError{name.pos, fmt.Sprintf("unknown function %s (supported: %s)", name.text, builtinNames)}
	}
	n := &node{op: opCall, pos: name.pos, name: name.text, fn: fn}
	if err := p.argList(n, open); err != nil {
		return nil, err
	}
	if len(n.kids) < fn.minArgs || len(n.kids) > fn.maxArgs {
		return nil, &exprError{name.pos, fn.arity(name.text, len(n.kids))}
	}
	return mk(n)
}

// attrCall parses source.f(args), the call of a function of the
// constraint's source file; any other attribute access is an error.
func (p *parser) attrCall(name token) (*node, error) {
	dot := p.next()
	if name.text != "source" || p.inModule {
		return nil, &exprError{dot.pos, "attribute access (.) is not supported"}
	}
	if p.mod == nil {
		return nil, &exprError{name.pos, "source.… names a function of a source file, but the constraint has no source"}
	}
	fn := p.next()
	if fn.kind != tName || !p.is("(") {
		return nil, &exprError{dot.pos, "write source.function(arguments) to call a function of the source file"}
	}
	return p.args(&node{op: opUser, pos: fn.pos, name: fn.text}, p.next())
}

// args parses the arguments of a call of a source function up to the
// closing parenthesis.
func (p *parser) args(n *node, open token) (*node, error) {
	if err := p.argList(n, open); err != nil {
		return nil, err
	}
	p.calls = append(p.calls, n)
	return mk(n)
}

// argList parses comma-separated arguments into n.kids and consumes the
// closing parenthesis that matches open.
func (p *parser) argList(n *node, open token) error {
	for !p.is(")") {
		arg, err := p.expr()
		if err != nil {
			return err
		}
		n.kids = append(n.kids, arg)
		if p.is(",") {
			p.next()
			continue
		}
		if !p.is(")") {
			return p.closing(open)
		}
	}
	p.next()
	return nil
}

// bind resolves the names of a parsed tree: names in vars become opVar
// with their index in vars, names in consts become constants, and any
// other name is an error.
func bind(n *node, vars []string, consts map[string]value) error {
	return bindScope(n, nil, vars, consts)
}

// bindScope is bind with local variables first: a name in locals becomes
// opVar with the slot locals gives.
func bindScope(n *node, locals map[string]int, vars []string, consts map[string]value) error {
	switch n.op {
	case opName:
		if slot, ok := locals[n.name]; ok {
			n.op, n.slot = opVar, slot
			return nil
		}
		if v, ok := consts[n.name]; ok {
			n.op, n.val = opConst, v
			return nil
		}
		for i, name := range vars {
			if name == n.name {
				n.op, n.slot = opVar, i
				return nil
			}
		}
		return &exprError{n.pos, fmt.Sprintf("unknown name %s", n.name)}
	}
	for _, k := range n.kids {
		if err := bindScope(k, locals, vars, consts); err != nil {
			return err
		}
	}
	return nil
}
