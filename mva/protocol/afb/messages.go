package afb

import (
	"fmt"
	"math"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/wire"
)

// Message kinds (notes §1.4). The direction of a CPA_MSG follows from the
// sender's position.
const (
	kindCPA         = "CPA_MSG"
	kindFBCPA       = "FB_CPA"
	kindEstimate    = "FB_ESTIMATE"
	kindNewSolution = "NEW_SOLUTION"
	kindTerminate   = "TERMINATE"
	kindLB          = "LB"
)

// Kinds lists every message kind the protocol sends, for drivers and
// fuzzers.
func Kinds() []string {
	return []string{kindCPA, kindFBCPA, kindEstimate, kindNewSolution, kindTerminate, kindLB}
}

// solution is a complete assignment (one row per position) with its
// shifted cost and the total shift of all agents; rows is nil and cost
// +Inf when no solution is known.
type solution struct {
	cost  float64
	shift float64
	rows  []int
}

func (s *solution) write(w *wire.Writer) {
	w.Float(s.cost)
	if s.rows == nil {
		return
	}
	w.Float(s.shift)
	for _, r := range s.rows {
		w.Int(int64(r))
	}
}

// readSolution decodes a solution for positions with rows[p] rows.
func readSolution(r *wire.Reader, rows []int) solution {
	s := solution{cost: r.Float()}
	if math.IsInf(s.cost, 1) {
		return s
	}
	s.shift = r.Float()
	s.rows = make([]int, len(rows))
	for p := range rows {
		s.rows[p] = r.IntIn(0, rows[p])
	}
	return s
}

func (s *solution) validate() error {
	if s.cost < 0 || s.shift > 0 || math.IsInf(s.shift, 0) {
		return fmt.Errorf("%w: solution cost %v, shift %v", wire.ErrMalformed, s.cost, s.shift)
	}
	return nil
}

// encodeCPA writes a CPA body; a backtrack (sol != nil) also carries the
// sender's best solution (notes §1.8, the piggyback).
func encodeCPA(c *cpa, sol *solution) []byte {
	var w wire.Writer
	c.write(&w)
	if sol != nil {
		sol.write(&w)
	}
	return w.Bytes()
}

func decodeCPA(body []byte, rows []int, backtrack bool) (cpa, solution, error) {
	r := wire.NewReader(body)
	c := readCPA(r, rows)
	var s solution
	if backtrack {
		s = readSolution(r, rows)
	}
	if err := r.Err(); err != nil {
		return cpa{}, solution{}, err
	}
	if err := c.validate(); err != nil {
		return cpa{}, solution{}, err
	}
	if backtrack {
		if err := s.validate(); err != nil {
			return cpa{}, solution{}, err
		}
	}
	return c, s, nil
}

func encodeSolution(s *solution) []byte {
	var w wire.Writer
	s.write(&w)
	return w.Bytes()
}

func decodeSolution(body []byte, rows []int) (solution, error) {
	r := wire.NewReader(body)
	s := readSolution(r, rows)
	if err := r.Err(); err != nil {
		return solution{}, err
	}
	return s, s.validate()
}

// encodeEstimate writes an FB_ESTIMATE: the bound and the FB_CPA's stamps
// on its assigned prefix, echoed so the receiver can match them.
func encodeEstimate(est float64, ts []uint64) []byte {
	var w wire.Writer
	w.Float(est)
	w.Int(int64(len(ts)))
	for _, t := range ts {
		w.Uint(t)
	}
	return w.Bytes()
}

// decodeEstimate reads an estimate whose echoed prefix must have n stamps.
func decodeEstimate(body []byte, n int) (float64, []uint64, error) {
	r := wire.NewReader(body)
	est := r.Float()
	l := r.IntIn(n, n+1)
	ts := make([]uint64, 0, n)
	for range l {
		ts = append(ts, r.Uint())
	}
	if err := r.Err(); err != nil {
		return 0, nil, err
	}
	if est < 0 {
		return 0, nil, fmt.Errorf("%w: estimate %v", wire.ErrMalformed, est)
	}
	return est, ts, nil
}

func encodeFloat(v float64) []byte {
	var w wire.Writer
	w.Float(v)
	return w.Bytes()
}

func decodeLB(body []byte) (float64, error) {
	r := wire.NewReader(body)
	v := r.Float()
	if err := r.Err(); err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, fmt.Errorf("%w: lower bound %v", wire.ErrMalformed, v)
	}
	return v, nil
}

// msg builds an outgoing message.
func (a *agent) msg(to int, kind string, body []byte) mva.Message {
	return mva.Message{From: a.id, To: to, Kind: kind, Body: body}
}
