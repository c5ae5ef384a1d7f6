package devices_test

import (
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		text string
		syn  devices.RuleSyntax
		want devices.Rule // Text is ignored
		err  string
	}{
		{text: "1 room cleanliness gt 78 before 9", syn: devices.RuleSyntax{Flag: true},
			want: devices.Rule{Location: "room", Property: "cleanliness", Rel: devices.Gt, Goal: 78, Prefix: devices.Before, T1: 9}},
		{text: "0 Roomba_880 charge leq 100", syn: devices.RuleSyntax{Flag: true},
			want: devices.Rule{Location: "Roomba_880", Property: "charge", Rel: devices.Leq, Goal: 100}},
		{text: " 1  room temp_heat geq 22 within 4 7", want: devices.Rule{Location: "room", Property: "temp_heat", Rel: devices.Geq, Goal: 22, Prefix: devices.Within, T1: 4, T2: 7}},
		{text: "charge geq 40.5 at 3", syn: devices.RuleSyntax{Location: "ev"},
			want: devices.Rule{Location: "ev", Property: "charge", Rel: devices.Geq, Goal: 40.5, Prefix: devices.At, T1: 3}},
		{text: "ev charge neq 0 after 2", want: devices.Rule{Location: "ev", Property: "charge", Rel: devices.Neq, Prefix: devices.After, T1: 2}},
		{text: "", err: "empty"},
		{text: "charge geq 40", err: "no location"},
		{text: "ev charge", err: "too short"},
		{text: "ev charge about 4", err: "unknown relation"},
		{text: "ev charge geq forty", err: "not a number"},
		{text: "ev charge geq NaN", err: "not a number"},
		{text: "ev charge geq 4 soon 3", err: "unknown time"},
		{text: "ev charge geq 4 before", err: "exactly one time"},
		{text: "ev charge geq 4 before 3 4", err: "exactly one time"},
		{text: "ev charge geq 4 within 3", err: "two times"},
		{text: "ev charge geq 4 before -1", err: "not a slot number"},
		{text: "1 ev charge geq 4", err: "has no time"},
		{text: "0 ev charge geq 4 before 2", err: "passive"},
		{text: "ev charge geq 4 before 2", syn: devices.RuleSyntax{Flag: true}, err: "must start with 0"},
	}
	for _, tc := range tests {
		got, err := devices.ParseRule(tc.text, tc.syn)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.text, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		got.Text = ""
		if got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.text, got, tc.want)
		}
		// String writes the grammar back.
		again, err := devices.ParseRule(got.String(), devices.RuleSyntax{Flag: true})
		again.Text = ""
		if err != nil || again != got {
			t.Errorf("%q: String %q reads back as %+v, %v", tc.text, got.String(), again, err)
		}
	}
}

func TestRelationHolds(t *testing.T) {
	want := map[devices.Relation][3]bool{ // v < goal, v == goal, v > goal
		devices.Eq: {false, true, false}, devices.Neq: {true, false, true},
		devices.Lt: {true, false, false}, devices.Leq: {true, true, false},
		devices.Gt: {false, false, true}, devices.Geq: {false, true, true},
	}
	for r, w := range want {
		for i, v := range []int64{4, 5, 6} {
			if r.Holds(v, 5) != w[i] {
				t.Errorf("%v %d 5 = %v", r, v, !w[i])
			}
		}
	}
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"1 room cleanliness gt 78 before 9", "0 a b leq 1", "x geq 2 within 1 3", "ev charge geq 1e308 at 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := devices.ParseRule(s, devices.RuleSyntax{Location: "dev"})
		if err != nil {
			return
		}
		if _, err := devices.ParseRule(r.String(), devices.RuleSyntax{Flag: true}); err != nil {
			t.Fatalf("%q parses, its String %q does not: %v", s, r.String(), err)
		}
	})
}

// TestRuleWindow checks the windows of the package documentation and of
// shds-model.md §3.3 (H = 12).
func TestRuleWindow(t *testing.T) {
	shds := devices.Horizon{Slots: 12, SlotMinutes: 60, Dynamics: devices.SHDS}
	full := devices.Horizon{Slots: 12, SlotMinutes: 60}
	vac := shds
	vac.AtVacuous = true
	tests := []struct {
		hz       devices.Horizon
		r        devices.Rule
		from, to int
		any      bool
	}{
		{shds, devices.Rule{}, 0, 11, false},
		{shds, devices.Rule{Prefix: devices.Before, T1: 9}, 0, 9, true},
		{shds, devices.Rule{Prefix: devices.After, T1: 7}, 7, 11, true},
		{shds, devices.Rule{Prefix: devices.Within, T1: 4, T2: 7}, 4, 7, false},
		{shds, devices.Rule{Prefix: devices.At, T1: 5}, 5, 6, false},
		{vac, devices.Rule{Prefix: devices.At, T1: 5}, 5, 5, false},
		{shds, devices.Rule{Prefix: devices.After, T1: 11}, 11, 11, true},
		{full, devices.Rule{}, 0, 13, false},
		{full, devices.Rule{Prefix: devices.Before, T1: 7}, 0, 8, true},
		{full, devices.Rule{Prefix: devices.After, T1: 7}, 7, 13, true},
		{full, devices.Rule{Prefix: devices.At, T1: 12}, 12, 13, false},
		{full, devices.Rule{Prefix: devices.Within, T1: 1, T2: 3}, 1, 4, false},
	}
	for _, tc := range tests {
		from, to, anyOf := tc.hz.RuleWindow(&tc.r)
		if from != tc.from || to != tc.to || anyOf != tc.any {
			t.Errorf("%v %s %d %d: [%d, %d) any=%v, want [%d, %d) any=%v", tc.hz.Dynamics, tc.r.Prefix, tc.r.T1, tc.r.T2, from, to, anyOf, tc.from, tc.to, tc.any)
		}
	}
}

func TestCheckTime(t *testing.T) {
	shds := devices.Horizon{Slots: 12, SlotMinutes: 60, Dynamics: devices.SHDS}
	full := devices.Horizon{Slots: 12, SlotMinutes: 60}
	tests := []struct {
		hz devices.Horizon
		r  devices.Rule
		ok bool
	}{
		{shds, devices.Rule{Prefix: devices.Before, T1: 0}, false},
		{shds, devices.Rule{Prefix: devices.Before, T1: 12}, true},
		{shds, devices.Rule{Prefix: devices.After, T1: 10}, true},
		{shds, devices.Rule{Prefix: devices.After, T1: 11}, false},
		{shds, devices.Rule{Prefix: devices.At, T1: 11}, true},
		{shds, devices.Rule{Prefix: devices.At, T1: 12}, false},
		{shds, devices.Rule{Prefix: devices.Within, T1: 3, T2: 3}, false},
		{full, devices.Rule{Prefix: devices.Within, T1: 3, T2: 3}, true},
		{full, devices.Rule{Prefix: devices.Before, T1: 0}, true},
		{full, devices.Rule{Prefix: devices.After, T1: 12}, true},
		{full, devices.Rule{Prefix: devices.At, T1: 13}, false},
		{full, devices.Rule{Prefix: devices.Within, T1: 5, T2: 4}, false},
	}
	for _, tc := range tests {
		if err := tc.hz.CheckTime(&tc.r); (err == nil) != tc.ok {
			t.Errorf("%v %s %d %d: %v", tc.hz.Dynamics, tc.r.Prefix, tc.r.T1, tc.r.T2, err)
		}
	}
}
