package compile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/mva"
)

// street is three homes with an EV each (ev_wallbox_7kw), 6 slots, two
// windows, a feeder limit.
func street(t *testing.T, rule string) *devices.Neighbourhood {
	t.Helper()
	e, err := devices.Lookup("ev_wallbox_7kw", "")
	if err != nil {
		t.Fatal(err)
	}
	n := &devices.Neighbourhood{
		Name:        "street",
		Horizon:     devices.Horizon{Slots: 6, SlotMinutes: 60},
		Prices:      []float64{0.4, 0.4, 0.2, 0.1, 0.1, 0.2},
		Windows:     []devices.Window{{From: 0, To: 3}, {From: 3, To: 6}},
		Levels:      3,
		Weights:     devices.Weights{Price: 1, Peak: 0.05},
		FeederLimit: 20,
		Units:       devices.Units{Power: "kW", PowerScale: 1},
	}
	for _, name := range []string{"a", "b", "c"} {
		ev, props := e.Instantiate("ev", "", 60)
		r, err := devices.ParseRule(rule, devices.RuleSyntax{Location: "ev"})
		if err != nil {
			t.Fatal(err)
		}
		n.Homes = append(n.Homes, devices.Home{Name: name, Background: []float64{0.5, 0.5, 0.5, 0.3, 0.3, 0.3}, Devices: []devices.Device{ev}, Properties: props, Rules: []devices.Rule{r}})
	}
	return n
}

// TestStructure checks the shape DESIGN.md "Homes" asks for: one agent per
// home, the levels as the only boundary variables, and between homes only
// the peak pairs and the feeder limits.
func TestStructure(t *testing.T) {
	n := street(t, "charge geq 30 before 6")
	c, err := compile.Compile(n, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Problem
	if len(p.Agents) != 3 || p.Agents[1].Name != "b" {
		t.Fatalf("agents %v", p.Agents)
	}
	d := mva.Decompose(p)
	for hi, sub := range d.Subs {
		var names []string
		for _, v := range sub.Boundary {
			names = append(names, p.Variables[v].Name)
		}
		want := n.Homes[hi].Name + "/level@0 " + n.Homes[hi].Name + "/level@1"
		if strings.Join(names, " ") != want {
			t.Errorf("home %d boundary %v, want %s", hi, names, want)
		}
	}
	var pairs, feeders int
	for _, fi := range d.External {
		f := p.Functions[fi]
		switch {
		case strings.HasPrefix(f.Name, "peak:") && len(f.Scope) == 2:
			pairs++
		case strings.HasPrefix(f.Name, "feeder@") && len(f.Scope) == 3:
			feeders++
		default:
			t.Errorf("unexpected function between homes %s %v", f.Name, f.Scope)
		}
	}
	if pairs != 3*2 || feeders != 2 {
		t.Errorf("%d peak pairs and %d feeder functions, want 6 and 2", pairs, feeders)
	}
	v, _ := p.VarIndex("a/ev@4")
	if p.Variables[v].Agent != 0 || strings.Join(p.Variables[v].Domain, " ") != "off charge_16a charge_32a" {
		t.Errorf("a/ev@4: %+v", p.Variables[v])
	}
	v, _ = p.VarIndex("c/level@1")
	if strings.Join(p.Variables[v].Domain, " ") != "0.00-0.30kW 0.30-4.00kW 4.00-7.70kW" {
		t.Errorf("c/level@1 labels %v", p.Variables[v].Domain)
	}
	v, ok := p.VarIndex("b/ev.charge#6")
	if !ok || !strings.Contains(strings.Join(p.Variables[v].Domain, " "), "|1") {
		t.Errorf("b/ev.charge#6: %+v", p.Variables[v])
	}
	st := c.Stats()
	if st.Agents != 3 || st.Boundary != 6 || st.MVARows != 9 || st.MaxTable > compile.DefaultMaxTable {
		t.Errorf("stats %+v", st)
	}
	if links := n.Links; links != nil {
		t.Fatal("street has no explicit links")
	}
	// Only linked pairs get cross terms.
	n.Links = [][2]int{{0, 1}}
	c, err = compile.Compile(n, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(mva.Decompose(c.Problem).Neighbours()[2]) != 2 {
		t.Error("the feeder links every home")
	}
	pairs = 0
	for _, f := range c.Problem.Functions {
		if strings.HasPrefix(f.Name, "peak:") {
			pairs++
		}
	}
	if pairs != 2 {
		t.Errorf("%d peak pairs for one link over two windows", pairs)
	}
}

// TestInfeasible checks that rules no schedule can meet are reported as
// infeasible, naming the home and the rule.
func TestInfeasible(t *testing.T) {
	n := street(t, "charge geq 50 before 4") // 20 + 4·6.6 = 46.4 at best
	_, err := compile.Compile(n, compile.Options{})
	var e *devices.Error
	if !errors.Is(err, devices.ErrInfeasible) || !errors.As(err, &e) || e.Home != "a" || e.Part != devices.PartRule || e.Index != 0 {
		t.Fatalf("error %v, want rule 0 of home a infeasible", err)
	}
	if !strings.Contains(e.Msg, "46.4") {
		t.Errorf("message %q does not say how far the EV gets", e.Msg)
	}
	// A feeder limit below the homes' least draws.
	n = street(t, "charge geq 30 before 6")
	n.FeederLimit = 1
	if _, err := compile.Compile(n, compile.Options{}); !errors.Is(err, devices.ErrInfeasible) || !errors.As(err, &e) || e.Part != devices.PartFeeder {
		t.Fatalf("feeder: %v", err)
	}
}

func TestTooLarge(t *testing.T) {
	n := street(t, "charge geq 30 before 6")
	if _, err := compile.Compile(n, compile.Options{MaxTable: 20}); !errors.Is(err, compile.ErrTooLarge) {
		t.Fatalf("error %v, want ErrTooLarge", err)
	}
	if _, err := compile.Compile(n, compile.Options{StateLimit: 2}); !errors.Is(err, devices.ErrTooLarge) {
		t.Fatalf("error %v, want ErrTooLarge", err)
	}
	n.Levels = 0
	if _, err := compile.Compile(n, compile.Options{}); err == nil {
		t.Fatal("zero levels accepted")
	}
}

// TestEncodeErrors checks Encode's refusals.
func TestEncodeErrors(t *testing.T) {
	c, err := compile.Compile(street(t, "charge geq 30 before 6"), compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Encode(&devices.Schedule{}); err == nil {
		t.Error("empty schedule accepted")
	}
	if _, err := c.Decode([]int{1}); err == nil {
		t.Error("short assignment accepted")
	}
}

// TestPeakTermFormula checks the peak term on a hand-worked case: three
// homes committing caps 4, 0.3 and 7.7 kW over a 3-slot window of 1 h have
// a peak term of 3·(4+0.3+7.7)² = 432 on the complete graph.
func TestPeakTermFormula(t *testing.T) {
	n := street(t, "charge geq 20 before 6")
	n.Weights = devices.Weights{Peak: 1}
	n.FeederLimit = 0
	s := &devices.Schedule{}
	for range n.Homes {
		s.Homes = append(s.Homes, devices.HomeSchedule{Actions: [][]int{make([]int, 6)}, Levels: []int{0, 0}})
	}
	s.Homes[0].Levels[1] = 1
	s.Homes[2].Levels[1] = 2
	ev, err := n.Evaluate(s)
	if err != nil {
		t.Fatal(err)
	}
	// Window 0: caps 0.5 each (background 0.5): 3·1.5² = 6.75.
	if want := 3*1.5*1.5 + 3*12.0*12.0; !same(ev.PeakCost, want) {
		t.Fatalf("peak term %v, want %v", ev.PeakCost, want)
	}
	c, err := compile.Compile(n, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	assign, err := c.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Problem.Eval(assign); !same(got, ev.Cost) {
		t.Fatalf("Eval %v, Evaluate %v", got, ev.Cost)
	}
}
