//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/hearth-dcop/hearth/local"
)

// i32Costs converts p's inputs, in pk's slot order, to the integer
// kernels' costs (Hard as i32Hard), or reports why it cannot.
func i32Costs(p *local.JoinProject, pk *packed) ([][]int32, error) {
	inputs := p.Inputs()
	keys := make([][]int32, len(pk.slots))
	var bound int64
	for s, j := range pk.slots {
		k := make([]int32, len(inputs[j].Costs))
		var mx int64
		for i, v := range inputs[j].Costs {
			switch {
			case math.IsInf(v, 1):
				k[i] = i32Hard
				continue
			case v != math.Trunc(v) || math.Abs(v) >= i32Limit || (v == 0 && math.Signbit(v)):
				return nil, fmt.Errorf("input %d entry %d = %v", j, i, v)
			}
			k[i] = int32(v)
			mx = max(mx, max(int64(v), -int64(v)))
		}
		bound = max(bound, mx)
		keys[s] = k
	}
	if bound*int64(len(pk.slots)) >= i32Limit {
		return nil, fmt.Errorf("costs up to %d: sums out of range", bound)
	}
	return keys, nil
}

// i32Time uploads keys and times the integer instance of pk's kernel over
// the whole output, median of reps in ms, and returns its output.
func i32Time(d *Device, p *local.JoinProject, pk *packed, keys [][]int32, reps int) (float64, []float64, []int32, error) {
	rows := int64(p.Rows())
	got := make([]float64, rows)
	gotArg := make([]int32, rows)
	var ms float64
	err := d.do(context.Background(), func(o *owner) error {
		name, shared, units := pk.kernelFor(pk.kernel, true, pk.prodRows > 0, rows)
		fn, ok := o.fns[name]
		if !ok {
			return fmt.Errorf("%s has no integer instance", pk.kernel)
		}
		inputs := make([]hostSlice, len(keys))
		for s, k := range keys {
			inputs[s] = hostSlice{unsafe.Pointer(&k[0]), int64(len(k)) * 4}
		}
		var err error
		ms, err = launchTimed(o, pk.words, inputs, rows, units, fn, shared, reps, func(dst, arg cu.DevicePtr) error {
			if err := cu.MemcpyDtoH(unsafe.Pointer(&got[0]), dst, rows*8); err != nil {
				return err
			}
			return cu.MemcpyDtoH(unsafe.Pointer(&gotArg[0]), arg, rows*4)
		})
		return err
	})
	return ms, got, gotArg, err
}

// TestI32Bench measures the integer-cost kernels against the double ones,
// untiled, tiled and, where the shape is a product, jp_prod (whose double
// column is the tiled kernel's), and the device's copy bandwidth, in one run, on
// TestBenchCSV's kernel shapes and on the public SPOT5 files' bucket shape
// (many: jp_fastn16, no tile, and jp_generic as before); every result must equal the CPU kernel's
// bit for bit. The integer kernel's share counts the bytes the double
// kernel must move (minBytes), as the goal does, and its own.
// Set HEARTH_GPU_I32=1 to run it, and HEARTH_GPU_I32_SHAPES to a
// comma-separated list to run only those shapes. On the wide shape the
// product is jp_prodw (a P of one variable, 10 values).
func TestI32Bench(t *testing.T) {
	if os.Getenv("HEARTH_GPU_I32") == "" {
		t.Skip("set HEARTH_GPU_I32=1")
	}
	ctx := context.Background()
	d := openDevice(t, Options{})
	bw, err := copyBandwidth(d, 1<<30, 9)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: DtoD copy %.1f GB/s (read + write)", d.Name(), bw)
	share := func(bytes int64, ms float64) string {
		return fmt.Sprintf("%5.1f%%", 100*float64(bytes)/(ms*1e6)/bw)
	}
	shapes := []string{"bucket", "wide", "many"}
	if s := os.Getenv("HEARTH_GPU_I32_SHAPES"); s != "" {
		shapes = strings.Split(s, ",") // e.g. bucket,wide
	}
	for _, shape := range shapes {
		for _, entries := range []int64{1e7, 1e8, 1e9} {
			p, minBytes, err := benchSet(shape, entries, uint64(entries))
			if err != nil {
				t.Fatal(err)
			}
			n := p.Rows()
			want := make([]float64, n)
			wantArg := make([]int32, n)
			if err := p.Run(ctx, want, wantArg, 0); err != nil {
				t.Fatal(err)
			}
			var line []string
			type variant struct {
				name   string
				choice kernelChoice
			}
			choices := []variant{{"untiled", kernelsNoTile}, {"tiled", kernelsNoProd}, {"product", kernelsAll}}
			if shape == "many" {
				// What served these buckets before jp_fastn16.
				choices = append(choices, variant{"without jp_fast", kernelsNoFast})
			}
			for _, c := range choices {
				pk, err := pack(p, c.choice)
				if err != nil {
					t.Fatal(err)
				}
				if c.choice == kernelsNoProd && pk.block == 0 || c.choice == kernelsAll && pk.prodRows == 0 {
					continue // no tile, or no product, for this shape
				}
				dbl, err := kernelTime(d, p, 5, c.choice)
				if err != nil {
					t.Fatal(err)
				}
				keys, err := i32Costs(p, pk)
				if err != nil {
					t.Fatalf("%s: %v", shape, err)
				}
				i32Bytes := int64(n) * 12
				for _, k := range keys {
					i32Bytes += int64(len(k)) * 4
				}
				ms, got, gotArg, err := i32Time(d, p, pk, keys, 5)
				if err != nil {
					t.Fatal(err)
				}
				if err := sameBits(shape+" "+c.name, got, want, gotArg, wantArg); err != nil {
					t.Fatal(err)
				}
				name, _, _ := pk.kernelFor(pk.kernel, true, pk.prodRows > 0, int64(n))
				line = append(line, fmt.Sprintf("%s %s: double %.3f ms (%s), int %.3f ms (%s of the double bytes, %s of its own) %.2fx",
					c.name, name, dbl, share(minBytes, dbl), ms, share(minBytes, ms), share(i32Bytes, ms), dbl/ms))
			}
			t.Logf("%s 1e%d: %s", shape, int(math.Round(math.Log10(float64(entries)))), strings.Join(line, "; "))
		}
	}
}
