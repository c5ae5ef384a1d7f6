package pydcop

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// evalString compiles and evaluates an expression without variables and
// returns "type:str(value)", the form Python prints with
// type(v).__name__ + ":" + repr(v) for floats and str(v) otherwise.
func evalString(src string) (string, error) {
	root, _, err := parseExpr(src)
	if err != nil {
		return "", err
	}
	if err := bind(root, nil, nil); err != nil {
		return "", err
	}
	v, err := eval(root, nil)
	if err != nil {
		return "", err
	}
	return v.typeName() + ":" + v.String(), nil
}

// The expected values were printed by CPython 3 for the same expressions.
func TestExpr(t *testing.T) {
	tests := []struct{ src, want string }{
		{"1 + 2 * 3", "int:7"},
		{"(1 + 2) * 3", "int:9"},
		{"7 / 2", "float:3.5"},
		{"7 // 2", "int:3"},
		{"-7 // 2", "int:-4"},
		{"7 // -2", "int:-4"},
		{"-7 % 2", "int:1"},
		{"7 % -2", "int:-1"},
		{"-7 % -2", "int:-1"},
		{"7.5 // 2", "float:3.0"},
		{"-7.5 // 2", "float:-4.0"},
		{"-7.5 % 2", "float:0.5"},
		{"7.5 % -2", "float:-0.5"},
		{"5 % 2.5", "float:0.0"},
		{"-0.0 % 5", "float:0.0"},
		{"1 // 0.3", "float:3.0"},
		{"-2**2", "int:-4"},
		{"2**-1", "float:0.5"},
		{"2**3**2", "int:512"},
		{"(-2)**2", "int:4"},
		{"-2**-2", "float:-0.25"},
		{"2**62", "int:4611686018427387904"},
		{"(-8)**(1/3) if False else 1", "int:1"},
		{"1 < 2 < 3", "bool:True"},
		{"3 > 2 > 2", "bool:False"},
		{"1 < 3 > 2", "bool:True"},
		{"1 == 1.0", "bool:True"},
		{"1 != 1.0", "bool:False"},
		{"'a' < 'b'", "bool:True"},
		{"'a' == 1", "bool:False"},
		{"'a' != 1", "bool:True"},
		{"True + True", "int:2"},
		{"-True", "int:-1"},
		{"not 0", "bool:True"},
		{"not 'x'", "bool:False"},
		{"0 or 5", "int:5"},
		{"3 and 0", "int:0"},
		{"3 and 'x'", "str:x"},
		{"'' or 'y'", "str:y"},
		{"0 and 1/0", "int:0"},
		{"1 or 1/0", "int:1"},
		{"1 if 0 else 2", "int:2"},
		{"1 if 1 else 2 if 0 else 3", "int:1"},
		{"(1 if 0 else 2) + 1", "int:3"},
		{"abs(-3)", "int:3"},
		{"abs(-3.5)", "float:3.5"},
		{"abs(True)", "int:1"},
		{"min(3, 1, 2)", "int:1"},
		{"max(3, 1, 2)", "int:3"},
		{"min(1, 1.0)", "int:1"},
		{"max(1.0, 1)", "float:1.0"},
		{"max('a', 'b')", "str:b"},
		{"round(2.5)", "int:2"},
		{"round(3.5)", "int:4"},
		{"round(-2.5)", "int:-2"},
		{"round(2.675, 2)", "float:2.67"},
		{"round(0.125, 2)", "float:0.12"},
		{"round(1234.5, -2)", "float:1200.0"},
		{"round(15, -1)", "int:20"},
		{"round(25, -1)", "int:20"},
		{"round(-15, -1)", "int:-20"},
		{"round(7)", "int:7"},
		{"int(3.9)", "int:3"},
		{"int(-3.9)", "int:-3"},
		{"int('42')", "int:42"},
		{"int(True)", "int:1"},
		{"float(3)", "float:3.0"},
		{"float('inf')", "float:inf"},
		{"float('-inf') < 0", "bool:True"},
		{"float(' 2.5 ')", "float:2.5"},
		{"bool(0.0)", "bool:False"},
		{"bool('a')", "bool:True"},
		{"pow(2, 10)", "int:1024"},
		{"pow(2, -2)", "float:0.25"},
		{"pow(2.0, 0.5)", "float:1.4142135623730951"},
		{"1e3", "float:1000.0"},
		{"1.5e-3", "float:0.0015"},
		{".5", "float:0.5"},
		{"5.", "float:5.0"},
		{"0x1f", "int:31"},
		{"0o17", "int:15"},
		{"0b101", "int:5"},
		{"1_000", "int:1000"},
		{"'a' 'b'", "str:ab"},
		{"'a' + 'b'", "str:ab"},
		{"\"it's\"", "str:it's"},
		{"'tab\\tx'", "str:tab\tx"},
		{"1 + 2 == 3", "bool:True"},
		{"not 1 == 2", "bool:True"},
		{"not 1 < 2 and 3", "bool:False"},
		{"1 - -1", "int:2"},
		{"- - 1", "int:1"},
		{"+-+1", "int:-1"},
		{"10 - 2 - 3", "int:5"},
		{"2 * 3 % 4", "int:2"},
		{"100 / 10 / 5", "float:2.0"},
		{"2 ** 0.5", "float:1.4142135623730951"},
		{"1e308 * 10", "float:inf"},
		{"0.1 + 0.2", "float:0.30000000000000004"},
		{"1/3", "float:0.3333333333333333"},
		{"2/3", "float:0.6666666666666666"},
		{"10/3", "float:3.3333333333333335"},
		{"1e16", "float:1e+16"},
		{"1e-5", "float:1e-05"},
		{"123456789.0 * 1e8", "float:1.23456789e+16"},
		{"0.0001", "float:0.0001"},
		{"-0.0", "float:-0.0"},
		{"3 >= 3.0", "bool:True"},
		{"2 <= 1.5", "bool:False"},
		{"9007199254740993 == 9007199254740992.0", "bool:False"},
		{"9007199254740993 > 9007199254740992.0", "bool:True"},
		{"True == 1", "bool:True"},
		{"False < True", "bool:True"},
		{"(1 < 2) + (2 < 3)", "int:2"},
	}
	for _, tt := range tests {
		got, err := evalString(tt.src)
		if err != nil {
			t.Errorf("%s: error %v, want %s", tt.src, err, tt.want)
			continue
		}
		if got != tt.want {
			t.Errorf("%s = %s, want %s", tt.src, got, tt.want)
		}
	}
}

func TestExprVariables(t *testing.T) {
	root, names, err := parseExpr("b + a * b - (c if a > 0 else abs(d))")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, " "); got != "b a c d" {
		t.Errorf("names in order of appearance = %q, want \"b a c d\"", got)
	}
	consts := map[string]value{"d": intValue(-7)}
	if err := bind(root, []string{"b", "a", "c"}, consts); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		a, b, c int64
		want    string
	}{
		{1, 2, 10, "int:-6"}, // 2 + 1*2 - 10
		{0, 2, 10, "int:-5"}, // 2 + 0 - 7
		{-1, 3, 0, "int:-7"}, // 3 - 3 - 7
	} {
		v, err := eval(root, []value{intValue(tt.b), intValue(tt.a), intValue(tt.c)})
		if err != nil {
			t.Fatal(err)
		}
		if got := v.typeName() + ":" + v.String(); got != tt.want {
			t.Errorf("a=%d b=%d c=%d: got %s, want %s", tt.a, tt.b, tt.c, got, tt.want)
		}
	}
	// Strings and numbers from domains.
	root, _, err = parseExpr("10 if v == 'R' else v2 * 2")
	if err != nil {
		t.Fatal(err)
	}
	if err := bind(root, []string{"v", "v2"}, nil); err != nil {
		t.Fatal(err)
	}
	v, err := eval(root, []value{strValue("G"), floatValue(1.5)})
	if err != nil || v.String() != "3.0" {
		t.Errorf("got %v, %v; want 3.0", v, err)
	}
}

func TestExprErrors(t *testing.T) {
	tests := []struct {
		src  string
		pos  int
		want string
	}{
		{"1 +", 3, "unexpected end of expression"},
		{"(1 + 2", 0, "unclosed parenthesis"},
		{"1 + 2)", 5, `unexpected ")"`},
		{"foo(1)", 0, "unknown function foo"},
		{"math.sqrt(2)", 4, "attribute access (.) is not supported"},
		{"x in y", 2, "the operator in is not supported"},
		{"x not in y", 2, `unexpected "not"`},
		{"x is None", 2, "the operator is is not supported"},
		{"None", 0, "None is not supported"},
		{"lambda: 1", 0, "lambda is not supported"},
		{"return 1", 0, "statements (return) is not supported"},
		{"if a == 2:\n    b = 4", 0, "statements are not supported"},
		{"1 if 2", 6, "conditional expression without else"},
		{"min(1)", 0, "min() takes at least 2 arguments, got 1"},
		{"round()", 0, "round() takes 1 to 2 arguments, got 0"},
		{"abs(1, 2)", 0, "abs() takes 1 argument(s), got 2"},
		{"'abc", 0, "unterminated string"},
		{"'''abc'''", 0, "triple-quoted strings are not supported"},
		{"1j", 0, `bad number "1j"`},
		{"0777", 0, "leading zeros"},
		{"1__0", 0, `bad number "1__0"`},
		{"99999999999999999999", 0, "integer 99999999999999999999 is out of range"},
		{"f'x'", 0, "string prefix f is not supported"},
		{"[1]", 0, `unexpected character '['`},
		{"1 & 2", 2, `unexpected character '&'`},
		{"a = 1", 2, `unexpected character '='`},
		{"", 0, "unexpected end of expression"},
		{"1 2", 2, `unexpected "2"`},
		{"max(1, 2", 3, "unclosed parenthesis"},
		{"x +\n  * 2", 6, `unexpected "*"`},
		{strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300), 200, "nested more than 200 levels"},
		{strings.Repeat("-", 300) + "1", 199, "nested more than 200 levels"},
		{strings.Repeat("not ", 300) + "1", 796, "nested more than 200 levels"},
		{"2" + strings.Repeat("**2", 300), 598, "nested more than 200 levels"},
		{"unknown + 1", 0, "unknown name unknown"},
		{strings.Repeat("1+", 20000) + "1", 20001, "expression more than 10000 operators deep"},
		{strings.Repeat("1<", 20000) + "1", -1, ""},
		{strings.Repeat("1 and ", 20000) + "1", -1, ""},
	}
	for _, tt := range tests {
		_, err := evalString(tt.src)
		if tt.pos < 0 { // long but flat: fine
			if err != nil {
				t.Errorf("%.20s...: %v", tt.src, err)
			}
			continue
		}
		var ee *exprError
		if !errors.As(err, &ee) {
			t.Errorf("%q: error %v, want an exprError %q", tt.src, err, tt.want)
			continue
		}
		if !strings.Contains(ee.msg, tt.want) || ee.pos != tt.pos {
			t.Errorf("%q: error %q at %d, want %q at %d", tt.src, ee.msg, ee.pos, tt.want, tt.pos)
		}
	}
}

func TestExprRuntimeErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"1 / 0", "division by zero"},
		{"1 // 0", "division by zero"},
		{"1 % 0", "division by zero"},
		{"1.5 / 0", "division by zero"},
		{"1.5 // 0.0", "division by zero"},
		{"1.5 % 0", "division by zero"},
		{"2 ** 64", "integer overflow"},
		{"9223372036854775807 + 1", "integer overflow"},
		{"-9223372036854775807 - 2", "integer overflow"},
		{"3037000500 * 3037000500", "integer overflow"},
		{"-(-9223372036854775807 - 1)", "integer overflow"},
		{"(-9223372036854775807 - 1) // -1", "integer overflow"},
		{"abs(-9223372036854775807 - 1)", "integer overflow"},
		{"'a' < 1", "'<' not supported between instances of 'str' and 'int'"},
		{"max('a', 1)", "'>' not supported between instances of 'int' and 'str'"},
		{"'a' + 1", "unsupported operand types for +: 'str' and 'int'"},
		{"'a' * 3", "unsupported operand types for *: 'str' and 'int'"},
		{"-'a'", "bad operand type for unary -: 'str'"},
		{"(-8.0) ** 0.5", "complex number"},
		{"0 ** -1", "0 cannot be raised to a negative power"},
		{"0.0 ** -1", "0.0 cannot be raised to a negative power"},
		{"10.0 ** 400", "float power overflows"},
		{"int('x')", "invalid literal for int()"},
		{"int(float('nan'))", "cannot convert float NaN to integer"},
		{"round(float('inf'))", "cannot convert float infinity to integer"},
		{"int(1e300)", "integer overflow"},
		{"float('0x10')", "could not convert string to float"},
		{"abs('a')", "bad operand type for abs()"},
		{"round('a')", "type str doesn't define __round__"},
		{"round(1.5, 1.0)", "'float' object cannot be interpreted as an integer"},
	}
	for _, tt := range tests {
		got, err := evalString(tt.src)
		if err == nil {
			t.Errorf("%s = %s, want error %q", tt.src, got, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %q, want %q", tt.src, err, tt.want)
		}
	}
}

func TestPyFloat(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 0.1: "0.1", 1e16: "1e+16", 1e15: "1000000000000000.0", 1e-4: "0.0001",
		1e-5: "1e-05", -2.5: "-2.5", math.Inf(-1): "-inf", 1.5e300: "1.5e+300", 123.456: "123.456",
	} {
		if got := pyFloat(f); got != want {
			t.Errorf("pyFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

func FuzzExpr(f *testing.F) {
	for _, s := range []string{
		"1 + 2 * 3", "-2**2", "a if b else c", "abs(a - b) + min(a, b, 2) - max(a // 2, b % 3)",
		"round(a * 0.5, 1) - (a < b < c)", "'x' + 'y' == s", "not a or b and c", "float('inf')",
		"int('12') + pow(2, -2)", "0x1f + 0o7 + 0b1 + 1_0 + .5e3", "((a))", "a ** b ** c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		root, names, err := parseExpr(src)
		if err != nil {
			var ee *exprError
			if !errors.As(err, &ee) || ee.pos < 0 || ee.pos > len(src) {
				t.Fatalf("bad error %v for %q", err, src)
			}
			return
		}
		if err := bind(root, names, nil); err != nil {
			t.Fatalf("bind with all names: %v", err)
		}
		env := make([]value, len(names))
		samples := []value{intValue(-3), floatValue(0.5), strValue("R"), boolValue(true), intValue(math.MaxInt64)}
		for i := range samples {
			for k := range env {
				env[k] = samples[(i+k)%len(samples)]
			}
			if v, err := eval(root, env); err == nil {
				_, _ = v.cost()
				_ = v.String()
			}
		}
	})
}
