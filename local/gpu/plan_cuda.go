//go:build cuda

package gpu

import (
	"fmt"
	"slices"

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

// jpFastWide are jp_fast for more inputs holding the eliminated variable:
// jpFastWide[i].name serves up to jpFastWide[i].max of them (kernels.cu,
// JP_FASTN), the public SPOT5 files' large buckets among them.
var jpFastWide = [...]struct {
	max  int
	name string
}{{16, "jp_fastn16_k"}, {32, "jp_fastn32_k"}}

// maxRowIn is MAXR in kernels.cu.
const maxRowIn = 4

// jpTile[t][ne] is jpFast[ne] with a register tile of tileSides[t] rows
// over one output variable (kernels.cu, jp_tile), for plans where the
// tile saves loads (chooseTile).
var jpTile = [2][5]string{
	{1: "jp_tile1_4_k", 2: "jp_tile2_4_k", 3: "jp_tile3_4_k", 4: "jp_tile4_4_k"},
	{1: "jp_tile1_8_k", 2: "jp_tile2_8_k", 3: "jp_tile3_8_k", 4: "jp_tile4_8_k"},
}

// tileSides are the T of jp_tile's instances: 8 for variables of 8 values
// or more, else 4.
var tileSides = [2]int{4, 8}

// tileSide returns the index in tileSides of the tile for a variable of
// dim values.
func tileSide(dim int) int {
	if dim >= 8 {
		return 1
	}
	return 0
}

// minTileGain is the factor by which a tile must cut the loads per row
// (chooseTile) for jp_tile to replace jp_fast: below it, the tile's
// registers and partial tiles cost about what the loads save.
const minTileGain = 1.5

// kernelNames lists every kernel of the module.
var kernelNames = []string{kGeneric, jpOne[1], jpOne[2], jpOne[3], jpOne[4], jpFast[1], jpFast[2], jpFast[3], jpFast[4], jpFastN, jpFastWide[0].name, jpFastWide[1].name,
	jpTile[0][1], jpTile[0][2], jpTile[0][3], jpTile[0][4], jpTile[1][1], jpTile[1][2], jpTile[1][3], jpTile[1][4]}

// kernelChoice narrows the kernels pack may choose, so that tests reach
// every kernel: a Device uses kernelsAll.
type kernelChoice int

const (
	kernelsAll        kernelChoice = iota
	kernelsNoTile                  // no jp_tile
	kernelsNoFast                  // neither jp_tile nor jp_fast
	kernelsTileAlways              // jp_tile also below minTileRows
	kernelsI32Always               // as kernelsTileAlways, and integer costs at every size
	kernelsDouble                  // as kernelsAll, never integer costs
	kernelsI32NoFast               // as kernelsNoFast, and integer costs at every size
	kernelsNoProd                  // as kernelsAll, never jp_prod (its baseline in benchmarks)
	kernelsI32Wide                 // as kernelsI32Always, jp_prodw instead of jp_prod wherever it fits (tests)
)

// minI32Rows is the smallest output for which a step tries the integer
// kernels (i32Rows): below it, the conversion's launches and its check's
// round trip to the host cost about what the kernel saves.
const minI32Rows = 1 << 16

// i32Rows returns the smallest output whose step tries the integer-cost
// kernels, or -1 for none.
func (c kernelChoice) i32Rows() int64 {
	switch c {
	case kernelsAll, kernelsNoProd:
		return minI32Rows
	case kernelsI32Always, kernelsI32NoFast, kernelsI32Wide:
		return 0
	}
	return -1
}

// i32Name returns the integer-cost instance of the double kernel k, or ""
// when k has none. Every join-project kernel has one (kernels.cu, i32_
// in front of the name), for steps of at most maxI32Inputs inputs.
func i32Name(k string) string {
	if k != "" && (k == kGeneric || k == jpFastN || k == jpFastWide[0].name || k == jpFastWide[1].name || slices.Contains(jpOne[:], k) || slices.Contains(jpFast[:], k) || slices.Contains(jpTile[0][:], k) || slices.Contains(jpTile[1][:], k)) {
		return "i32_" + k
	}
	return ""
}

// kD2I is the kernel that converts a table of doubles to integer costs and
// checks that they are exact (kernels.cu, jp_d2i_k).
const kD2I = "jp_d2i_k"

// Integer costs (kernels.cu, cost<int>): Hard's value, and the bound on
// the magnitude of every finite sum of a step.
const (
	i32Hard  = 1 << 26
	i32Limit = 1 << 25
	// maxI32Inputs bounds the inputs of an integer-cost step (I32_MAXIN):
	// a sum of n inputs stays below n*i32Hard + i32Limit, which must fit
	// an int32.
	maxI32Inputs = 31
)

// i32Kernels lists the integer-cost kernels and the conversion.
func i32Kernels() []string {
	ks := []string{kD2I}
	for _, k := range kernelNames {
		if n := i32Name(k); n != "" {
			ks = append(ks, n)
		}
	}
	return ks
}

// minTileRows is the smallest output jp_tile computes: a tile's thread
// does the work of T, so a smaller table leaves the device short of
// threads to hide latency with (measured on an H100: at 10^5 rows the
// tiled kernel is 30% slower, at 10^6 10% faster, at 10^8 1.3–1.5×).
const minTileRows = 1 << 19

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
	// With jp_tile: a launch must cover whole blocks of block rows
	// (chunks are cut to multiples of it), each tiles launch units
	// (threads); plain is the kernel for a chunk smaller than a block.
	block, tiles int64
	plain        string
	// With jp_prod or jp_prodw (integer steps of a tiled plan): the rows
	// per assignment of the output variables before the split (S), 0
	// without, and the kernel.
	prodRows   int64
	prodKernel string
}

// units returns the threads a launch of pk.kernel over n rows needs.
func (pk *packed) units(n int64) int64 {
	if pk.block > 0 {
		return (n + pk.block - 1) / pk.block * pk.tiles
	}
	return n
}

// pack lays p out for the kernels, or returns an error wrapping
// ErrUnsupported; choice narrows the kernels it picks from (for tests of
// the others).
func pack(p *local.JoinProject, choice kernelChoice) (*packed, error) {
	fast := choice != kernelsNoFast && choice != kernelsI32NoFast
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
	if fast && len(elim) == 1 && ne >= 1 && nIn-ne <= maxRowIn && fast32(p) {
		switch {
		case ne < len(jpFast):
			k = jpFast[ne]
		case ne <= maxFastN:
			k = jpFastN
		default:
			for _, w := range jpFastWide {
				if ne <= w.max {
					k = w.name
					break
				}
			}
		}
	}
	pk := &packed{words: w, slots: slots, kernel: k}
	tile := choice == kernelsTileAlways || choice == kernelsI32Always || choice == kernelsI32Wide || (choice == kernelsAll || choice == kernelsDouble || choice == kernelsNoProd) && p.Rows() >= minTileRows
	if tile && k != jpFastN && slices.Contains(jpFast[:], k) && n+3*len(out)+2 <= maxSharedBytes/8 {
		st := make([][]int64, len(out))
		for i, v := range out {
			st[i] = make([]int64, ne)
			for t, j := range eIn {
				st[i][t] = stride[j][v]
			}
		}
		if k2, ok := chooseTile(p.OutDims(), st); ok {
			pk.tile(p.OutDims(), k2, ne)
		}
	}
	if slices.Contains(jpFast[:], pk.plainKernel()) && (choice == kernelsAll || choice == kernelsI32Always || choice == kernelsI32Wide) {
		// jp_prod where its tile of prodNP × prodNS rows fills; else
		// jp_prodw where P is small (at most pwMaxP assignments) and S
		// fills its tile of pwNS.
		minS, minP, minSW := int64(prodNS), int64(prodNP), int64(pwNS)
		if choice != kernelsAll {
			minS, minP, minSW = 1, 1, 1 // every product shape, partial tiles too (tests)
		}
		side := make([][]int, len(out))
		for k, v := range out {
			side[k] = make([]int, nIn)
			for s, j := range slots {
				if stride[j][v] != 0 {
					side[k][s] = 1
				}
			}
		}
		staged := (len(pk.words)+3+nIn)/2*16 + (prodNP+prodNS)*p.ElimSize()*4
		stagedW := (len(pk.words)+5+nIn+pwMaxB+pwMaxBR)/2*16 + pwMaxP*p.ElimSize()*4
		if split, ok := chooseSplit(p.OutDims(), side, p.ElimSize(), minS, minP); ok && staged <= maxSharedBytes && choice != kernelsI32Wide {
			pk.product(p.OutDims(), split, side)
		} else if split, ok := chooseSplitWide(p.OutDims(), side, ne, p.ElimSize(), minSW); ok && stagedW <= maxSharedBytes {
			pk.productWide(p.OutDims(), split, side, ne)
		}
	}
	return pk, nil
}

// jp_prod's tile (kernels.cu, PROD_NP, PROD_NS, PROD_MAXD, PROD_MAXIN).
const (
	prodNP    = 64
	prodNS    = 128
	prodMaxD  = 16
	prodMaxIn = 8
	kProd     = "i32_jp_prod_k"
)

// jp_prodw (kernels.cu): the most assignments of P, the assignments of S a
// block's tile holds (256 threads × PW_TS), the most inputs over S with and
// without the eliminated variable; kProdW[n] serves up to 4n assignments
// of P.
const (
	pwMaxP  = 16
	pwNS    = blockThreads * 2
	pwMaxB  = 4
	pwMaxBR = 2
)

var kProdW = [...]string{1: "i32_jp_prodw1_k", 2: "i32_jp_prodw2_k", 3: "i32_jp_prodw3_k", 4: "i32_jp_prodw4_k"}

// chooseSplitWide picks where jp_prodw splits the output variables of a
// jp_fast plan (ne inputs holding the eliminated variable first, as in
// chooseSplit's holds) when P is small: every input on one side, P of at
// most pwMaxP assignments, S of at least minS, the S inputs within
// jp_prodw's registers, the eliminated variable within the packed argmin.
// Among the splits that qualify it takes the one with the most
// assignments of P: each read of the S inputs then serves the most rows.
func chooseSplitWide(dims []int, holds [][]int, ne, esize int, minS int64) (int, bool) {
	n := len(dims)
	if n < 2 || esize > prodMaxD || len(holds[0]) > prodMaxIn {
		return 0, false
	}
	best, bestP := 0, int64(0)
	for split := 1; split < n; split++ {
		ok := true
		nB, nBR := 0, 0
		for s := range holds[0] {
			inP, inS := false, false
			for k := range n {
				if holds[k][s] != 0 {
					inP, inS = inP || k < split, inS || k >= split
				}
			}
			ok = ok && !(inP && inS)
			if inS && s < ne {
				nB++
			} else if inS {
				nBR++
			}
		}
		sRows, pRows := int64(1), int64(1)
		for k, d := range dims {
			if k < split {
				pRows *= int64(d)
			} else {
				sRows *= int64(d)
			}
		}
		if !ok || nB > pwMaxB || nBR > pwMaxBR || pRows > pwMaxP || sRows < minS {
			continue
		}
		if pRows > bestP {
			best, bestP = split, pRows
		}
	}
	return best, bestP > 0
}

// productWide appends jp_prodw's words (kernels.cu) to a tiled plan:
// jp_prod's (product), then the S inputs' slots, those holding the
// eliminated variable (slots below ne) and the others, each list as its
// count and pwMaxB or pwMaxBR entries.
func (pk *packed) productWide(dims []int, split int, holds [][]int, ne int) {
	pk.product(dims, split, holds)
	var b, br []int64
	for s := range holds[0] {
		inS := false
		for k := split; k < len(dims); k++ {
			inS = inS || holds[k][s] != 0
		}
		switch {
		case inS && s < ne:
			b = append(b, int64(s))
		case inS:
			br = append(br, int64(s))
		}
	}
	w := append(pk.words, int64(len(b)))
	w = append(w, b...)
	w = append(w, make([]int64, pwMaxB-len(b))...)
	w = append(w, int64(len(br)))
	w = append(w, br...)
	w = append(w, make([]int64, pwMaxBR-len(br))...)
	w[pWords] = int64(len(w))
	pRows := int64(1)
	for _, d := range dims[:split] {
		pRows *= int64(d)
	}
	pk.words, pk.prodKernel = w, kProdW[(pRows+3)/4]
}

// chooseSplit picks where jp_prod splits the output variables of a
// jp_fast plan (esize eliminated values) into a prefix P and a suffix S:
// every input must hold variables of one side only (holds[k][s]: input
// slot s holds output variable k), the eliminated variable must fit
// jp_prod's packed argmin, and the tile must be filled: at least minS
// assignments of S and minP of P. Among the splits that qualify it takes
// the one whose tiles waste the fewest rows.
func chooseSplit(dims []int, holds [][]int, esize int, minS, minP int64) (int, bool) {
	n := len(dims)
	if n < 2 || esize > prodMaxD || len(holds[0]) > prodMaxIn {
		return 0, false
	}
	best, bestUse := 0, 0.0
	for split := 1; split < n; split++ {
		ok := true
		for s := range holds[0] {
			inP, inS := false, false
			for k := range n {
				if holds[k][s] != 0 {
					inP, inS = inP || k < split, inS || k >= split
				}
			}
			ok = ok && !(inP && inS)
		}
		sRows, pRows := int64(1), int64(1)
		for k, d := range dims {
			if k < split {
				pRows *= int64(d)
			} else {
				sRows *= int64(d)
			}
		}
		if !ok || sRows < minS || pRows < minP {
			continue
		}
		use := float64(sRows) / float64((sRows+prodNS-1)/prodNS*prodNS) * float64(pRows) / float64((pRows+prodNP-1)/prodNP*prodNP)
		if use > bestUse {
			best, bestUse = split, use
		}
	}
	return best, bestUse > 0
}

// product appends jp_prod's words (kernels.cu) to a tiled plan: the split,
// the rows per assignment of P, and each input's side (0: no output
// variable, 1: P, 2: S).
func (pk *packed) product(dims []int, split int, holds [][]int) {
	sRows := int64(1)
	for _, d := range dims[split:] {
		sRows *= int64(d)
	}
	w := pk.words
	w[7] = int64(len(w))
	w = append(w, int64(split), sRows)
	for s := range holds[0] {
		side := int64(0)
		for k := range dims {
			if holds[k][s] != 0 {
				side = 1
				if k >= split {
					side = 2
				}
			}
		}
		w = append(w, side)
	}
	w[pWords] = int64(len(w))
	pk.words, pk.prodRows, pk.prodKernel = w, sRows, kProd
}

// plainKernel returns the kernel of a chunk too small for pk's blocks:
// jp_tile's untiled kernel, or pk's own kernel when it has no tile.
func (pk *packed) plainKernel() string {
	if pk.plain != "" {
		return pk.plain
	}
	return pk.kernel
}

// chunkUnit returns the rows a launch of pk's kernel must cover whole
// (chunks are cut to multiples of it; 0: any): with jp_prod or jp_prodw
// (prod) its assignments of P (S rows each), whatever jp_tile's blocks,
// since every launch of the step then takes the product kernel; else
// jp_tile's blocks. (The wide bucket's tile block is the whole table, so
// a chunked step of that shape ran untiled.)
func (pk *packed) chunkUnit(prod bool) int64 {
	if prod {
		return pk.prodRows
	}
	return pk.block
}

// kernelFor returns the kernel a launch of n rows runs, its shared memory
// and its threads (units), given the kernel chosen for the chunk
// (pk.kernel or pk.plainKernel()), whether the step runs on integer costs,
// and whether it takes jp_prod (integer costs, whole assignments of P).
func (pk *packed) kernelFor(kernel string, i32, prod bool, n int64) (string, int, int64) {
	shared := len(pk.words) * 8
	switch {
	case prod && pk.prodKernel != kProd:
		esize := pk.words[pHdr+pk.words[pNIn]+pk.words[pNOut]]
		shared = (len(pk.words)+1)/2*16 + int(pwMaxP*esize*4)
		return pk.prodKernel, shared, (pk.prodRows + pwNS - 1) / pwNS * blockThreads
	case prod:
		esize := pk.words[pHdr+pk.words[pNIn]+pk.words[pNOut]]
		shared = (len(pk.words)+1)/2*16 + int((prodNP+prodNS)*esize*4)
		tiles := (n/pk.prodRows + prodNP - 1) / prodNP * ((pk.prodRows + prodNS - 1) / prodNS)
		return kProd, shared, tiles * blockThreads
	case i32:
		return i32Name(kernel), shared, n
	case kernel == pk.kernel:
		return kernel, shared, pk.units(n)
	}
	return kernel, shared, n
}

// chooseTile picks jp_tile's variable k2 by the loads per output row it
// saves over jp_fast. In jp_fast, each of the ne inputs holding the
// eliminated variable is read once per row and value; an input that holds
// the last output variable costs about four times more than one that does
// not (neighbouring threads read it apart, a gather of many memory
// sectors, where the others are read at one address by the whole warp).
// A tile of T rows over k2 reads an input that does not hold k2 once for
// the T rows, at the price of the rows a partial tile at the end of k2's
// domain wastes. k2 is never the last output variable (that would spread
// the neighbouring threads' reads), and among equal gains the last
// candidate wins: its blocks of rows (a launch's unit) are the smallest.
// elimStride[k][t] is the stride of the t-th input holding the eliminated
// variable for output variable k (0: not held). It reports false when no
// choice gains minTileGain.
func chooseTile(dims []int, elimStride [][]int64) (int, bool) {
	n := len(dims)
	if n < 2 {
		return 0, false
	}
	weight := func(t int) float64 {
		if elimStride[n-1][t] != 0 {
			return 4
		}
		return 1
	}
	base := 0.0
	for t := range elimStride[n-1] {
		base += weight(t)
	}
	best, bestGain := 0, 0.0
	for k2 := 0; k2 < n-1; k2++ {
		if dims[k2] < 2 {
			continue
		}
		side := tileSides[tileSide(dims[k2])]
		tiled := 0.0
		for t := range elimStride[k2] {
			if elimStride[k2][t] != 0 {
				tiled += weight(t)
			} else {
				tiled += weight(t) / float64(side)
			}
		}
		waste := float64((dims[k2]+side-1)/side*side) / float64(dims[k2])
		gain := base / (tiled * waste)
		if gain >= bestGain {
			best, bestGain = k2, gain
		}
	}
	return best, bestGain >= minTileGain
}

// tile switches pk (a jp_fast plan with ne inputs holding the eliminated
// variable) to jp_tile over output variable k2: it appends jp_tile's words
// (kernels.cu) and records the blocks a launch must respect.
func (pk *packed) tile(dims []int, k2, ne int) {
	n := len(dims)
	side := tileSide(dims[k2])
	tdim := make([]int64, n)
	ostr := make([]int64, n)
	s := int64(1)
	for k := n - 1; k >= 0; k-- {
		ostr[k] = s
		s *= int64(dims[k])
		tdim[k] = int64(dims[k])
		if k == k2 {
			tdim[k] = (tdim[k] + int64(tileSides[side]) - 1) / int64(tileSides[side])
		}
	}
	tiles := int64(1)
	for k := k2; k < n; k++ {
		tiles *= tdim[k]
	}
	block := ostr[k2] * int64(dims[k2])
	w := pk.words
	w = append(w, tdim...)
	for _, d := range tdim {
		w = append(w, int64(magic(uint32(d))))
	}
	w = append(w, ostr...)
	w = append(w, tiles, block)
	w[6] = int64(k2)
	w[pWords] = int64(len(w))
	pk.words, pk.plain, pk.kernel, pk.block, pk.tiles = w, pk.kernel, jpTile[side][ne], block, tiles
}

// Supported reports whether the GPU kernel handles p; the others run on
// the CPU.
func Supported(p *local.JoinProject) bool {
	_, err := pack(p, kernelsAll)
	return err == nil
}
