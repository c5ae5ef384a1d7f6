package dpop

import (
	"fmt"

	"github.com/hearth-dcop/hearth/mva/wire"
)

// Message kinds.
const (
	KindDegree = "DFS_DEGREE"
	KindToken  = "DFS_TOKEN"
	KindReturn = "DFS_RETURN"
	KindUtil   = "UTIL"
	KindValue  = "VALUE"
)

// Kinds lists every message kind, for tests and tools that iterate over
// them.
func Kinds() []string { return []string{KindDegree, KindToken, KindReturn, KindUtil, KindValue} }

func encodeDegree(degree int) []byte {
	var w wire.Writer
	w.Int(int64(degree))
	return w.Bytes()
}

func decodeDegree(body []byte, numAgents int) (int, error) {
	r := wire.NewReader(body)
	d := r.IntIn(0, numAgents)
	if err := r.Err(); err != nil {
		return 0, fmt.Errorf("%s: %w", KindDegree, err)
	}
	return d, nil
}

// token is the DFS token: the root-to-sender path and every agent reached
// so far.
type token struct {
	path, visited []int
}

func encodeToken(t token) []byte {
	var w wire.Writer
	w.Ints(t.path)
	w.Ints(t.visited)
	return w.Bytes()
}

func decodeToken(body []byte, numAgents int) (token, error) {
	r := wire.NewReader(body)
	var t token
	t.path = readIDs(r, numAgents)
	t.visited = readIDs(r, numAgents)
	if err := r.Err(); err != nil {
		return token{}, fmt.Errorf("%s: %w", KindToken, err)
	}
	if err := distinct(t.path); err != nil {
		return token{}, fmt.Errorf("%s: path: %w", KindToken, err)
	}
	if err := distinct(t.visited); err != nil {
		return token{}, fmt.Errorf("%s: visited set: %w", KindToken, err)
	}
	return t, nil
}

func encodeReturn(visited []int) []byte {
	var w wire.Writer
	w.Ints(visited)
	return w.Bytes()
}

func decodeReturn(body []byte, numAgents int) ([]int, error) {
	r := wire.NewReader(body)
	visited := readIDs(r, numAgents)
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", KindReturn, err)
	}
	if err := distinct(visited); err != nil {
		return nil, fmt.Errorf("%s: visited set: %w", KindReturn, err)
	}
	return visited, nil
}

// util is a UTIL table: costs over vars (problem variable ids, increasing)
// in row-major order, last variable fastest.
type util struct {
	vars  []int
	costs []float64
}

func encodeUtil(u util) []byte {
	var w wire.Writer
	w.Ints(u.vars)
	w.Floats(u.costs)
	return w.Bytes()
}

func decodeUtil(body []byte, numVars int) (util, error) {
	r := wire.NewReader(body)
	var u util
	u.vars = readIDs(r, numVars)
	u.costs = r.Floats()
	if err := r.Err(); err != nil {
		return util{}, fmt.Errorf("%s: %w", KindUtil, err)
	}
	for i := 1; i < len(u.vars); i++ {
		if u.vars[i] <= u.vars[i-1] {
			return util{}, fmt.Errorf("%s: variables %v are not increasing", KindUtil, u.vars)
		}
	}
	return u, nil
}

// value is a VALUE message: the optimum's cost and the receiver's
// separator values.
type value struct {
	cost   float64
	values []int
}

func encodeValue(v value) []byte {
	var w wire.Writer
	w.Float(v.cost)
	w.Ints(v.values)
	return w.Bytes()
}

// decodeValue reads a VALUE body whose values must fit dims, the domain
// sizes of the receiver's separator variables.
func decodeValue(body []byte, dims []int) (value, error) {
	r := wire.NewReader(body)
	var v value
	v.cost = r.Float()
	// Reader.Err reports trailing bytes, so it is called only at the end:
	// a count that does not match reads nothing and fails below.
	n := r.Len(1)
	if n == len(dims) {
		v.values = make([]int, n)
		for k := range n {
			v.values[k] = r.IntIn(0, dims[k])
		}
	}
	if err := r.Err(); err != nil {
		return value{}, fmt.Errorf("%s: %w", KindValue, err)
	}
	if n != len(dims) {
		return value{}, fmt.Errorf("%s: %d values for %d separator variables", KindValue, n, len(dims))
	}
	return v, nil
}

// readIDs reads a length-prefixed list of indices in [0, hi).
func readIDs(r *wire.Reader, hi int) []int {
	n := r.Len(1)
	ids := make([]int, 0, n)
	for range n {
		ids = append(ids, r.IntIn(0, hi))
	}
	return ids
}

// distinct reports an error when ids holds a repeated index.
func distinct(ids []int) error {
	seen := make(map[int]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return fmt.Errorf("agent %d appears twice", id)
		}
		seen[id] = true
	}
	return nil
}
