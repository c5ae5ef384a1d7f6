package config

import "testing"

func TestLocate(t *testing.T) {
	src := `# comment
name = "x"   # trailing
homes = ["a.toml",
  "b.toml", # two
]
"quoted.key" = 1
dotted.key = 2
s = """
name = "not a key"
"""
lit = '''
[not.a.table]
'''
[horizon]
slots = 12
[[device]]
name = "ev"
initial = { charge = 20,
  soc = 3 }
rules = [
  "a", 'b',
  """c""",
]
[[device]]
name = "dw"
[device.extra]
k = 1
[[device.action]]
name = "on"
[[device.action]]
name = "off"
[[device]]
name = "three"
  [[device.action]]
  name = "x"
[[home]]
[[home.device]]
name = "inner"
`
	want := map[string]int{
		"name": 2, "homes": 3, "homes[0]": 3, "homes[1]": 4,
		"quoted.key": 6, "dotted": 7, "dotted.key": 7, "s": 8, "lit": 11,
		"horizon": 14, "horizon.slots": 15,
		"device": 16, "device[0]": 16, "device[0].name": 17, "device[0].initial.charge": 18, "device[0].initial.soc": 19,
		"device[0].rules[0]": 21, "device[0].rules[1]": 21, "device[0].rules[2]": 22,
		"device[1]": 24, "device[1].name": 25, "device[1].extra": 26, "device[1].extra.k": 27,
		"device[1].action[0].name": 29, "device[1].action[1].name": 31,
		"device[2].name": 33, "device[2].action[0].name": 35,
		"home[0].device[0].name": 38,
	}
	pos := locate([]byte(src))
	for k, line := range want {
		if pos[k] != line {
			t.Errorf("%s: line %d, want %d", k, pos[k], line)
		}
	}
	for _, k := range []string{"not", "not.a.table", "name = \"not a key\""} {
		if _, ok := pos[k]; ok {
			t.Errorf("%s found inside a string", k)
		}
	}
}

// TestLocateNeverPanics feeds the scanner broken text directly (it
// normally sees only text toml accepted).
func TestLocateNeverPanics(t *testing.T) {
	for _, s := range []string{"[", "[[", "a = [", "a = {", "a = \"", "a = '''", "= 1", "[a.", "a.b.", "a = [[[[[", "\"", "a = { b = [ {"} {
		locate([]byte(s))
	}
}
