package pydcop

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// This file evaluates expression trees with Python 3 semantics: integers
// and floats are distinct (7/2 is 3.5, 7//2 is 3, -7//2 is -4, -7%2 is 1),
// booleans are the integers 0 and 1, strings compare with == and order
// lexicographically, and mixing strings with numbers in arithmetic or
// ordering is an error. Integers are 64-bit: where Python would grow a big
// integer, evaluation fails with an overflow error instead.

type kind uint8

const (
	kInt kind = iota
	kFloat
	kBool
	kStr
	kUnbound // a local variable not yet assigned
)

// value is a Python value: an int (i), a float (f), a bool (i is 0 or 1)
// or a str (s).
type value struct {
	k kind
	i int64
	f float64
	s string
}

func intValue(i int64) value     { return value{k: kInt, i: i} }
func floatValue(f float64) value { return value{k: kFloat, f: f} }
func strValue(s string) value    { return value{k: kStr, s: s} }

func boolValue(b bool) value {
	if b {
		return value{k: kBool, i: 1}
	}
	return value{k: kBool}
}

func (v value) typeName() string {
	return [...]string{kInt: "int", kFloat: "float", kBool: "bool", kStr: "str", kUnbound: "unbound"}[v.k]
}

func (v value) isInt() bool { return v.k == kInt || v.k == kBool }

func (v value) float() float64 {
	if v.k == kFloat {
		return v.f
	}
	return float64(v.i)
}

func (v value) truth() bool {
	switch v.k {
	case kFloat:
		return v.f != 0
	case kStr:
		return v.s != ""
	}
	return v.i != 0
}

// String returns Python's str() of the value.
func (v value) String() string {
	switch v.k {
	case kFloat:
		return pyFloat(v.f)
	case kBool:
		if v.i != 0 {
			return "True"
		}
		return "False"
	case kStr:
		return v.s
	}
	return strconv.FormatInt(v.i, 10)
}

// pyFloat formats f as Python's repr does: the shortest digits that read
// back, always with a point or an exponent, and an exponent outside
// 1e-4 <= |f| < 1e16.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if f != 0 && (exp < -4 || exp >= 16) {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsRune(s, '.') {
		s += ".0"
	}
	return s
}

var (
	errOverflow = errors.New("integer overflow (hearth evaluates integers on 64 bits)")
	errDivZero  = errors.New("division by zero")
)

// eval evaluates n with the variables' values in env.
func eval(n *node, env []value) (value, error) {
	switch n.op {
	case opConst:
		return n.val, nil
	case opVar:
		if v := env[n.slot]; v.k != kUnbound {
			return v, nil
		}
		return value{}, fmt.Errorf("local variable %s is used before it is assigned", n.name)
	case opNeg, opPos:
		x, err := eval(n.kids[0], env)
		if err != nil {
			return value{}, err
		}
		return unary(n.op, x)
	case opNot:
		x, err := eval(n.kids[0], env)
		if err != nil {
			return value{}, err
		}
		return boolValue(!x.truth()), nil
	case opAnd, opOr:
		// Python returns the operand that decided, not a bool.
		var x value
		for _, k := range n.kids {
			var err error
			if x, err = eval(k, env); err != nil {
				return value{}, err
			}
			if x.truth() == (n.op == opOr) {
				break
			}
		}
		return x, nil
	case opCompare:
		left, err := eval(n.kids[0], env)
		if err != nil {
			return value{}, err
		}
		for i, op := range n.cmps {
			right, err := eval(n.kids[i+1], env)
			if err != nil {
				return value{}, err
			}
			ok, err := compare(op, left, right)
			if err != nil || !ok {
				return boolValue(false), err
			}
			left = right
		}
		return boolValue(true), nil
	case opCond:
		test, err := eval(n.kids[1], env)
		if err != nil {
			return value{}, err
		}
		if test.truth() {
			return eval(n.kids[0], env)
		}
		return eval(n.kids[2], env)
	case opCall, opUser:
		args := make([]value, len(n.kids))
		for i, k := range n.kids {
			var err error
			if args[i], err = eval(k, env); err != nil {
				return value{}, err
			}
		}
		if n.op == opUser {
			return n.user.call(args)
		}
		return n.fn.call(args)
	case opAdd, opSub, opMul, opDiv, opFloorDiv, opMod, opPow:
		a, err := eval(n.kids[0], env)
		if err != nil {
			return value{}, err
		}
		b, err := eval(n.kids[1], env)
		if err != nil {
			return value{}, err
		}
		return arith(n.op, a, b)
	}
	return value{}, fmt.Errorf("unresolved name %s", n.name)
}

func unary(op opcode, x value) (value, error) {
	switch x.k {
	case kStr:
		return value{}, fmt.Errorf("bad operand type for %s: 'str'", opText[op])
	case kFloat:
		if op == opNeg {
			return floatValue(-x.f), nil
		}
		return x, nil
	}
	if op == opPos {
		return intValue(x.i), nil
	}
	if x.i == math.MinInt64 {
		return value{}, errOverflow
	}
	return intValue(-x.i), nil
}

func arith(op opcode, a, b value) (value, error) {
	if a.k == kStr || b.k == kStr {
		if op == opAdd && a.k == kStr && b.k == kStr {
			return strValue(a.s + b.s), nil
		}
		return value{}, fmt.Errorf("unsupported operand types for %s: '%s' and '%s'", opText[op], a.typeName(), b.typeName())
	}
	if a.isInt() && b.isInt() {
		return intArith(op, a.i, b.i)
	}
	return floatArith(op, a.float(), b.float())
}

func intArith(op opcode, x, y int64) (value, error) {
	switch op {
	case opAdd:
		if y > 0 && x > math.MaxInt64-y || y < 0 && x < math.MinInt64-y {
			return value{}, errOverflow
		}
		return intValue(x + y), nil
	case opSub:
		if y < 0 && x > math.MaxInt64+y || y > 0 && x < math.MinInt64+y {
			return value{}, errOverflow
		}
		return intValue(x - y), nil
	case opMul:
		return mulInt(x, y)
	case opDiv:
		if y == 0 {
			return value{}, errDivZero
		}
		return floatValue(float64(x) / float64(y)), nil
	case opFloorDiv:
		if y == 0 {
			return value{}, errDivZero
		}
		if x == math.MinInt64 && y == -1 {
			return value{}, errOverflow
		}
		q := x / y
		if x%y != 0 && (x < 0) != (y < 0) {
			q--
		}
		return intValue(q), nil
	case opMod:
		if y == 0 {
			return value{}, errDivZero
		}
		r := x % y
		if r != 0 && (r < 0) != (y < 0) {
			r += y
		}
		return intValue(r), nil
	case opPow:
		if y < 0 {
			if x == 0 {
				return value{}, errors.New("0 cannot be raised to a negative power")
			}
			return floatValue(math.Pow(float64(x), float64(y))), nil
		}
		return powInt(x, y)
	}
	return value{}, fmt.Errorf("bad operator")
}

func mulInt(x, y int64) (value, error) {
	if x == 0 || y == 0 {
		return intValue(0), nil
	}
	z := x * y
	if z/y != x || x == -1 && y == math.MinInt64 || y == -1 && x == math.MinInt64 {
		return value{}, errOverflow
	}
	return intValue(z), nil
}

func powInt(x, y int64) (value, error) {
	r := intValue(1)
	for y > 0 {
		if y&1 == 1 {
			var err error
			if r, err = mulInt(r.i, x); err != nil {
				return value{}, err
			}
		}
		y >>= 1
		if y > 0 {
			sq, err := mulInt(x, x)
			if err != nil {
				return value{}, err
			}
			x = sq.i
		}
	}
	return r, nil
}

func floatArith(op opcode, x, y float64) (value, error) {
	switch op {
	case opAdd:
		return floatValue(x + y), nil
	case opSub:
		return floatValue(x - y), nil
	case opMul:
		return floatValue(x * y), nil
	case opDiv:
		if y == 0 {
			return value{}, errDivZero
		}
		return floatValue(x / y), nil
	case opFloorDiv, opMod:
		if y == 0 {
			return value{}, errDivZero
		}
		div, mod := floatDivmod(x, y)
		if op == opMod {
			return floatValue(mod), nil
		}
		return floatValue(div), nil
	case opPow:
		return floatPow(x, y)
	}
	return value{}, fmt.Errorf("bad operator")
}

// floatDivmod is CPython's float divmod: the floor quotient and a
// remainder with the sign of y.
func floatDivmod(x, y float64) (div, mod float64) {
	mod = math.Mod(x, y)
	div = (x - mod) / y
	if mod != 0 {
		if (y < 0) != (mod < 0) {
			mod += y
			div -= 1
		}
	} else {
		mod = math.Copysign(0, y)
	}
	if div != 0 {
		f := math.Floor(div)
		if div-f > 0.5 {
			f++
		}
		div = f
	} else {
		div = math.Copysign(0, x/y)
	}
	return div, mod
}

func floatPow(x, y float64) (value, error) {
	switch {
	case y == 0:
		return floatValue(1), nil
	case x == 0 && y < 0:
		return value{}, errors.New("0.0 cannot be raised to a negative power")
	case x < 0 && y != math.Trunc(y) && !math.IsInf(y, 0):
		return value{}, errors.New("negative number raised to a fractional power (a complex number)")
	}
	r := math.Pow(x, y)
	if math.IsInf(r, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
		return value{}, errors.New("float power overflows")
	}
	return floatValue(r), nil
}

// compare applies a comparison operator with Python's rules.
func compare(op opcode, a, b value) (bool, error) {
	var c int
	switch {
	case a.k == kStr && b.k == kStr:
		c = strings.Compare(a.s, b.s)
	case a.k == kStr || b.k == kStr:
		switch op {
		case opEq:
			return false, nil
		case opNe:
			return true, nil
		}
		return false, fmt.Errorf("'%s' not supported between instances of '%s' and '%s'", opText[op], a.typeName(), b.typeName())
	case a.isInt() && b.isInt():
		c = cmpInt(a.i, b.i)
	default:
		x, y := a.float(), b.float()
		if math.IsNaN(x) || math.IsNaN(y) {
			return op == opNe, nil
		}
		switch {
		case a.isInt():
			c = cmpIntFloat(a.i, y)
		case b.isInt():
			c = -cmpIntFloat(b.i, x)
		default:
			c = cmpFloat(x, y)
		}
	}
	switch op {
	case opEq:
		return c == 0, nil
	case opNe:
		return c != 0, nil
	case opLt:
		return c < 0, nil
	case opLe:
		return c <= 0, nil
	case opGt:
		return c > 0, nil
	}
	return c >= 0, nil
}

func cmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// cmpIntFloat compares an integer with a (non-NaN) float exactly, as
// Python does, without rounding the integer to a float.
func cmpIntFloat(i int64, f float64) int {
	switch {
	case f >= 1<<63:
		return -1
	case f < -(1 << 63):
		return 1
	}
	t := math.Trunc(f)
	if c := cmpInt(i, int64(t)); c != 0 {
		return c
	}
	return cmpFloat(t, f) // the fraction decides
}

// builtin is a Python function callable from expressions.
type builtin struct {
	minArgs, maxArgs int
	call             func(args []value) (value, error)
}

func (b builtin) arity(name string, n int) string {
	switch {
	case b.minArgs == b.maxArgs:
		return fmt.Sprintf("%s() takes %d argument(s), got %d", name, b.minArgs, n)
	case b.maxArgs == math.MaxInt:
		return fmt.Sprintf("%s() takes at least %d arguments, got %d", name, b.minArgs, n)
	}
	return fmt.Sprintf("%s() takes %d to %d arguments, got %d", name, b.minArgs, b.maxArgs, n)
}

const builtinNames = "abs, bool, float, int, max, min, pow, round"

var builtins = map[string]builtin{
	"abs":   {1, 1, pyAbs},
	"min":   {2, math.MaxInt, func(args []value) (value, error) { return pyMinMax(args, opLt) }},
	"max":   {2, math.MaxInt, func(args []value) (value, error) { return pyMinMax(args, opGt) }},
	"round": {1, 2, pyRound},
	"int":   {1, 1, pyInt},
	"float": {1, 1, pyFloatCall},
	"bool":  {1, 1, func(args []value) (value, error) { return boolValue(args[0].truth()), nil }},
	"pow":   {2, 2, func(args []value) (value, error) { return arith(opPow, args[0], args[1]) }},
}

func pyAbs(args []value) (value, error) {
	x := args[0]
	switch x.k {
	case kStr:
		return value{}, errors.New("bad operand type for abs(): 'str'")
	case kFloat:
		return floatValue(math.Abs(x.f)), nil
	}
	if x.i < 0 {
		return unary(opNeg, x)
	}
	return intValue(x.i), nil
}

// pyMinMax returns the first argument that no other beats, as Python's
// min and max do.
func pyMinMax(args []value, better opcode) (value, error) {
	best := args[0]
	for _, a := range args[1:] {
		b, err := compare(better, a, best)
		if err != nil {
			return value{}, err
		}
		if b {
			best = a
		}
	}
	return best, nil
}

func pyRound(args []value) (value, error) {
	x := args[0]
	if x.k == kStr {
		return value{}, errors.New("type str doesn't define __round__")
	}
	if len(args) == 1 {
		if x.isInt() {
			return intValue(x.i), nil
		}
		return floatToInt(math.RoundToEven(x.f))
	}
	nd := args[1]
	if !nd.isInt() {
		return value{}, fmt.Errorf("'%s' object cannot be interpreted as an integer", nd.typeName())
	}
	n := nd.i
	if x.isInt() {
		if n >= 0 {
			return intValue(x.i), nil
		}
		if n < -18 {
			return intValue(0), nil
		}
		p := int64(1)
		for range -n {
			p *= 10
		}
		q, r := x.i/p, x.i%p
		if r < 0 { // floor division
			q, r = q-1, r+p
		}
		if 2*r > p || 2*r == p && q%2 != 0 {
			q++
		}
		return mulInt(q, p)
	}
	f := x.f
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0) || n > 330:
		return floatValue(f), nil
	case n >= 0:
		// strconv rounds the exact binary value half to even, as
		// Python's correctly rounded round() does.
		r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', int(n), 64), 64)
		return floatValue(r), nil
	case n < -308:
		return floatValue(math.Copysign(0, f)), nil
	}
	p := math.Pow10(int(-n))
	return floatValue(math.RoundToEven(f/p) * p), nil
}

func floatToInt(f float64) (value, error) {
	switch {
	case math.IsNaN(f):
		return value{}, errors.New("cannot convert float NaN to integer")
	case math.IsInf(f, 0):
		return value{}, errors.New("cannot convert float infinity to integer")
	case f >= 1<<63 || f < -(1<<63):
		return value{}, errOverflow
	}
	return intValue(int64(f)), nil
}

func pyInt(args []value) (value, error) {
	x := args[0]
	switch x.k {
	case kFloat:
		return floatToInt(math.Trunc(x.f))
	case kStr:
		s := strings.TrimSpace(x.s)
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return value{}, errOverflow
			}
			return value{}, fmt.Errorf("invalid literal for int() with base 10: %q", x.s)
		}
		return intValue(i), nil
	}
	return intValue(x.i), nil
}

func pyFloatCall(args []value) (value, error) {
	x := args[0]
	if x.k != kStr {
		return floatValue(x.float()), nil
	}
	s := strings.ToLower(strings.TrimSpace(x.s))
	switch strings.TrimLeft(s, "+-") {
	case "inf", "infinity", "nan":
		f, _ := strconv.ParseFloat(s, 64)
		return floatValue(f), nil
	}
	if strings.ContainsAny(s, "xpn_") || s == "" {
		return value{}, fmt.Errorf("could not convert string to float: %q", x.s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return value{}, fmt.Errorf("could not convert string to float: %q", x.s)
	}
	return floatValue(f), nil
}

// cost turns an expression's result into a cost: numbers as they are,
// booleans as 0 or 1. +Inf is mva.Hard; NaN and strings are errors.
func (v value) cost() (float64, error) {
	switch v.k {
	case kStr:
		return 0, fmt.Errorf("the expression returned the string %q, not a number", v.s)
	case kFloat:
		if math.IsNaN(v.f) {
			return 0, errors.New("the expression returned NaN")
		}
		return v.f, nil
	}
	return float64(v.i), nil
}
