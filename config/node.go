package config

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// source is one TOML file: its name for messages and its key positions.
type source struct {
	file string
	pos  positions
	errs *Errors
}

// line returns the line of path, or of its nearest enclosing key.
func (s *source) line(path string) int {
	for p := path; p != ""; {
		if l, ok := s.pos[p]; ok {
			return l
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return 0
}

func (s *source) errorf(path, format string, args ...any) {
	*s.errs = append(*s.errs, &Error{File: s.file, Line: s.line(path), Key: path, Msg: fmt.Sprintf(format, args...)})
}

// infeasiblef records a fault of the problem (rules no schedule can
// satisfy), not of the file.
func (s *source) infeasiblef(path, format string, args ...any) {
	s.errorf(path, format, args...)
	(*s.errs)[len(*s.errs)-1].Infeasible = true
}

// node is a TOML table being read: typed getters that record what they
// read, report wrong types with the key's line, and report every key left
// unread as unknown (what toml.MetaData.Undecoded does, but with the array
// indices that MetaData drops).
type node struct {
	src  *source
	path string
	m    map[string]any
	used map[string]bool
}

func newNode(src *source, path string, m map[string]any) *node {
	return &node{src: src, path: path, m: m, used: map[string]bool{}}
}

func (n *node) key(k string) string { return join(n.path, k) }

func (n *node) errorf(k, format string, args ...any) { n.src.errorf(n.key(k), format, args...) }

func (n *node) get(k string) (any, bool) {
	v, ok := n.m[k]
	if ok {
		n.used[k] = true
	}
	return v, ok
}

func (n *node) has(k string) bool { _, ok := n.m[k]; return ok }

// done reports the keys nobody read that are not among the known ones,
// suggesting the nearest known one. A known key left unread (a reader gave
// up early after another error) is not reported: it is not unknown.
func (n *node) done(known ...string) {
	var keys []string
	for k := range n.m {
		if !n.used[k] && !slices.Contains(known, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		msg := "unknown key"
		if c := closest(k, known); c != "" {
			msg += fmt.Sprintf("; did you mean %q?", c)
		} else if len(known) > 0 {
			msg += "; valid keys here: " + strings.Join(known, ", ")
		}
		n.errorf(k, "%s", msg)
	}
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}

func (n *node) str(k string) (string, bool) {
	v, ok := n.get(k)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		n.errorf(k, "want a string, got %s", typeName(v))
	}
	return s, ok
}

func asNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	return 0, false
}

func (n *node) num(k string) (float64, bool) {
	v, ok := n.get(k)
	if !ok {
		return 0, false
	}
	f, ok := asNumber(v)
	if !ok {
		n.errorf(k, "want a number, got %s", typeName(v))
	}
	return f, ok
}

func (n *node) boolean(k string) (bool, bool) {
	v, ok := n.get(k)
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		n.errorf(k, "want true or false, got %s", typeName(v))
	}
	return b, ok
}

func (n *node) integer(k string) (int64, bool) {
	v, ok := n.get(k)
	if !ok {
		return 0, false
	}
	i, ok := v.(int64)
	if !ok {
		n.errorf(k, "want an integer, got %s", typeName(v))
	}
	return i, ok
}

// list returns an array's elements.
func (n *node) list(k string) ([]any, bool) {
	v, ok := n.get(k)
	if !ok {
		return nil, false
	}
	switch x := v.(type) {
	case []any:
		return x, true
	case []map[string]any:
		out := make([]any, len(x))
		for i, m := range x {
			out[i] = m
		}
		return out, true
	}
	n.errorf(k, "want an array, got %s", typeName(v))
	return nil, false
}

// strs returns an array of strings.
func (n *node) strs(k string) ([]string, bool) {
	l, ok := n.list(k)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(l))
	good := true
	for i, v := range l {
		s, isStr := v.(string)
		if !isStr {
			n.src.errorf(index(n.key(k), i), "want a string, got %s", typeName(v))
			good = false
			continue
		}
		out = append(out, s)
	}
	return out, good
}

// nums returns an array of numbers.
func (n *node) nums(k string) ([]float64, bool) {
	l, ok := n.list(k)
	if !ok {
		return nil, false
	}
	out := make([]float64, 0, len(l))
	good := true
	for i, v := range l {
		f, isNum := asNumber(v)
		if !isNum {
			n.src.errorf(index(n.key(k), i), "want a number, got %s", typeName(v))
			good = false
			continue
		}
		out = append(out, f)
	}
	return out, good
}

// table returns a sub-table.
func (n *node) table(k string) (*node, bool) {
	v, ok := n.get(k)
	if !ok {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		n.errorf(k, "want a table, got %s", typeName(v))
		return nil, false
	}
	return newNode(n.src, n.key(k), m), true
}

// tables returns an array of tables ([[k]] or k = [{…}, …]).
func (n *node) tables(k string) []*node {
	l, ok := n.list(k)
	if !ok {
		return nil
	}
	var out []*node
	for i, v := range l {
		m, ok := v.(map[string]any)
		if !ok {
			n.src.errorf(index(n.key(k), i), "want a table, got %s", typeName(v))
			continue
		}
		out = append(out, newNode(n.src, index(n.key(k), i), m))
	}
	return out
}

// numbers returns a table of numbers (name → value), sorted by name.
func (n *node) numbers(k string) ([]string, map[string]float64) {
	t, ok := n.table(k)
	if !ok {
		return nil, nil
	}
	out := map[string]float64{}
	var names []string
	for name := range t.m {
		if f, ok := t.num(name); ok {
			out[name] = f
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, out
}
