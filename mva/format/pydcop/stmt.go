package pydcop

import (
	"errors"
	"fmt"
	"strings"
)

// This file compiles the statement part of the Python that pyDCOP files
// use: function bodies made of if/elif/else, return, pass and assignments
// to local names, written either as a constraint's function (pyDCOP
// wraps a text holding return in a def) or as the functions (def) of a
// constraint's source file. Nothing runs Python: the statements become
// trees that the evaluator walks. There are no loops and recursion is
// refused, so the work of one evaluation has a bound known before the
// first one, checked against maxSteps.
//
//	body      = stmt {stmt}
//	stmt      = "if" expr ":" suite {"elif" expr ":" suite} ["else" ":" suite]
//	          | simple NEWLINE
//	suite     = simple NEWLINE | NEWLINE INDENT body DEDENT
//	simple    = "return" expr | "pass" | NAME ("="|"+="|"-="|...) expr | expr
//	module    = {funcdef | STRING NEWLINE}
//	funcdef   = "def" NAME "(" [NAME {"," NAME} [","]] ")" ":" suite
//
// An expression statement is evaluated by nothing (it has no effect in
// this subset) but its names count as read, as in pyDCOP; a lone string is
// a docstring.

// maxSteps bounds the operators one evaluation of a function body may
// apply, counted over every branch and through every call.
const maxSteps = 1 << 20

type stmtKind uint8

const (
	sReturn stmtKind = iota
	sAssign
	sIf
)

// stmt is a statement of a function body.
type stmt struct {
	kind   stmtKind
	pos    int       // byte offset of its first token in the body's source
	name   string    // sAssign: the target
	slot   int       // sAssign: the target's slot, set by bind
	x      *node     // sReturn, sAssign: the value
	tests  []*node   // sIf: the if and elif conditions
	bodies [][]*stmt // sIf: one body per condition
	orelse []*stmt   // sIf: the else body, nil when there is none
}

// function is a compiled function body: a def of a source file, or the
// body of a constraint's function, whose parameters are then the
// variables of its scope.
type function struct {
	name   string // the def's name; "" for a constraint's body
	file   string // the source file, for errors; "" for a constraint's body
	src    string // the text that positions refer to
	pos    int    // the def's offset in src
	params []string
	body   []*stmt
	free   []string        // names read and never assigned, in order of first appearance
	stored map[string]bool // names assigned
	nslots int
	calls  []*node // opUser nodes of the body
	steps  int     // static bound on the operators of one call, set when linked
	depth  int     // longest chain of calls from here, set when linked
	state  uint8   // linking: 0 not yet, 1 in progress, 2 done
}

// module is a source file: its functions by name.
type module struct {
	file  string
	src   string
	funcs map[string]*function
	order []*function
}

// srcLine is a logical line of source: src[start:end], whose first
// character is at column indent (tabs advance to the next multiple of 8).
type srcLine struct{ indent, start, end int }

// splitLines cuts src into logical lines, as Python's tokenizer does:
// blank and comment-only lines are dropped, and a line continues across
// newlines inside brackets, inside a triple-quoted string, and after a
// backslash.
func splitLines(src string) []srcLine {
	var lines []srcLine
	i := 0
	for i < len(src) {
		indent, j := 0, i
		for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\f') {
			switch src[j] {
			case ' ':
				indent++
			case '\t':
				indent = indent/8*8 + 8
			}
			j++
		}
		if j == len(src) {
			break
		}
		if src[j] == '\n' || src[j] == '\r' || src[j] == '#' {
			for j < len(src) && src[j] != '\n' {
				j++
			}
			i = j + 1
			continue
		}
		start, depth := j, 0
		for j < len(src) && !(src[j] == '\n' && depth == 0) {
			switch c := src[j]; {
			case c == '#':
				for j < len(src) && src[j] != '\n' {
					j++
				}
				continue
			case c == '\\' && j+1 < len(src) && src[j+1] == '\n':
				j += 2
				continue
			case c == '(' || c == '[' || c == '{':
				depth++
			case c == ')' || c == ']' || c == '}':
				depth = max(depth-1, 0)
			case c == '\'' || c == '"':
				j = skipString(src, j)
				continue
			}
			j++
		}
		end := j
		for end > start && (src[end-1] == '\r' || src[end-1] == ' ' || src[end-1] == '\t') {
			end--
		}
		lines = append(lines, srcLine{indent, start, end})
		i = j + 1
	}
	return lines
}

// skipString returns the offset after the string literal at i, or where
// an unterminated one stops (the lexer reports it).
func skipString(src string, i int) int {
	q := src[i]
	if triple := strings.Repeat(string(q), 3); strings.HasPrefix(src[i:], triple) {
		for j := i + 3; j < len(src); j++ {
			if src[j] == '\\' {
				j++
				continue
			}
			if strings.HasPrefix(src[j:], triple) {
				return j + 3
			}
		}
		return len(src)
	}
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '\n':
			return j
		case q:
			return j + 1
		}
	}
	return len(src)
}

// Statement keywords outside the subset, reported by name.
var unsupportedStmt = map[string]bool{
	"for": true, "while": true, "import": true, "from": true, "with": true, "try": true,
	"except": true, "finally": true, "class": true, "global": true, "nonlocal": true,
	"del": true, "raise": true, "assert": true, "break": true, "continue": true, "async": true,
}

var augOps = map[string]opcode{
	"+=": opAdd, "-=": opSub, "*=": opMul, "/=": opDiv, "//=": opFloorDiv, "%=": opMod, "**=": opPow,
}

// bodyParser parses the logical lines of a body or a module.
type bodyParser struct {
	src   string
	lines []srcLine
	i     int
	depth int
	p     parser // the expression parser, reset for every line
	fn    *function
}

func newBodyParser(src string, mod *module, inModule bool) *bodyParser {
	return &bodyParser{src: src, lines: splitLines(src), p: parser{mod: mod, inModule: inModule}}
}

// begin starts collecting the names and calls of a new function.
func (b *bodyParser) begin(fn *function) {
	b.fn = fn
	fn.stored = make(map[string]bool)
	b.p.names, b.p.seen, b.p.calls = nil, make(map[string]bool), nil
}

// end stores what begin started to collect.
func (b *bodyParser) end() {
	fn := b.fn
	for _, name := range b.p.names {
		if !fn.stored[name] {
			fn.free = append(fn.free, name)
		}
	}
	fn.calls = b.p.calls
}

// line lexes logical line k and points the expression parser at it.
func (b *bodyParser) line(k int) error {
	l := b.lines[k]
	toks, err := lexMode(b.src[l.start:l.end], true)
	if err != nil {
		var ee *exprError
		if errors.As(err, &ee) {
			return &exprError{ee.pos + l.start, ee.msg}
		}
		return err
	}
	for t := range toks {
		toks[t].pos += l.start
	}
	b.p.toks, b.p.i, b.p.depth = toks, 0, 0
	return nil
}

// firstWord returns the keyword or name that logical line k starts with.
func (b *bodyParser) firstWord(k int) string {
	l := b.lines[k]
	s := b.src[l.start:l.end]
	n := 0
	for n < len(s) && (s[n] == '_' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= '0' && s[n] <= '9') {
		n++
	}
	return s[:n]
}

// block parses the statements indented deeper than parent that start at
// the current line. at is where to report a missing block.
func (b *bodyParser) block(parent, at int) ([]*stmt, error) {
	if b.i >= len(b.lines) || b.lines[b.i].indent <= parent {
		return nil, &exprError{at, "expected an indented block"}
	}
	if b.depth++; b.depth > maxDepth {
		return nil, &exprError{b.lines[b.i].start, fmt.Sprintf("blocks nested more than %d levels deep", maxDepth)}
	}
	defer func() { b.depth-- }()
	indent := b.lines[b.i].indent
	var out []*stmt
	for b.i < len(b.lines) {
		l := b.lines[b.i]
		if l.indent < indent {
			if l.indent > parent {
				return nil, &exprError{l.start, "unindent does not match any outer indentation level"}
			}
			break
		}
		if l.indent > indent {
			return nil, &exprError{l.start, "unexpected indent"}
		}
		s, err := b.statement(indent)
		if err != nil {
			return nil, err
		}
		if s != nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// statement parses the statement at the current line, which is at
// column indent.
func (b *bodyParser) statement(indent int) (*stmt, error) {
	if err := b.line(b.i); err != nil {
		return nil, err
	}
	b.i++
	p := &b.p
	t := p.peek()
	if t.kind == tName {
		switch {
		case t.text == "if":
			return b.ifStmt(indent)
		case t.text == "elif" || t.text == "else":
			return nil, &exprError{t.pos, t.text + " without if"}
		case t.text == "def":
			return nil, &exprError{t.pos, "nested functions (def) are not supported"}
		case unsupportedStmt[t.text]:
			return nil, &exprError{t.pos, t.text + " statements are not supported (the subset has if/elif/else, return, pass and assignments)"}
		}
	}
	return b.simple()
}

// simple parses a simple statement up to the end of the line; it returns
// nil for one without effect (pass, a docstring, an expression).
func (b *bodyParser) simple() (*stmt, error) {
	p := &b.p
	t := p.peek()
	var s *stmt
	switch {
	case t.kind == tName && t.text == "pass":
		p.next()
	case t.kind == tName && t.text == "return":
		p.next()
		if p.peek().kind == tEOF {
			return nil, &exprError{t.pos, "return needs a value: the cost"}
		}
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		s = &stmt{kind: sReturn, pos: t.pos, x: x}
	case t.kind == tName && !keywords[t.text] && unsupported[t.text] == "" && p.i+1 < len(p.toks) &&
		p.toks[p.i+1].kind == tOp && (p.toks[p.i+1].text == "=" || augOps[p.toks[p.i+1].text] != 0):
		p.next()
		op := p.next()
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		if aop := augOps[op.text]; aop != 0 {
			if x, err = mk(&node{op: aop, pos: op.pos, kids: []*node{{op: opName, pos: t.pos, name: t.text}, x}}); err != nil {
				return nil, err
			}
		}
		b.fn.stored[t.text] = true
		s = &stmt{kind: sAssign, pos: t.pos, name: t.text, x: x}
	case t.kind == tString && p.toks[p.i+1].kind == tEOF:
		p.next() // a docstring
	default:
		if _, err := p.expr(); err != nil {
			return nil, err
		}
		if q := p.peek(); q.kind == tOp && (q.text == "=" || augOps[q.text] != 0) {
			return nil, &exprError{q.pos, "only assignments to a single name are supported"}
		}
	}
	if q := p.peek(); q.kind != tEOF {
		if q.kind == tOp || q.kind == tName {
			return nil, &exprError{q.pos, fmt.Sprintf("unexpected %q", q.text)}
		}
		return nil, p.unexpected(q)
	}
	return s, nil
}

// colon parses the ":" that ends a compound statement's header and the
// suite after it: a simple statement on the same line, or an indented
// block.
func (b *bodyParser) colon(indent int) ([]*stmt, error) {
	p := &b.p
	if !p.is(":") {
		if t := p.peek(); t.kind != tEOF {
			return nil, p.unexpected(t)
		}
		return nil, &exprError{p.peek().pos, `expected ":"`}
	}
	c := p.next()
	if p.peek().kind != tEOF {
		s, err := b.simple()
		if err != nil || s == nil {
			return nil, err
		}
		return []*stmt{s}, nil
	}
	return b.block(indent, c.pos)
}

func (b *bodyParser) ifStmt(indent int) (*stmt, error) {
	p := &b.p
	s := &stmt{kind: sIf, pos: p.next().pos}
	for {
		test, err := p.expr()
		if err != nil {
			return nil, err
		}
		body, err := b.colon(indent)
		if err != nil {
			return nil, err
		}
		s.tests, s.bodies = append(s.tests, test), append(s.bodies, body)
		if b.i >= len(b.lines) || b.lines[b.i].indent != indent {
			return s, nil
		}
		switch b.firstWord(b.i) {
		case "elif":
			if err := b.line(b.i); err != nil {
				return nil, err
			}
			b.i++
			p.next()
			continue
		case "else":
			if err := b.line(b.i); err != nil {
				return nil, err
			}
			b.i++
			p.next()
			body, err := b.colon(indent)
			if err != nil {
				return nil, err
			}
			if body == nil {
				body = []*stmt{} // else: pass
			}
			s.orelse = body
		}
		return s, nil
	}
}

// hasReturn reports whether src holds the keyword return: pyDCOP's rule
// for a function body rather than an expression.
func hasReturn(src string) bool {
	toks, err := lexMode(src, true)
	if err != nil {
		// Let the statement parser report the error when it may be one.
		return strings.Contains(src, "return")
	}
	for _, t := range toks {
		if t.kind == tName && t.text == "return" {
			return true
		}
	}
	return false
}

// program is a constraint's compiled function: an expression, or a body.
type program struct {
	expr    *node
	fn      *function
	scratch []value // fn's environment, reused for every evaluation
}

// compile parses a constraint's function text; mod, when not nil, is its
// source file. It returns the names the function reads as variables (in
// order of first appearance); errors are *exprError with offsets in src.
func compile(src string, mod *module) (*program, []string, error) {
	if !hasReturn(src) {
		toks, err := lex(src)
		if err != nil {
			return nil, nil, err
		}
		p := &parser{toks: toks, seen: make(map[string]bool), mod: mod}
		n, err := p.expr()
		if err != nil {
			return nil, nil, err
		}
		if t := p.peek(); t.kind != tEOF {
			return nil, nil, p.unexpected(t)
		}
		prog := &program{expr: n}
		if err := linkCalls(mod, p.calls, nil); err != nil {
			return nil, nil, err
		}
		if len(p.calls) > 0 {
			if steps := nodeSteps(n); steps > maxSteps {
				return nil, nil, &exprError{0, fmt.Sprintf("one evaluation may apply more than %d operators", maxSteps)}
			}
		}
		return prog, p.names, nil
	}
	b := newBodyParser(src, mod, false)
	fn := &function{src: src}
	b.begin(fn)
	body, err := b.block(-1, 0)
	if err != nil {
		return nil, nil, err
	}
	fn.body = body
	b.end()
	if err := linkCalls(mod, fn.calls, nil); err != nil {
		return nil, nil, err
	}
	if fn.steps = bodySteps(fn.body); fn.steps > maxSteps {
		return nil, nil, &exprError{0, fmt.Sprintf("one evaluation may apply more than %d operators", maxSteps)}
	}
	return &program{fn: fn}, fn.free, nil
}

// bind resolves the names of the program: vars are the variables of its
// scope, in order (the slots of the environment eval receives), and
// consts the names fixed to values.
func (pr *program) bind(vars []string, consts map[string]value) error {
	if pr.expr != nil {
		return bind(pr.expr, vars, consts)
	}
	if err := pr.fn.bind(vars, consts); err != nil {
		return err
	}
	pr.scratch = make([]value, pr.fn.nslots)
	return nil
}

// eval evaluates the program with the variables' values in env.
func (pr *program) eval(env []value) (value, error) {
	if pr.expr != nil {
		return eval(pr.expr, env)
	}
	copy(pr.scratch, env)
	for k := len(env); k < len(pr.scratch); k++ {
		pr.scratch[k] = value{k: kUnbound}
	}
	return pr.fn.run(pr.scratch)
}

// bind gives the parameters the first slots and the other assigned names
// the next ones, and resolves every name of the body.
func (f *function) bind(params []string, consts map[string]value) error {
	f.params = params
	locals := make(map[string]int, len(params)+len(f.stored))
	for i, name := range params {
		locals[name] = i
	}
	f.nslots = len(params)
	for _, s := range f.allStmts() {
		if s.kind == sAssign {
			if _, ok := locals[s.name]; !ok {
				locals[s.name] = f.nslots
				f.nslots++
			}
		}
	}
	for _, s := range f.allStmts() {
		if s.kind == sAssign {
			s.slot = locals[s.name]
		}
		for _, x := range append([]*node{s.x}, s.tests...) {
			if x == nil {
				continue
			}
			if err := bindScope(x, locals, nil, consts); err != nil {
				return err
			}
		}
	}
	return nil
}

// allStmts returns every statement of the body, nested ones included.
func (f *function) allStmts() []*stmt {
	var out []*stmt
	var walk func([]*stmt)
	walk = func(ss []*stmt) {
		for _, s := range ss {
			out = append(out, s)
			for _, b := range s.bodies {
				walk(b)
			}
			walk(s.orelse)
		}
	}
	walk(f.body)
	return out
}

// call runs a function of a source file on its arguments.
func (f *function) call(args []value) (value, error) {
	env := make([]value, f.nslots)
	copy(env, args)
	for k := len(args); k < len(env); k++ {
		env[k] = value{k: kUnbound}
	}
	return f.run(env)
}

func (f *function) run(env []value) (value, error) {
	v, done, err := f.exec(f.body, env)
	if err != nil {
		return value{}, err
	}
	if !done {
		return value{}, f.errorAt(f.pos, errors.New("the function ends without return (it would return None)"))
	}
	return v, nil
}

// exec runs stmts; done reports a return.
func (f *function) exec(stmts []*stmt, env []value) (v value, done bool, err error) {
	for _, s := range stmts {
		switch s.kind {
		case sReturn:
			v, err := eval(s.x, env)
			if err != nil {
				return value{}, false, f.errorAt(s.pos, err)
			}
			return v, true, nil
		case sAssign:
			v, err := eval(s.x, env)
			if err != nil {
				return value{}, false, f.errorAt(s.pos, err)
			}
			env[s.slot] = v
		case sIf:
			branch := s.orelse
			for k, test := range s.tests {
				t, err := eval(test, env)
				if err != nil {
					return value{}, false, f.errorAt(s.pos, err)
				}
				if t.truth() {
					branch = s.bodies[k]
					break
				}
			}
			if v, done, err := f.exec(branch, env); err != nil || done {
				return v, done, err
			}
		}
	}
	return value{}, false, nil
}

// sourceError is an error raised while running a function of a source
// file, located in that file.
type sourceError struct {
	file, fn string
	line     int
	err      error
}

func (e *sourceError) Error() string {
	return fmt.Sprintf("%s:%d: in %s: %v", e.file, e.line, e.fn, e.err)
}

func (e *sourceError) Unwrap() error { return e.err }

// errorAt locates err at offset pos of a source file's function; errors
// of a constraint's own body, and errors already located, pass through.
func (f *function) errorAt(pos int, err error) error {
	var se *sourceError
	if f.file == "" || errors.As(err, &se) {
		return err
	}
	return &sourceError{file: f.file, fn: f.name, line: lineAt(f.src, pos), err: err}
}

// lineAt returns the 1-based line of offset pos in src.
func lineAt(src string, pos int) int {
	return 1 + strings.Count(src[:min(pos, len(src))], "\n")
}

// parseModule compiles a source file: functions (def) and docstrings
// only. Errors are *exprError with offsets in src.
func parseModule(file, src string) (*module, error) {
	mod := &module{file: file, src: src, funcs: make(map[string]*function)}
	b := newBodyParser(src, mod, true)
	for b.i < len(b.lines) {
		l := b.lines[b.i]
		if l.indent > 0 {
			return nil, &exprError{l.start, "unexpected indent"}
		}
		if err := b.line(b.i); err != nil {
			return nil, err
		}
		b.i++
		p := &b.p
		t := p.next()
		switch {
		case t.kind == tString && p.peek().kind == tEOF:
			continue // the module's docstring
		case t.kind == tName && (t.text == "import" || t.text == "from"):
			return nil, &exprError{t.pos, "imports are not supported: hearth evaluates the functions of a source file itself and does not run Python"}
		case t.kind != tName || t.text != "def":
			return nil, &exprError{t.pos, "a source file may only define functions (def)"}
		}
		fn, err := b.def(t)
		if err != nil {
			return nil, err
		}
		if _, dup := mod.funcs[fn.name]; dup {
			return nil, &exprError{fn.pos, fmt.Sprintf("function %s is defined twice", fn.name)}
		}
		mod.funcs[fn.name] = fn
		mod.order = append(mod.order, fn)
	}
	for _, fn := range mod.order {
		if err := fn.bind(fn.params, nil); err != nil {
			return nil, err
		}
	}
	for _, fn := range mod.order {
		if err := mod.link(fn); err != nil {
			return nil, err
		}
	}
	return mod, nil
}

// def parses "def name(params):" and the function's body.
func (b *bodyParser) def(kw token) (*function, error) {
	p := &b.p
	name := p.next()
	if name.kind != tName || keywords[name.text] || unsupported[name.text] != "" {
		return nil, &exprError{name.pos, "expected a function name after def"}
	}
	fn := &function{name: name.text, file: b.p.mod.file, src: b.src, pos: kw.pos}
	b.begin(fn)
	open := p.next()
	if !(open.kind == tOp && open.text == "(") {
		return nil, &exprError{open.pos, `expected "(" after the function's name`}
	}
	seen := make(map[string]bool)
	for !p.is(")") {
		t := p.next()
		if t.kind != tName || keywords[t.text] || unsupported[t.text] != "" {
			if t.kind == tEOF {
				return nil, &exprError{open.pos, "unclosed parenthesis"}
			}
			return nil, &exprError{t.pos, "parameters must be plain names (no defaults, *args or annotations)"}
		}
		if seen[t.text] {
			return nil, &exprError{t.pos, fmt.Sprintf("parameter %s appears twice", t.text)}
		}
		seen[t.text] = true
		fn.params = append(fn.params, t.text)
		if p.is(",") {
			p.next()
		} else if !p.is(")") {
			return nil, &exprError{p.peek().pos, "parameters must be plain names (no defaults, *args or annotations)"}
		}
	}
	p.next()
	body, err := b.colon(0)
	if err != nil {
		return nil, err
	}
	fn.body = body
	b.end()
	return fn, nil
}

// link resolves the calls of fn to the module's functions, refuses
// recursion, and computes fn's static bounds.
func (m *module) link(fn *function) error {
	switch fn.state {
	case 2:
		return nil
	case 1:
		return &exprError{fn.pos, fmt.Sprintf("function %s calls itself (recursion is not supported)", fn.name)}
	}
	fn.state = 1
	if err := linkCalls(m, fn.calls, fn); err != nil {
		return err
	}
	fn.state = 2
	fn.steps = bodySteps(fn.body)
	for _, c := range fn.calls {
		fn.depth = max(fn.depth, c.user.depth+1)
	}
	if fn.steps > maxSteps {
		return &exprError{fn.pos, fmt.Sprintf("function %s may apply more than %d operators in one call", fn.name, maxSteps)}
	}
	if fn.depth > maxDepth {
		return &exprError{fn.pos, fmt.Sprintf("function %s makes calls more than %d deep", fn.name, maxDepth)}
	}
	return nil
}

// linkCalls points every call at its function in mod (linking it first
// when from is a function of mod) and checks the number of arguments.
func linkCalls(mod *module, calls []*node, from *function) error {
	for _, c := range calls {
		target, ok := mod.funcs[c.name]
		if !ok {
			return &exprError{c.pos, fmt.Sprintf("unknown function %s: %s defines %s", c.name, mod.file, mod.names())}
		}
		if len(c.kids) != len(target.params) {
			return &exprError{c.pos, fmt.Sprintf("%s() takes %d argument(s), got %d", c.name, len(target.params), len(c.kids))}
		}
		if from != nil {
			if err := mod.link(target); err != nil {
				if target.state == 1 {
					return &exprError{c.pos, fmt.Sprintf("function %s calls %s, which calls it back (recursion is not supported)", from.name, target.name)}
				}
				return err
			}
		}
		c.user = target
	}
	return nil
}

func (m *module) names() string {
	if len(m.order) == 0 {
		return "no function"
	}
	names := make([]string, len(m.order))
	for i, f := range m.order {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

// nodeSteps bounds the operators that evaluating n applies, saturating
// above maxSteps.
func nodeSteps(n *node) int {
	s := 1
	if n.op == opUser && n.user != nil {
		s += n.user.steps
	}
	for _, k := range n.kids {
		if s > maxSteps {
			break
		}
		s += nodeSteps(k)
	}
	return min(s, maxSteps+1)
}

// bodySteps bounds the operators of one run of a body, every branch
// counted.
func bodySteps(body []*stmt) int {
	s := 0
	for _, st := range body {
		for _, x := range append([]*node{st.x}, st.tests...) {
			if x != nil {
				s += nodeSteps(x)
			}
		}
		for _, b := range st.bodies {
			s += bodySteps(b)
		}
		s += bodySteps(st.orelse)
		if s > maxSteps {
			return maxSteps + 1
		}
	}
	return s
}
