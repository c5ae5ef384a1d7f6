package xcsp

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/internal/formattest"
	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
)

func readString(t *testing.T, src string) *mva.Problem {
	t.Helper()
	p, err := Read(strings.NewReader(src), "t.xml")
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return p
}

func TestReadSample(t *testing.T) {
	p := formattest.ReadFile(t, Read, "gpube_rep_0_x_10.xml")
	if got, want := p.Stats(), (mva.Stats{Variables: 10, Agents: 10, Functions: 14, MaxArity: 2, MaxDomain: 10}); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
	if p.Name != "random-network" || p.Sense != mva.Minimize || p.Offset != 0 {
		t.Errorf("name %q, sense %v, offset %v; want random-network, min, 0", p.Name, p.Sense, p.Offset)
	}
	for i, v := range p.Variables {
		if want := fmt.Sprintf("v_%d", i); v.Name != want {
			t.Errorf("variable %d is %q, want %q", i, v.Name, want)
		}
		if got, want := p.Agents[v.Agent].Name, fmt.Sprintf("a_%d", i); got != want {
			t.Errorf("variable %s is owned by %q, want %q", v.Name, got, want)
		}
		if got := strings.Join(v.Domain, " "); got != "0 1 2 3 4 5 6 7 8 9" {
			t.Errorf("variable %s has domain %q", v.Name, got)
		}
	}
	// c_0 is r_4_2 over (v_4, v_2): "70:0 0 |53:0 1 |..."; c_13 is r_9_8
	// over (v_9, v_8), whose last tuple is "61:9 9".
	f0, f13 := &p.Functions[0], &p.Functions[13]
	if f0.Name != "c_0" || !reflect.DeepEqual(f0.Scope, []int{4, 2}) {
		t.Errorf("function 0 is %s%v, want c_0[4 2]", f0.Name, f0.Scope)
	}
	if f13.Name != "c_13" || !reflect.DeepEqual(f13.Scope, []int{9, 8}) {
		t.Errorf("function 13 is %s%v, want c_13[9 8]", f13.Name, f13.Scope)
	}
	for _, c := range []struct {
		f    *mva.Function
		vals []int
		want float64
	}{
		{f0, []int{0, 0}, 70}, {f0, []int{0, 1}, 53}, {f0, []int{1, 0}, 76}, {f0, []int{9, 9}, 11},
		{f13, []int{9, 9}, 61}, {f13, []int{8, 9}, 5},
	} {
		if got := formattest.Entry(p, c.f, c.vals...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.f.Name, c.vals, got, c.want)
		}
	}
}

func TestReadFeatures(t *testing.T) {
	const src = `<instance>
<presentation name="feat" maximize="true" format="XCSP 2.1_FRODO"/>
<agents nbAgents="2"><agent name="a0"/><agent name="b"/></agents>
<domains nbDomains="3">
  <domain name="mixed" nbValues="5">1 3..5 -2</domain>
  <domain name="colour" nbValues="3">red green blue</domain>
  <domain name="bin" nbValues="2">0 1</domain>
</domains>
<variables nbVariables="4">
  <variable name="m" domain="mixed" agent="b"/>
  <variable name="c" domain="colour"/>
  <variable name="x" domain="bin"/>
  <variable name="y" domain="bin" agent="a0"/>
</variables>
<relations nbRelations="5">
  <relation name="carry" arity="2" nbTuples="4" semantics="soft" defaultCost="-infinity">
    5: 01 red | 3 green |
    -2.5: -2 blue|
    0: 4 red
  </relation>
  <relation name="eq" arity="2" nbTuples="2" semantics="supports">0 0|1 1</relation>
  <relation name="neq" arity="2" nbTuples="1" semantics="conflicts">1 1</relation>
  <relation name="full" arity="1" nbTuples="2" semantics="soft">7: 0|8: 1</relation>
  <relation name="const" arity="0" nbTuples="1" semantics="soft">4:</relation>
</relations>
<constraints nbConstraints="6">
  <constraint name="c1" arity="2" scope="m c" reference="carry"/>
  <constraint name="c2" arity="2" scope="x y" reference="eq"/>
  <constraint name="c3" scope="y x" reference="neq" agent="PUBLIC"/>
  <constraint name="c4" arity="1" scope="x" reference="full"/>
  <constraint name="c5" arity="1" scope="y" reference="full"/>
  <constraint name="c6" arity="0" scope="" reference="const"/>
</constraints>
</instance>`
	p := readString(t, src)
	if p.Sense != mva.Maximize || p.Name != "feat" {
		t.Errorf("sense %v, name %q; want max, feat", p.Sense, p.Name)
	}
	// "a0" is declared, so the owner of the variables without an agent
	// attribute gets another name.
	wantAgents := []mva.Agent{{Name: "a0"}, {Name: "b"}, {Name: "a0_"}}
	if !reflect.DeepEqual(p.Agents, wantAgents) {
		t.Errorf("agents %v, want %v", p.Agents, wantAgents)
	}
	wantVars := []mva.Variable{
		{Name: "m", Domain: []string{"1", "3", "4", "5", "-2"}, Agent: 1},
		{Name: "c", Domain: []string{"red", "green", "blue"}, Agent: 2},
		{Name: "x", Domain: []string{"0", "1"}, Agent: 2},
		{Name: "y", Domain: []string{"0", "1"}, Agent: 0},
	}
	if !reflect.DeepEqual(p.Variables, wantVars) {
		t.Errorf("variables %v, want %v", p.Variables, wantVars)
	}
	h := mva.Hard
	want := []mva.Function{
		// Utilities negated; -infinity is infeasible; "01" finds "1"; a
		// cost carries over to the following tuples.
		{Name: "c1", Scope: []int{0, 1}, Costs: []float64{
			-5, h, h, // m=1
			h, -5, h, // m=3
			0, h, h, // m=4
			h, h, h, // m=5
			h, h, 2.5, // m=-2
		}},
		{Name: "c2", Scope: []int{2, 3}, Costs: []float64{0, h, h, 0}},
		{Name: "c3", Scope: []int{3, 2}, Costs: []float64{0, 0, 0, h}},
		{Name: "c4", Scope: []int{2}, Costs: []float64{-7, -8}},
		{Name: "c5", Scope: []int{3}, Costs: []float64{-7, -8}},
		{Name: "c6", Scope: []int{}, Costs: []float64{-4}},
	}
	if !reflect.DeepEqual(p.Functions, want) {
		t.Errorf("functions\n got %v\nwant %v", p.Functions, want)
	}
	if math.Signbit(p.Functions[0].Costs[6]) {
		t.Errorf("utility 0 became -0")
	}
}

// base is a valid instance; the error cases below each change one thing.
// The comments give the line numbers that the cases expect.
const base = `<?xml version="1.0" encoding="UTF-8"?>
<instance>
<presentation name="t" maximize="false" format="XCSP 2.1_FRODO"/>
<agents nbAgents="1">
	<agent name="a"/>
</agents>
<domains nbDomains="1">
	<domain name="d" nbValues="3">0..2</domain>
</domains>
<variables nbVariables="2">
	<variable name="x" domain="d" agent="a"/>
	<variable name="y" domain="d" agent="a"/>
</variables>
<relations nbRelations="1">
	<relation name="r" arity="2" nbTuples="2" semantics="soft" defaultCost="0">1: 0 0|2: 1 1</relation>
</relations>
<constraints nbConstraints="1">
	<constraint name="c" arity="2" scope="x y" reference="r"/>
</constraints>
</instance>
`

type errorCase struct {
	name     string
	old, new string // replacement applied to base
	line     int
	msg      string // expected part of the message
}

var errorCases = []errorCase{
	{"unknown variable", `scope="x y"`, `scope="x z"`, 18, `unknown variable "z"`},
	{"repeated scope variable", `scope="x y"`, `scope="x x"`, 18, `appears twice`},
	{"unknown relation", `reference="r"`, `reference="q"`, 18, `unknown relation "q"`},
	{"global constraint", `reference="r"`, `reference="global:allDifferent"`, 18, `global constraint`},
	{"unknown domain", `name="y" domain="d"`, `name="y" domain="e"`, 12, `unknown domain "e"`},
	{"unknown agent", `name="y" domain="d" agent="a"`, `name="y" domain="d" agent="b"`, 12, `unknown agent "b"`},
	{"tuple arity", `2: 1 1<`, `2: 1 1 1<`, 15, `tuple has 3 values, the arity is 2`},
	{"short tuple", `|2: 1 1<`, `|2: 1<`, 15, `tuple has 1 values`},
	{"empty tuple", `2: 1 1<`, `2: 1 1|<`, 15, `tuple has 0 values`},
	{"value outside the domain", `2: 1 1<`, `2: 1 7<`, 15, `value "7" is not in the domain of "y"`},
	{"tuple on a later line", `2: 1 1<`, "\n\n  2: 1 9<", 17, `value "9" is not in the domain`},
	{"relation arity mismatch", `arity="2" scope="x y"`, `arity="1" scope="x"`, 18, `has 1 variables but relation "r" has arity 2`},
	{"constraint arity mismatch", `arity="2" scope="x y"`, `arity="3" scope="x y"`, 18, `arity is 3 but the scope has 2`},
	{"duplicate variable", `name="y" domain`, `name="x" domain`, 12, `variable "x" declared twice (first on line 11)`},
	{"duplicate agent", `<agent name="a"/>`, `<agent name="a"/><agent name="a"/>`, 5, `agent "a" declared twice`},
	{"duplicate domain", `0..2</domain>`, `0..2</domain><domain name="d">1</domain>`, 8, `domain "d" declared twice`},
	{"duplicate relation", `1 1</relation>`, `1 1</relation><relation name="r" arity="1" semantics="soft"/>`, 15, `relation "r" declared twice`},
	{"duplicate constraint", `reference="r"/>`, `reference="r"/><constraint name="c" scope="x" reference="r"/>`, 18, `constraint "c" declared twice`},
	{"duplicate value", `>0..2<`, `>0 1 1<`, 8, `value "1" appears twice`},
	{"duplicate integer", `>0..2<`, `>0 1 01<`, 8, `value "01" equals value "1"`},
	{"nbValues", `nbValues="3"`, `nbValues="4"`, 8, `nbValues="4" but it holds 3 values`},
	{"nbTuples", `nbTuples="2"`, `nbTuples="3"`, 15, `nbTuples="3" but it lists 2 tuples`},
	{"nbVariables", `nbVariables="2"`, `nbVariables="3"`, 10, `holds 2 <variable> elements`},
	{"nbAgents", `nbAgents="1"`, `nbAgents="0"`, 4, `holds 1 <agent> elements`},
	{"nbDomains", `nbDomains="1"`, `nbDomains="x"`, 7, `nbDomains="x" is not a non-negative integer`},
	{"nbConstraints", `nbConstraints="1"`, `nbConstraints="2"`, 17, `holds 1 <constraint>`},
	{"nbRelations", `nbRelations="1"`, `nbRelations="-1"`, 14, `not a non-negative integer`},
	{"malformed cost", `1: 0 0`, `1x: 0 0`, 15, `malformed cost "1x"`},
	{"cost out of range", `1: 0 0`, `1e999: 0 0`, 15, `malformed cost "1e999"`},
	{"NaN cost", `1: 0 0`, `NaN: 0 0`, 15, `malformed cost "NaN"`},
	{"two colons", `1: 0 0`, `1: 0: 0`, 15, `malformed tuple`},
	{"malformed default", `defaultCost="0"`, `defaultCost="zero"`, 15, `defaultCost: malformed cost`},
	{"malformed arity", `arity="2" nbTuples`, `arity="two" nbTuples`, 15, `arity="two"`},
	{"missing arity", `arity="2" nbTuples`, `nbTuples`, 15, `no arity attribute`},
	{"first tuple without cost", `1: 0 0`, `0 0`, 15, `the first tuple has no cost`},
	{"cost in a crisp relation", `semantics="soft" defaultCost="0"`, `semantics="supports"`, 15, `carry no cost`},
	{"default in a crisp relation", `semantics="soft"`, `semantics="conflicts"`, 15, `defaultCost is meaningless`},
	{"bad semantics", `semantics="soft"`, `semantics="hard"`, 15, `semantics "hard"`},
	{"missing semantics", ` semantics="soft"`, ``, 15, `no semantics attribute`},
	{"incomplete relation without default", ` defaultCost="0"`, ``, 18, `no defaultCost and does not list every tuple`},
	{"wrong infinity", `2: 1 1`, `-infinity: 1 1`, 15, `-infinity in a minimisation problem`},
	{"wrong infinity when maximising", `maximize="false"`, `maximize="true"`, 15, ``}, // replaced below
	{"malformed interval", `>0..2<`, `>0..x<`, 8, `malformed interval "0..x"`},
	{"empty interval", `>0..2<`, `>2..0<`, 8, `empty interval`},
	{"empty domain", `>0..2<`, `> <`, 8, `domain "d" is empty`},
	{"huge domain", `>0..2<`, `>0..9223372036854775807<`, 8, `more than 1048576 values`},
	{"huge negative domain", `>0..2<`, `>-9223372036854775808..9223372036854775807<`, 8, `more than 1048576 values`},
	{"maximize", `maximize="false"`, `maximize="maybe"`, 3, `maximize="maybe"`},
	{"format", `format="XCSP 2.1_FRODO"`, `format="XCSP3"`, 3, `format "XCSP3" is not supported`},
	{"second presentation", "</agents>", "</agents>\n<presentation/>", 7, `second <presentation> element (the first is on line 3)`},
	{"predicates", "<constraints ", "<predicates nbPredicates=\"0\"/>\n<constraints ", 17, `intensional constraints are not supported`},
	{"probabilities", "<constraints ", "<probabilities/>\n<constraints ", 17, `random variables`},
	{"random variable", `name="x" domain="d" agent="a"`, `name="x" domain="d" type="random"`, 11, `random variables are not supported`},
	{"unknown element", "<constraints ", "<foo/>\n<constraints ", 17, `unknown element <foo>`},
	{"unexpected item", `<agent name="a"/>`, `<agnt name="a"/>`, 5, `unexpected element <agnt> in <agents>`},
	{"parameters", `reference="r"/>`, `reference="r"><parameters>x y</parameters></constraint>`, 18, `intensional and global constraints are not supported`},
	{"text in a section", `<agent name="a"/>`, `<agent name="a"/>hello`, 5, `unexpected text in <agents>`},
	{"missing name", `<agent name="a"/>`, `<agent/>`, 5, `<agent> has no name attribute`},
	{"missing scope", ` scope="x y"`, ``, 18, `no scope attribute`},
	{"variable with white space", `name="y" domain`, `name="y z" domain`, 12, `contains white space`},
	{"empty name", `<agent name="a"/>`, `<agent name=""/>`, 5, `agent with an empty name`},
	{"missing end tag", "</variables>\n", "", 13, `unexpected element <relations> in <variables>`},
	{"XML syntax", `<agent name="a"/>`, `<agent name="a">`, 6, `XML syntax error: element <agent> closed by </agents>`},
	{"unclosed", "</constraints>\n</instance>\n", "", 19, `XML syntax error: unexpected EOF`},
	{"root", "<instance>", "<instances>", 2, `root element is <instances>`},
	{"element after the root", "</instance>\n", "</instance>\n<x/>", 21, `element <x> after </instance>`},
	{"text after the root", "</instance>\n", "</instance>\nhello", 21, `text outside the <instance> element`},
}

func TestReadErrors(t *testing.T) {
	if _, err := Read(strings.NewReader(base), "t.xml"); err != nil {
		t.Fatalf("base instance: %v", err)
	}
	cases := append(errorCases[:len(errorCases):len(errorCases)],
		errorCase{"no root", base, "", 1, `no <instance> element`},
		errorCase{"other root", base, "<root/>", 1, `root element is <root>, want <instance>`},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := mutate(c)
			if c.name == "wrong infinity when maximising" {
				src = strings.Replace(src, "2: 1 1", "infinity: 1 1", 1)
				c.msg = "utility +infinity in a maximisation problem"
			}
			if src == base {
				t.Fatalf("replacement %q does not apply", c.old)
			}
			_, err := Read(strings.NewReader(src), "t.xml")
			formattest.CheckParseError(t, err, "t.xml", c.line, c.msg)
		})
	}
}

func mutate(c errorCase) string {
	return strings.Replace(base, c.old, c.new, 1)
}

func TestReadLimits(t *testing.T) {
	small := limits{domain: 100, domainTotal: 150, table: 1000, tableTotal: 1500}
	for _, c := range []struct {
		name string
		repl []string // pairs of old and new text, applied to base in turn
		line int
		msg  string
	}{
		{"domain", []string{">0..2<", ">0..100<"}, 8, "more than 100 values"},
		{"domain of words", []string{">0..2<", ">0..98 a b<"}, 8, "more than 100 values"},
		{"domains in all", []string{">0..2</domain>", `>0..99</domain><domain name="e">0..99</domain>`}, 8, "more than 150 values in all"},
		{"table", []string{">0..2<", ">0..99<"}, 18, "more than 1000 entries"},
		{"tables in all", []string{">0..2<", ">0..29<", `nbConstraints="1"`, `nbConstraints="2"`, `reference="r"/>`, `reference="r"/><constraint name="c2" scope="y x" reference="r"/>`}, 18, "more than 1500 entries in all"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(base, ` nbValues="3"`, "", 1)
			for i := 0; i < len(c.repl); i += 2 {
				src = strings.Replace(src, c.repl[i], c.repl[i+1], 1)
			}
			_, err := read(strings.NewReader(src), "t.xml", small)
			formattest.CheckParseError(t, err, "t.xml", c.line, c.msg)
		})
	}
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestReadIOError(t *testing.T) {
	boom := errors.New("boom")
	r := ioMulti(strings.NewReader(base[:100]), failingReader{boom})
	_, err := Read(r, "t.xml")
	if !errors.Is(err, boom) {
		t.Fatalf("error %v does not wrap the reader's error", err)
	}
	var pe *mva.ParseError
	if errors.As(err, &pe) {
		t.Errorf("an I/O error is reported as a parse error: %v", err)
	}
}

// ioMulti is io.MultiReader without its special handling of io.EOF.
func ioMulti(a *strings.Reader, b failingReader) readerFunc {
	return func(p []byte) (int, error) {
		if a.Len() > 0 {
			return a.Read(p)
		}
		return b.Read(p)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func TestWriteSmall(t *testing.T) {
	p := &mva.Problem{
		Name:   "small",
		Sense:  mva.Maximize,
		Agents: []mva.Agent{{Name: "alice"}, {Name: "bob"}},
		Variables: []mva.Variable{
			{Name: "x", Domain: []string{"0", "1", "2", "3", "7"}, Agent: 0},
			{Name: "y", Domain: []string{"red", "green"}, Agent: 1},
			{Name: "z", Domain: []string{"0", "1", "2", "3", "7"}, Agent: 1},
		},
		Functions: []mva.Function{
			{Name: "f", Scope: []int{2, 1}, Costs: []float64{
				-1, -2, -2, mva.Hard, -2, -2, 0, -2, -2, 0.5,
			}},
			{Name: "k", Scope: []int{}, Costs: []float64{3}},
		},
		Offset: 1.5,
	}
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	const want = `<?xml version="1.0" encoding="UTF-8"?>
<instance>
<presentation name="small" maxConstraintArity="2" maximize="true" format="XCSP 2.1_FRODO"/>
<agents nbAgents="2">
	<agent name="alice"/>
	<agent name="bob"/>
</agents>
<domains nbDomains="2">
	<domain name="d0" nbValues="5">0..3 7</domain>
	<domain name="d1" nbValues="2">red green</domain>
</domains>
<variables nbVariables="3">
	<variable name="x" domain="d0" agent="alice"/>
	<variable name="y" domain="d1" agent="bob"/>
	<variable name="z" domain="d0" agent="bob"/>
</variables>
<relations nbRelations="2">
	<relation name="r_f" arity="2" nbTuples="4" semantics="soft" defaultCost="2">1:0 red|-infinity:1 green|0:3 red|-0.5:7 green</relation>
	<relation name="r_offset" arity="1" nbTuples="0" semantics="soft" defaultCost="-4.5"></relation>
</relations>
<constraints nbConstraints="2">
	<constraint name="f" arity="2" scope="z y" reference="r_f"/>
	<constraint name="offset" arity="1" scope="x" reference="r_offset"/>
</constraints>
</instance>
`
	if b.String() != want {
		t.Errorf("Write wrote\n%s\nwant\n%s", b.String(), want)
	}
	q, err := Read(&b, "small.xml")
	if err != nil {
		t.Fatal(err)
	}
	checkEquivalent(t, p, q)
}

func TestWriteErrors(t *testing.T) {
	good := func() *mva.Problem {
		return &mva.Problem{
			Agents:    []mva.Agent{{Name: "a"}},
			Variables: []mva.Variable{{Name: "x", Domain: []string{"0", "1"}}},
			Functions: []mva.Function{{Name: "f", Scope: []int{0}, Costs: []float64{0, 1}}},
		}
	}
	for _, c := range []struct {
		name   string
		change func(p *mva.Problem)
		msg    string
	}{
		{"invalid", func(p *mva.Problem) { p.Functions[0].Costs = nil }, "invalid problem"},
		{"label with a space", func(p *mva.Problem) { p.Variables[0].Domain[1] = "a b" }, "white space"},
		{"label with a bar", func(p *mva.Problem) { p.Variables[0].Domain[1] = "a|b" }, "| or :"},
		{"label with a colon", func(p *mva.Problem) { p.Variables[0].Domain[1] = "a:b" }, "| or :"},
		{"interval-like label", func(p *mva.Problem) { p.Variables[0].Domain[1] = "2..3" }, "interval"},
		{"empty label", func(p *mva.Problem) { p.Variables[0].Domain[1] = "" }, "empty value label"},
		{"same label", func(p *mva.Problem) { p.Variables[0].Domain[1] = "0" }, "appears twice"},
		{"same integer", func(p *mva.Problem) { p.Variables[0].Domain[1] = "+0" }, "same integer"},
		{"variable name with a space", func(p *mva.Problem) { p.Variables[0].Name = "x y" }, "white space"},
		{"control character", func(p *mva.Problem) { p.Functions[0].Name = "f\x01" }, "XML cannot carry"},
		{"invalid UTF-8", func(p *mva.Problem) { p.Name = "\xff" }, "not valid UTF-8"},
		{"unnamed agent", func(p *mva.Problem) { p.Agents[0].Name = "" }, "agent 0 has no name"},
		{"same agent name", func(p *mva.Problem) { p.Agents = append(p.Agents, mva.Agent{Name: "a"}) }, `agent name "a" is used twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := good()
			c.change(p)
			var b bytes.Buffer
			err := Write(&b, p)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("Write error %v, want %q", err, c.msg)
			}
			if b.Len() != 0 {
				t.Errorf("Write wrote %d bytes before failing", b.Len())
			}
		})
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteIOError(t *testing.T) {
	p := formattest.ReadFile(t, Read, "gpube_rep_0_x_10.xml")
	if err := Write(failingWriter{}, p); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Write error %v, want disk full", err)
	}
}

func TestRoundTripFiles(t *testing.T) {
	for _, src := range []string{base, strings.Replace(base, `maximize="false"`, `maximize="true"`, 1)} {
		p := readString(t, src)
		if q, _ := formattest.RoundTrip(t, Write, Read, p, "rt.xml"); !reflect.DeepEqual(p, q) {
			t.Errorf("round trip changed the problem\n got %+v\nwant %+v", q, p)
		}
	}
	p := formattest.ReadFile(t, Read, "gpube_rep_0_x_10.xml")
	if q, _ := formattest.RoundTrip(t, Write, Read, p, "rt.xml"); !reflect.DeepEqual(p, q) {
		t.Errorf("round trip of the sample changed the problem")
	}
}

func TestReadByteOrderMark(t *testing.T) {
	p := readString(t, "\ufeff"+base)
	if q := readString(t, base); !reflect.DeepEqual(p, q) {
		t.Errorf("a byte order mark changed the problem")
	}
}

// randomProblem makes a small valid problem: 1-3 agents, 2-8 variables with
// 1-5 values (integer, sparse, negative or symbolic labels), functions of
// arity 0-4 with some hard entries, either sense and an offset.
func randomProblem(rng *rand.Rand) *mva.Problem {
	words := []string{"red", "green", "blue", "on", "off", "x<y", "a&b"}
	return randprob.Make(rng, randprob.Shape{
		Name:      func(r *rand.Rand) string { return fmt.Sprintf("random-%d", r.IntN(1000)) },
		AnySense:  true,
		Agents:    randprob.Range{Min: 1, Max: 3},
		Vars:      randprob.Range{Min: 2, Max: 8},
		Domain:    randprob.Range{Min: 1, Max: 5},
		Functions: randprob.Range{Min: 0, Max: 6},
		Arity:     randprob.Range{Min: 0, Max: 4},
		AgentName: func(i int) string { return fmt.Sprintf("agent %d", i) },
		VarName:   func(_ *rand.Rand, i int) string { return fmt.Sprintf("v%d", i) },
		// One style a variable: counting, odd and negative, words that
		// need escaping in XML, or sparse.
		Labels: func(r *rand.Rand, v, d int) []string {
			labels := make([]string, d)
			style := r.IntN(4)
			for k := range labels {
				switch style {
				case 0:
					labels[k] = fmt.Sprint(k)
				case 1:
					labels[k] = fmt.Sprint(2*k - 3)
				case 2:
					labels[k] = words[(k+v)%len(words)]
				default:
					labels[k] = fmt.Sprint(10 * k)
				}
			}
			return labels
		},
		Costs: func(r *rand.Rand, arity int, costs []float64) {
			for k := range costs {
				switch x := r.IntN(10); {
				case x == 0 && arity > 0:
					costs[k] = mva.Hard
				case x < 4:
					costs[k] = float64(r.IntN(5))
				default:
					costs[k] = math.Round(r.NormFloat64()*1000) / 8
				}
			}
		},
		Offset: func(r *rand.Rand) float64 {
			if r.IntN(2) == 0 {
				return float64(r.IntN(100) - 50)
			}
			return 0
		},
	})
}

// randomProblem makes a small valid problem: 1-3 agents, 2-8 variables with
// 1-5 values (integer, sparse, negative or symbolic labels), functions of
// arity 0-4 with some hard entries, either sense and an offset.
func TestRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		p := randomProblem(rng)
		if err := p.Validate(); err != nil {
			t.Fatalf("problem %d: %v", i, err)
		}
		q, _ := formattest.RoundTrip(t, Write, Read, p, "rt.xml")
		checkEquivalent(t, p, q)
		// q has no zero-arity function and no offset: it survives exactly.
		if r, _ := formattest.RoundTrip(t, Write, Read, q, "rt.xml"); !reflect.DeepEqual(q, r) {
			t.Fatalf("problem %d: second round trip changed it\n got %+v\nwant %+v", i, r, q)
		}
	}
}

// checkEquivalent checks that q is p as Write and Read map it: the same
// variables, agents, sense and functions, except that the offset and the
// zero-arity functions of p are one unary function of constant cost at the
// end of q.
func checkEquivalent(t *testing.T, p, q *mva.Problem) {
	t.Helper()
	if q.Name != p.Name || q.Sense != p.Sense || q.Offset != 0 {
		t.Errorf("name %q sense %v offset %v, want %q %v 0", q.Name, q.Sense, q.Offset, p.Name, p.Sense)
	}
	if !reflect.DeepEqual(q.Agents, p.Agents) {
		t.Errorf("agents %v, want %v", q.Agents, p.Agents)
	}
	if !reflect.DeepEqual(q.Variables, p.Variables) {
		t.Errorf("variables %v, want %v", q.Variables, p.Variables)
	}
	constant, hasConstant := p.Offset, p.Offset != 0
	var want []mva.Function
	for _, f := range p.Functions {
		if len(f.Scope) == 0 {
			constant += f.Costs[0]
			hasConstant = true
			continue
		}
		want = append(want, f)
	}
	got := q.Functions
	if hasConstant && constant != 0 {
		if len(got) == 0 {
			t.Fatalf("the constant %v is lost", constant)
		}
		last := got[len(got)-1]
		got = got[:len(got)-1]
		if len(last.Scope) != 1 || last.Scope[0] != 0 || !strings.HasPrefix(last.Name, "offset") {
			t.Errorf("the constant became %s%v", last.Name, last.Scope)
		}
		for _, c := range last.Costs {
			if c != constant {
				t.Errorf("the constant became %v, want %v", c, constant)
			}
		}
	}
	if (len(got) > 0 || len(want) > 0) && !reflect.DeepEqual(got, want) {
		t.Errorf("functions\n got %v\nwant %v", got, want)
	}
}

func FuzzRead(f *testing.F) {
	f.Add(base)
	for _, c := range errorCases {
		f.Add(mutate(c))
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "gpube_rep_0_x_10.xml")); err == nil {
		f.Add(string(b))
	}
	small := limits{domain: 64, domainTotal: 256, table: 1 << 12, tableTotal: 1 << 14}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := read(strings.NewReader(src), "fuzz.xml", small)
		if !formattest.Parsed(t, p, err) {
			return
		}
		var b bytes.Buffer
		if err := Write(&b, p); err != nil {
			return // names or labels the format cannot write back
		}
		q, err := read(&b, "rewritten.xml", limits{domain: 1 << 20, domainTotal: 1 << 22, table: 1 << 20, tableTotal: 1 << 20})
		if err != nil {
			t.Fatalf("Read of the written file: %v\n%s", err, b.String())
		}
		checkEquivalent(t, p, q)
	})
}
