package wire

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	var w Writer
	w.Uint(300)
	w.Int(-7)
	w.Float(math.Inf(1))
	w.Float(2.5)
	w.Bool(true)
	w.Ints([]int{3, -1, 0})
	w.Floats([]float64{1, math.Inf(1)})
	w.Int(4)
	r := NewReader(w.Bytes())
	if r.Uint() != 300 || r.Int() != -7 || !math.IsInf(r.Float(), 1) || r.Float() != 2.5 || !r.Bool() {
		t.Fatal("scalar mismatch")
	}
	if got := r.Ints(); !slices.Equal(got, []int{3, -1, 0}) {
		t.Errorf("ints = %v", got)
	}
	if got := r.Floats(); len(got) != 2 || got[0] != 1 || !math.IsInf(got[1], 1) {
		t.Errorf("floats = %v", got)
	}
	if r.IntIn(0, 5) != 4 {
		t.Error("IntIn")
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestMalformed(t *testing.T) {
	nan := Writer{}
	nan.Float(math.NaN())
	long := Writer{}
	long.Uint(1 << 40)
	out := Writer{}
	out.Int(9)
	tests := []struct {
		name string
		body []byte
		read func(r *Reader)
	}{
		{"empty", nil, func(r *Reader) { r.Uint() }},
		{"short float", []byte{1, 2}, func(r *Reader) { r.Float() }},
		{"nan", nan.Bytes(), func(r *Reader) { r.Float() }},
		{"forged length", long.Bytes(), func(r *Reader) { r.Floats() }},
		{"out of range", out.Bytes(), func(r *Reader) { r.IntIn(0, 3) }},
		{"bad bool", []byte{7}, func(r *Reader) { r.Bool() }},
		{"trailing", []byte{1, 1}, func(r *Reader) { r.Uint() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(tc.body)
			tc.read(r)
			if err := r.Err(); !errors.Is(err, ErrMalformed) {
				t.Errorf("err = %v, want ErrMalformed", err)
			}
		})
	}
}

func FuzzReader(f *testing.F) {
	var w Writer
	w.Ints([]int{1, 2})
	w.Floats([]float64{3})
	f.Add(w.Bytes())
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(b)
		r.Ints()
		r.Floats()
		r.IntIn(-3, 3)
		r.Bool()
		_ = r.Err()
	})
}
