package street

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices/shds"
	"github.com/hearth-dcop/hearth/internal/shdscheck"
)

// testSources are the two published files devices/shds keeps as test
// data: 7 + 21 homes.
func testSources(t testing.TB) []*Source {
	t.Helper()
	var out []*Source
	for _, n := range []string{"dm_7_1_2.json", "dm_21_1_2.json"} {
		s, err := ReadSource(filepath.Join("..", "testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestGenerateDeterministic(t *testing.T) {
	srcs := testSources(t)
	a, err := Generate(srcs, 40, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate([]*Source{srcs[1], srcs[0]}, 40, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("the same seed gave different files (sources in another order)")
	}
	c, err := Generate(srcs, 40, 8)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 7 and 8 gave the same file")
	}
}

type genFile struct {
	Horizon     int                        `json:"horizon"`
	Granularity int                        `json:"granularity"`
	Prices      []float64                  `json:"priceSchema"`
	Agents      map[string]json.RawMessage `json:"agents"`
}

// TestGenerateFromSources: every home of the street is a verbatim copy of
// the source home its "source" names, apart from its neighbours, which
// are every other home; a street within the pool repeats no home, a
// larger one repeats each ⌊N/pool⌋ or ⌈N/pool⌉ times.
func TestGenerateFromSources(t *testing.T) {
	srcs := testSources(t)
	pool := 0
	for _, s := range srcs {
		pool += len(s.Homes)
	}
	for _, n := range []int{1, 10, pool, 2*pool + 5} {
		b, err := Generate(srcs, n, 1)
		if err != nil {
			t.Fatal(err)
		}
		var f genFile
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		if len(f.Agents) != n || f.Horizon != srcs[0].Horizon || f.Granularity != srcs[0].Granularity || !slices.Equal(f.Prices, srcs[0].Prices) {
			t.Fatalf("%d homes: got %d homes, horizon %d, granularity %d, prices %v", n, len(f.Agents), f.Horizon, f.Granularity, f.Prices)
		}
		uses := map[string]int{}
		for name, raw := range f.Agents {
			var h map[string]json.RawMessage
			if err := json.Unmarshal(raw, &h); err != nil {
				t.Fatal(err)
			}
			var src string
			var nb []string
			if json.Unmarshal(h["source"], &src) != nil || json.Unmarshal(h["neighbors"], &nb) != nil {
				t.Fatalf("%s: source %s, neighbors %s", name, h["source"], h["neighbors"])
			}
			uses[src]++
			file, home, _ := strings.Cut(src, "#")
			var orig map[string]json.RawMessage
			for _, s := range srcs {
				if s.Name == file {
					orig = s.Homes[home]
				}
			}
			if orig == nil {
				t.Fatalf("%s: source %q is not a source home", name, src)
			}
			for k, v := range orig {
				if k == "neighbors" {
					continue
				}
				if !jsonEqual(t, v, h[k]) {
					t.Errorf("%s (%s): %s = %s, source has %s", name, src, k, h[k], v)
				}
			}
			if len(h) != len(orig)+1 {
				t.Errorf("%s: keys %d, source %d (+ source)", name, len(h), len(orig))
			}
			if len(nb) != n-1 || slices.Contains(nb, name) {
				t.Errorf("%s: %d neighbours (itself among them: %v), want the %d others", name, len(nb), slices.Contains(nb, name), n-1)
			}
			for _, o := range nb {
				if _, ok := f.Agents[o]; !ok {
					t.Errorf("%s: neighbour %s is not a home", name, o)
				}
			}
		}
		lo, hi := n/pool, (n+pool-1)/pool
		for src, u := range uses {
			if u < lo || u > hi {
				t.Errorf("%d homes: %s used %d times, want %d..%d", n, src, u, lo, hi)
			}
		}
		if n >= pool && len(uses) != pool {
			t.Errorf("%d homes: %d distinct source homes, want all %d", n, len(uses), pool)
		}
	}
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// TestGenerateRereads: a generated street is an SHDS file both hearth's
// importer and the independent checker read, with every home.
func TestGenerateRereads(t *testing.T) {
	b, err := Generate(testSources(t), 50, 3)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "street50.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := shds.ReadFile(p, shds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(r.Neighbourhood.Homes); got != 50 {
		t.Errorf("hearth's importer read %d homes, want 50", got)
	}
	in, err := shdscheck.DecodeInstance(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Agents) != 50 {
		t.Errorf("the checker read %d homes, want 50", len(in.Agents))
	}
	src, err := ReadSource(p)
	if err != nil || len(src.Homes) != 50 {
		t.Errorf("re-read as a source: %v, %d homes", err, len(src.Homes))
	}
}

func TestGenerateErrors(t *testing.T) {
	srcs := testSources(t)
	other := *srcs[1]
	other.Name = "other.json"
	other.Prices = slices.Clone(other.Prices)
	other.Prices[3] = 1
	tests := []struct {
		name  string
		srcs  []*Source
		homes int
		want  string
	}{
		{"no homes", srcs, 0, "0 homes"},
		{"no sources", nil, 5, "no source files"},
		{"other prices", []*Source{srcs[0], &other}, 5, "other.json has another horizon, slot length or price schema"},
	}
	for _, tc := range tests {
		if _, err := Generate(tc.srcs, tc.homes, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	for _, bad := range []string{
		`{"horizon":2,"granularity":60,"priceSchema":[1],"agents":{"h1":{}}}`,
		`{"horizon":1,"granularity":60,"priceSchema":[1],"agents":{"x1":{"houseType":0,"backgroundLoad":[0],"rules":[]}}}`,
		`{"horizon":1,"granularity":60,"priceSchema":[1],"agents":{"h1":{"backgroundLoad":[0],"rules":[]}}}`,
		`{"horizon":1,"granularity":60,"priceSchema":[1],"agents":{}}`,
		`{"horizon":1,"granularity":0,"priceSchema":[1],"agents":{"h1":{"houseType":0,"backgroundLoad":[0],"rules":[]}}}`,
		`[]`,
	} {
		if _, err := DecodeSource("bad.json", []byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func FuzzDecodeSource(f *testing.F) {
	f.Add([]byte(`{"horizon":1,"granularity":60,"priceSchema":[1],"agents":{"h1":{"houseType":0,"backgroundLoad":[0],"rules":[]}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSource("f.json", b)
		if err != nil {
			return
		}
		out, err := Generate([]*Source{s}, 3, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeSource("g.json", out); err != nil {
			t.Fatalf("the generated street does not re-read: %v", err)
		}
	})
}

// TestGenerateFeeders: with feeders, the homes are Generate's, and each
// home's neighbours are exactly the other homes whose number falls in its
// block of K consecutive numbers (computed here from the names, apart
// from the generator's index arithmetic), and the SHDS importer reads it.
func TestGenerateFeeders(t *testing.T) {
	srcs := testSources(t)
	for _, tc := range []struct{ homes, feeder int }{{45, 20}, {40, 20}, {7, 3}, {5, 1}, {10, 0}, {10, 50}} {
		b, err := GenerateFeeders(srcs, tc.homes, tc.feeder, 3)
		if err != nil {
			t.Fatal(err)
		}
		dense, err := Generate(srcs, tc.homes, 3)
		if err != nil {
			t.Fatal(err)
		}
		var f, g genFile
		if json.Unmarshal(b, &f) != nil || json.Unmarshal(dense, &g) != nil {
			t.Fatal("undecodable street")
		}
		k := tc.feeder
		if k == 0 || k > tc.homes {
			k = tc.homes
		}
		for name, raw := range f.Agents {
			var h, d map[string]json.RawMessage
			if json.Unmarshal(raw, &h) != nil || json.Unmarshal(g.Agents[name], &d) != nil {
				t.Fatal("undecodable home")
			}
			if !jsonEqual(t, h["source"], d["source"]) {
				t.Errorf("%d/%d: %s is %s, Generate's is %s", tc.homes, tc.feeder, name, h["source"], d["source"])
			}
			var nb []string
			if err := json.Unmarshal(h["neighbors"], &nb); err != nil {
				t.Fatal(err)
			}
			num, _ := homeNumber(name)
			var want []string
			for m := 1; m <= tc.homes; m++ {
				if m != num && (m-1)/k == (num-1)/k {
					want = append(want, "h"+strconv.Itoa(m))
				}
			}
			slices.Sort(nb)
			slices.Sort(want)
			if !slices.Equal(nb, want) {
				t.Errorf("%d/%d: %s neighbours %v, want %v", tc.homes, tc.feeder, name, nb, want)
			}
		}
		if _, err := shds.Import(b, "street", shds.Options{}); err != nil {
			t.Errorf("%d/%d: the importer refuses the street: %v", tc.homes, tc.feeder, err)
		}
	}
	if _, err := GenerateFeeders(srcs, 10, -1, 1); err == nil {
		t.Error("feeders of -1 homes accepted")
	}
}
