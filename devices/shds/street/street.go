// Package street builds SHDS streets of any size from the homes of
// published SHDS instance files, so that hearth can be measured past the
// 251 homes of the largest Des Moines file: each home of the street is a
// verbatim copy of a sampled source home (house type, background load,
// rules, actuators), renamed h1…hN, and the street is a complete graph as
// every shipped file is. The output is an SHDS instance file that `hearth
// sim --shds` reads; each home also carries "source" ("FILE#hK"), which
// SHDS readers ignore.
package street

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Source is one SHDS instance file's homes.
type Source struct {
	Name        string // file base name, recorded in each home's "source"
	Horizon     int
	Granularity int
	Prices      []float64
	// Homes are the raw home objects keyed by their names.
	Homes map[string]map[string]json.RawMessage
}

// ReadSource reads an SHDS instance file.
func ReadSource(path string) (*Source, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("street: %w", err)
	}
	s, err := DecodeSource(filepath.Base(path), b)
	if err != nil {
		return nil, fmt.Errorf("street: %s: %w", path, err)
	}
	return s, nil
}

// DecodeSource decodes an SHDS instance named name.
func DecodeSource(name string, b []byte) (*Source, error) {
	var f struct {
		Horizon     int                                   `json:"horizon"`
		Granularity int                                   `json:"granularity"`
		Prices      []float64                             `json:"priceSchema"`
		Agents      map[string]map[string]json.RawMessage `json:"agents"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	if f.Horizon <= 0 || len(f.Prices) != f.Horizon {
		return nil, fmt.Errorf("horizon %d with %d prices", f.Horizon, len(f.Prices))
	}
	if f.Granularity <= 0 {
		return nil, fmt.Errorf("granularity %d", f.Granularity)
	}
	if len(f.Agents) == 0 {
		return nil, fmt.Errorf("no agents")
	}
	for h, a := range f.Agents {
		if _, err := homeNumber(h); err != nil {
			return nil, err
		}
		if a == nil {
			return nil, fmt.Errorf("agent %s: null", h)
		}
		for _, k := range []string{"houseType", "backgroundLoad", "rules"} {
			if _, ok := a[k]; !ok {
				return nil, fmt.Errorf("agent %s: no %s", h, k)
			}
		}
	}
	return &Source{Name: name, Horizon: f.Horizon, Granularity: f.Granularity, Prices: f.Prices, Homes: f.Agents}, nil
}

// homeNumber reads the K of "hK".
func homeNumber(name string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "h"))
	if !strings.HasPrefix(name, "h") || err != nil || n < 1 {
		return 0, fmt.Errorf("agent name %q is not hK", name)
	}
	return n, nil
}

// Generate samples homes source homes into one street. Homes are drawn
// without replacement from the pool of every source home (sources in
// name order, homes in number order) shuffled by seed; a street larger
// than the pool takes whole reshuffled pools in turn, so every source
// home appears ⌊homes/pool⌋ or ⌈homes/pool⌉ times. The sources must share the horizon, the
// slot length and the prices. The same sources, homes and seed give the
// same bytes.
func Generate(sources []*Source, homes int, seed uint64) ([]byte, error) {
	return GenerateFeeders(sources, homes, 0, seed)
}

// GenerateFeeders is Generate for a sparse street: with feeder > 0 the
// homes are split, in order, into feeders of feeder homes (the last may
// be shorter), and each home's neighbours are the other homes of its
// feeder, so the peak term couples the homes of one feeder only — a
// street whose per-home work does not grow with its length. feeder 0, or
// at least homes, is Generate's complete graph. The homes sampled are
// the same as Generate's for the same sources, homes and seed.
func GenerateFeeders(sources []*Source, homes, feeder int, seed uint64) ([]byte, error) {
	if homes < 1 {
		return nil, fmt.Errorf("street: %d homes; want at least 1", homes)
	}
	if feeder < 0 {
		return nil, fmt.Errorf("street: feeders of %d homes; want at least 1, or 0 for one feeder", feeder)
	}
	if feeder == 0 || feeder > homes {
		feeder = homes
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("street: no source files")
	}
	srcs := slices.Clone(sources)
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].Name < srcs[j].Name })
	first := srcs[0]
	type ref struct {
		src  *Source
		home string
	}
	var pool []ref
	for _, s := range srcs {
		if s.Horizon != first.Horizon || s.Granularity != first.Granularity || !slices.Equal(s.Prices, first.Prices) {
			return nil, fmt.Errorf("street: %s has another horizon, slot length or price schema than %s", s.Name, first.Name)
		}
		names := make([]string, 0, len(s.Homes))
		for h := range s.Homes {
			names = append(names, h)
		}
		sort.Slice(names, func(i, j int) bool {
			a, _ := homeNumber(names[i])
			b, _ := homeNumber(names[j])
			return a < b
		})
		for _, h := range names {
			pool = append(pool, ref{s, h})
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed5eed))
	picked := make([]ref, 0, homes)
	for len(picked) < homes {
		p := slices.Clone(pool)
		rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
		picked = append(picked, p[:min(len(p), homes-len(picked))]...)
	}

	names := make([]string, homes)
	for i := range names {
		names[i] = "h" + strconv.Itoa(i+1)
	}
	agents := make(map[string]map[string]json.RawMessage, homes)
	for i, r := range picked {
		h := make(map[string]json.RawMessage, len(r.src.Homes[r.home])+1)
		for k, v := range r.src.Homes[r.home] {
			h[k] = v
		}
		lo := i / feeder * feeder
		hi := min(lo+feeder, homes)
		nb := make([]string, 0, hi-lo-1)
		nb = append(nb, names[lo:i]...)
		nb = append(nb, names[i+1:hi]...)
		var err error
		if h["neighbors"], err = json.Marshal(nb); err != nil {
			return nil, err
		}
		if h["source"], err = json.Marshal(r.src.Name + "#" + r.home); err != nil {
			return nil, err
		}
		agents[names[i]] = h
	}
	out := struct {
		Horizon     int                                   `json:"horizon"`
		Granularity int                                   `json:"granularity"`
		Prices      []float64                             `json:"priceSchema"`
		Agents      map[string]map[string]json.RawMessage `json:"agents"`
	}{first.Horizon, first.Granularity, first.Prices, agents}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("street: %w", err)
	}
	return append(b, '\n'), nil
}

// Sources reads every SHDS instance file matching pattern in dir (for
// instance "dm_*.json"); DeviceDictionary.json never matches an instance
// pattern and is skipped regardless.
func Sources(dir, pattern string) ([]*Source, error) {
	paths, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return nil, fmt.Errorf("street: %w", err)
	}
	var out []*Source
	for _, p := range paths {
		if filepath.Base(p) == "DeviceDictionary.json" {
			continue
		}
		s, err := ReadSource(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("street: no SHDS files %s in %s", pattern, dir)
	}
	return out, nil
}
