//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/hearth-dcop/hearth/local"
)

// Keys of testdata/jp_i32.cu: a Hard entry's key, and the bound below
// which every finite row key must stay.
const (
	i32HardIn  = 1 << 27
	i32KeyHard = 1 << 26
)

// i32Keys converts p's inputs, in pk's slot order, to jp_i32.cu's keys,
// or reports why it cannot: a cost that is not a whole number (or -0),
// or sums too large for the keys.
func i32Keys(p *local.JoinProject, pk *packed) (keys [][]int32, unit bool, err error) {
	D := int64(p.ElimDims()[0])
	inputs := p.Inputs()
	if len(pk.slots) > 7 {
		return nil, false, fmt.Errorf("%d inputs", len(pk.slots))
	}
	var bound int64
	unit = true
	keys = make([][]int32, len(pk.slots))
	for s, j := range pk.slots {
		f := inputs[j]
		var est int64 // the input's stride for the eliminated variable (0: none)
		st := int64(1)
		for i := len(f.Vars) - 1; i >= 0; i-- {
			if f.Vars[i] == p.Elim()[0] {
				est = st
			}
			st *= int64(f.Dims[i])
		}
		fold := s == 0 && est > 0
		unit = unit && (est == 0 || est == 1)
		k := make([]int32, len(f.Costs))
		var mx int64
		for i, v := range f.Costs {
			switch {
			case math.IsInf(v, 1):
				k[i] = i32HardIn
				continue
			case math.IsNaN(v) || math.IsInf(v, -1) || v != math.Trunc(v) || (v == 0 && math.Signbit(v)) || math.Abs(v) > 1<<24:
				return nil, false, fmt.Errorf("input %d entry %d = %v", j, i, v)
			}
			x := int64(v)
			mx = max(mx, max(x, -x))
			x *= D
			if fold {
				x += int64(i) / est % D
			}
			k[i] = int32(x)
		}
		bound += mx
		keys[s] = k
	}
	if bound*D+D >= i32KeyHard/2 {
		return nil, false, fmt.Errorf("sums up to %d: keys too large", bound)
	}
	return keys, unit, nil
}

// i32Time uploads keys and times the kernel matching pk (pk.kernel with
// prefix i32_, or i32u_ for the unit-stride tiles) over the whole output, median of reps in ms, and
// returns its output.
func i32Time(d *Device, mod cu.Module, prefix string, p *local.JoinProject, pk *packed, keys [][]int32, reps int) (float64, []float64, []int32, error) {
	rows := int64(p.Rows())
	got := make([]float64, rows)
	gotArg := make([]int32, rows)
	var ms float64
	err := d.do(context.Background(), func(o *owner) error {
		fn, err := mod.Function(prefix + pk.kernel)
		if err != nil {
			return fmt.Errorf("%s: %w", prefix+pk.kernel, err)
		}
		var bufs []devBuf
		defer func() {
			for _, b := range bufs {
				o.pool.put(b)
			}
		}()
		get := func(n int64) (cu.DevicePtr, error) {
			b, err := o.pool.get(n)
			bufs = append(bufs, b)
			return b.ptr, err
		}
		words := slices.Clone(pk.words)
		for s, k := range keys {
			ptr, err := get(int64(len(k)) * 4)
			if err != nil {
				return err
			}
			if err := cu.MemcpyHtoD(ptr, unsafe.Pointer(&k[0]), int64(len(k))*4); err != nil {
				return err
			}
			words[pHdr+s] = int64(ptr)
		}
		plan, err := get(int64(len(words)) * 8)
		if err != nil {
			return err
		}
		if err := cu.MemcpyHtoD(plan, unsafe.Pointer(&words[0]), int64(len(words))*8); err != nil {
			return err
		}
		dst, err := get(rows * 8)
		if err != nil {
			return err
		}
		arg, err := get(rows * 4)
		if err != nil {
			return err
		}
		start, _ := cu.MakeEvent(cu.DefaultEvent)
		stop, _ := cu.MakeEvent(cu.DefaultEvent)
		defer cu.DestroyEvent(&start)
		defer cu.DestroyEvent(&stop)
		var r0 int64
		blocks := int(min((pk.units(rows)+blockThreads-1)/blockThreads, int64(o.sms*blocksPerSM)))
		args := []unsafe.Pointer{unsafe.Pointer(&plan), unsafe.Pointer(&dst), unsafe.Pointer(&arg), unsafe.Pointer(&r0), unsafe.Pointer(&rows)}
		s := o.streams[0]
		ts := make([]float64, reps+1)
		for i := range ts {
			start.Record(s)
			if err := fn.Launch(blocks, 1, 1, blockThreads, 1, 1, len(words)*8, s, args); err != nil {
				return err
			}
			stop.Record(s)
			if err := stop.Synchronize(); err != nil {
				return err
			}
			if ts[i], err = start.Elapsed(stop); err != nil {
				return err
			}
		}
		ts = ts[1:]
		slices.Sort(ts)
		ms = ts[reps/2]
		if err := cu.MemcpyDtoH(unsafe.Pointer(&got[0]), dst, rows*8); err != nil {
			return err
		}
		return cu.MemcpyDtoH(unsafe.Pointer(&gotArg[0]), arg, rows*4)
	})
	return ms, got, gotArg, err
}

// TestI32Experiment measures testdata/jp_i32.cu (32-bit integer keys)
// against the shipped double kernels, untiled and tiled, and the device's
// copy bandwidth, in one run, on TestBenchCSV's kernel shapes; every
// result must equal the CPU kernel's bit for bit. It is issue 19's item 3
// experiment: set HEARTH_GPU_I32 to cubins compiled from
// testdata/jp_i32.cu, separated by commas (nvcc -cubin -arch=sm_90
// [-DI32_MINB=3] -o jp_i32.cubin jp_i32.cu).
func TestI32Experiment(t *testing.T) {
	path := os.Getenv("HEARTH_GPU_I32")
	if path == "" {
		t.Skip("set HEARTH_GPU_I32 to a cubin of testdata/jp_i32.cu")
	}
	ctx := context.Background()
	d := openDevice(t, Options{})
	type module struct {
		name string
		mod  cu.Module
	}
	var mods []module
	for _, path := range strings.Split(path, ",") {
		img, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.do(ctx, func(*owner) error {
			m, err := cu.LoadData(string(img))
			mods = append(mods, module{strings.TrimSuffix(filepath.Base(path), ".cubin"), m})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	bw, err := copyBandwidth(d, 1<<30, 9)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: DtoD copy %.1f GB/s (read + write)", d.Name(), bw)
	share := func(bytes int64, ms float64) string {
		return fmt.Sprintf("%5.1f%%", 100*float64(bytes)/(ms*1e6)/bw)
	}
	for _, shape := range []string{"bucket", "wide"} {
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
			for _, c := range []struct {
				name   string
				choice kernelChoice
			}{{"untiled", kernelsNoTile}, {"tiled", kernelsAll}} {
				pk, err := pack(p, c.choice)
				if err != nil {
					t.Fatal(err)
				}
				dbl, err := kernelTime(d, p, 5, c.choice)
				if err != nil {
					t.Fatal(err)
				}
				keys, unit, err := i32Keys(p, pk)
				if err != nil {
					t.Fatalf("%s: %v", shape, err)
				}
				i32Bytes := int64(n) * 12
				for _, k := range keys {
					i32Bytes += int64(len(k)) * 4
				}
				prefixes := []string{"i32_"}
				if unit && pk.block > 0 {
					prefixes = append(prefixes, "i32u_")
				}
				l := fmt.Sprintf("%s %s: double %.3f ms (%s)", c.name, pk.kernel, dbl, share(minBytes, dbl))
				for _, m := range mods {
					for _, pre := range prefixes {
						ms, got, gotArg, err := i32Time(d, m.mod, pre, p, pk, keys, 5)
						if err != nil {
							t.Fatal(err)
						}
						if err := sameBits(shape+" "+pre+c.name, got, want, gotArg, wantArg); err != nil {
							t.Fatal(err)
						}
						l += fmt.Sprintf(", %s%s %.3f ms (%s of the double bytes, %s of its own) %.2fx", m.name, pre, ms, share(minBytes, ms), share(i32Bytes, ms), dbl/ms)
					}
				}
				line = append(line, l)
			}
			t.Logf("%s 1e%d: %s", shape, int(math.Round(math.Log10(float64(entries)))), strings.Join(line, "; "))
		}
	}
}
