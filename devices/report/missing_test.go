package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestMissingBaselines: a baseline that was not computed is named with
// its reason in the text (under the totals) and in --json, and a baseline
// whose homes answered on coarse levels says which.
func TestMissingBaselines(t *testing.T) {
	f := example(t)
	tests := []struct {
		name     string
		edit     func(in *Input)
		text     []string // lines the text must hold
		notText  []string
		missing  []MissingBaseline
		coarse   []string
		noSHMGM  bool
		noUncoor bool
	}{
		{
			name: "shmgm failed",
			edit: func(in *Input) {
				in.SHMGM = nil
				in.Missing = []MissingBaseline{{Name: "shmgm", Reason: "home cedar alone: too large"}}
			},
			text:    []string{"\nSH-MGM-style: not computed: home cedar alone: too large\n"},
			notText: []string{"SH-MGM-style:    "},
			missing: []MissingBaseline{{Name: "shmgm", Reason: "home cedar alone: too large"}},
			noSHMGM: true,
		},
		{
			name: "both skipped",
			edit: func(in *Input) {
				in.SHMGM, in.Uncoordinated = nil, nil
				in.Missing = []MissingBaseline{{Name: "uncoordinated", Reason: "skipped"}, {Name: "shmgm", Reason: "skipped"}}
			},
			text:     []string{"\nuncoordinated: not computed: skipped\n", "\nSH-MGM-style: not computed: skipped\n"},
			missing:  []MissingBaseline{{Name: "uncoordinated", Reason: "skipped"}, {Name: "shmgm", Reason: "skipped"}},
			noSHMGM:  true,
			noUncoor: true,
		},
		{
			name: "coarse homes",
			edit: func(in *Input) {
				s := *in.SHMGM
				s.Coarse = []string{"a", "b", "c", "d", "e", "f"}
				in.SHMGM = &s
			},
			text:    []string{"6 homes answered on fewer levels than draws (tables past the limit: a, b, c, d, e and 1 more)"},
			notText: []string{"not computed"},
			coarse:  []string{"a", "b", "c", "d", "e", "f"},
		},
		{
			name:    "all computed",
			edit:    func(*Input) {},
			notText: []string{"not computed", "fewer levels"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := f.in
			tc.edit(&in)
			h, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := h.WriteText(&b, TextOptions{MaxHomes: 2}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, s := range tc.text {
				if !strings.Contains(out, s) {
					t.Errorf("text lacks %q:\n%s", s, out)
				}
				// Under the totals, before the load profile.
				if i, j := strings.Index(out, s), strings.Index(out, "neighbourhood load"); j >= 0 && i > j {
					t.Errorf("%q comes after the load profile", s)
				}
			}
			for _, s := range tc.notText {
				if strings.Contains(out, s) {
					t.Errorf("text holds %q:\n%s", s, out)
				}
			}
			js, err := h.JSON()
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Baselines struct {
					Uncoordinated *struct{} `json:"uncoordinated"`
					SHMGM         *struct {
						Coarse []string `json:"coarse_homes"`
					} `json:"shmgm"`
					Missing []MissingBaseline `json:"missing"`
				} `json:"baselines"`
			}
			if err := json.Unmarshal(js, &r); err != nil {
				t.Fatal(err)
			}
			if (r.Baselines.SHMGM == nil) != tc.noSHMGM || (r.Baselines.Uncoordinated == nil) != tc.noUncoor {
				t.Errorf("json baselines: shmgm %v, uncoordinated %v", r.Baselines.SHMGM != nil, r.Baselines.Uncoordinated != nil)
			}
			if len(r.Baselines.Missing) != len(tc.missing) {
				t.Fatalf("json missing %+v, want %+v", r.Baselines.Missing, tc.missing)
			}
			for i := range tc.missing {
				if r.Baselines.Missing[i] != tc.missing[i] {
					t.Errorf("json missing %+v, want %+v", r.Baselines.Missing, tc.missing)
				}
			}
			if r.Baselines.SHMGM != nil && strings.Join(r.Baselines.SHMGM.Coarse, ",") != strings.Join(tc.coarse, ",") {
				t.Errorf("json coarse_homes %v, want %v", r.Baselines.SHMGM.Coarse, tc.coarse)
			}
		})
	}
}
