//go:build cuda

package gpu

import (
	"fmt"

	"github.com/hearth-dcop/hearth/local"
)

// Plan layout shared with kernels.cu (see the comment there).
const (
	pNIn = iota
	pNE
	pNOut
	pNElim
	pESize
	pWords
	pHdr = 8
)

// maxSharedBytes bounds a plan, which every block stages in shared memory:
// 48 KiB is what any CUDA device gives a block without opting in.
const maxSharedBytes = 48 << 10

// kernel names in the module, by the number of inputs holding the one
// eliminated variable (jpOne[ne]), and the generic one.
const kGeneric = "jp_generic_k"

var jpOne = [...]string{1: "jp_one1_k", 2: "jp_one2_k", 3: "jp_one3_k", 4: "jp_one4_k"}

// jpFast[ne] is jpOne[ne] with 32-bit index arithmetic (kernels.cu,
// jp_fast), for plans whose indices fit (fast32) and that have at most
// maxRowIn inputs without the eliminated variable.
var jpFast = [...]string{1: "jp_fast1_k", 2: "jp_fast2_k", 3: "jp_fast3_k", 4: "jp_fast4_k"}

// jpFastN is jp_fast for 5 to maxFastN inputs holding the eliminated
// variable (MAXE_N in kernels.cu).
const (
	jpFastN  = "jp_fastn_k"
	maxFastN = 8
)

// maxRowIn is MAXR in kernels.cu.
const maxRowIn = 4

// kernelNames lists every kernel of the module.
var kernelNames = []string{kGeneric, jpOne[1], jpOne[2], jpOne[3], jpOne[4], jpFast[1], jpFast[2], jpFast[3], jpFast[4], jpFastN}

// fast32 reports whether p's indices fit jp_fast's 32-bit arithmetic:
// every input under 2^31 entries, and rows × the largest output dim at
// most 2^32, which bounds every division of the row decoding (magic.go).
func fast32(p *local.JoinProject) bool {
	for _, f := range p.Inputs() {
		if int64(entries(f)) >= 1<<31 {
			return false
		}
	}
	maxDim := int64(1)
	for _, d := range p.OutDims() {
		maxDim = max(maxDim, int64(d))
	}
	rows := int64(p.Rows())
	return rows < 1<<31 && rows*maxDim <= 1<<32
}

// packed is a local.JoinProject in the kernels' layout. The input
// addresses (words[pHdr:pHdr+nIn]) are filled in per launch.
type packed struct {
	words  []int64
	slots  []int // slots[s] is the input index in slot s
	kernel string
}

// pack lays p out for the kernels, or returns an error wrapping
// ErrUnsupported. Without fast, the 32-bit kernels are never chosen (for
// tests of the others).
func pack(p *local.JoinProject, fast bool) (*packed, error) {
	inputs := p.Inputs()
	out, elim := p.Out(), p.Elim()
	if len(inputs) > MaxInputs {
		return nil, fmt.Errorf("gpu: %d inputs, the kernel takes at most %d: %w", len(inputs), MaxInputs, ErrUnsupported)
	}
	if len(elim) > MaxElim {
		return nil, fmt.Errorf("gpu: %d eliminated variables, the kernel takes at most %d: %w", len(elim), MaxElim, ErrUnsupported)
	}
	// stride[j][v]: input j's stride for variable v (absent: 0).
	stride := make([]map[int]int64, len(inputs))
	isElim := make(map[int]bool, len(elim))
	for _, v := range elim {
		isElim[v] = true
	}
	var eIn, rIn []int
	for j, f := range inputs {
		stride[j] = make(map[int]int64, len(f.Vars))
		s := int64(1)
		has := false
		for i := len(f.Vars) - 1; i >= 0; i-- {
			stride[j][f.Vars[i]] = s
			s *= int64(f.Dims[i])
			has = has || isElim[f.Vars[i]]
		}
		if has {
			eIn = append(eIn, j)
		} else {
			rIn = append(rIn, j)
		}
	}
	slots := append(eIn, rIn...)
	nIn, ne := len(slots), len(eIn)
	n := pHdr + nIn + len(out) + len(elim) + len(out)*nIn + len(elim)*ne + len(out)
	if n*8 > maxSharedBytes {
		return nil, fmt.Errorf("gpu: a plan of %d bytes exceeds %d bytes of shared memory: %w", n*8, maxSharedBytes, ErrUnsupported)
	}
	w := make([]int64, 0, n)
	w = append(w, int64(nIn), int64(ne), int64(len(out)), int64(len(elim)), int64(p.ElimSize()), int64(n), 0, 0)
	w = append(w, make([]int64, nIn)...) // addresses
	for _, d := range p.OutDims() {
		w = append(w, int64(d))
	}
	for _, d := range p.ElimDims() {
		w = append(w, int64(d))
	}
	for _, v := range out {
		for _, j := range slots {
			w = append(w, stride[j][v])
		}
	}
	for _, v := range elim {
		for _, j := range eIn {
			w = append(w, stride[j][v])
		}
	}
	for _, d := range p.OutDims() {
		w = append(w, int64(magic(uint32(d)))) // used by jp_fast only
	}
	k := kGeneric
	if len(elim) == 1 && ne >= 1 && ne < len(jpOne) {
		k = jpOne[ne]
	}
	if fast && len(elim) == 1 && ne >= 1 && ne <= maxFastN && nIn-ne <= maxRowIn && fast32(p) {
		k = jpFastN
		if ne < len(jpFast) {
			k = jpFast[ne]
		}
	}
	return &packed{words: w, slots: slots, kernel: k}, nil
}

// Supported reports whether the GPU kernel handles p; the others run on
// the CPU.
func Supported(p *local.JoinProject) bool {
	_, err := pack(p, true)
	return err == nil
}
