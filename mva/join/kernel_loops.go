package join

import "math"

// minimise adds to dst (which holds the sum of the inputs without
// eliminated variables) the minimum over the eliminated variables of the
// other inputs, for the rows from the odometer's position on, and stores
// the argmin when am is not nil. It is the hot loop of the package: the
// common shapes (one eliminated variable held by one to four inputs) get
// functions of their own where every slice, offset and stride is a local
// variable that the compiler keeps in a register. The minimum is taken
// without a data-dependent branch (MINSD and a conditional move), which
// random costs would mispredict; ties keep the smallest index because only
// a strictly smaller sum moves the argmin.
func (p *JoinProject) minimise(dst []float64, am []int32, off, dig, eoff, pdig []int, base []float64) {
	if p.psize > 1 {
		p.minGeneric(dst, am, off, dig, eoff, pdig)
		return
	}
	if len(p.inv) > 0 {
		switch len(p.vary) {
		case 0:
			p.minBase0(dst, am, off, dig, base)
		case 1:
			p.minBase1(dst, am, off, dig, base)
		case 2:
			p.minBase2(dst, am, off, dig, base)
		default:
			p.minBaseN(dst, am, off, dig, eoff, base)
		}
		return
	}
	switch len(p.elimIn) {
	case 1:
		p.min1(dst, am, off, dig)
	case 2:
		p.min2(dst, am, off, dig)
	case 3:
		p.min3(dst, am, off, dig)
	case 4:
		p.min4(dst, am, off, dig)
	default:
		p.minN(dst, am, off, dig, eoff)
	}
}

// In the minK functions, input a's entry for row i of a run and eliminated
// value d is a[oa + i*la + d*sa].

func (p *JoinProject) min1(dst []float64, am []int32, off, dig []int) {
	ja := p.elimIn[0]
	a, la, sa := p.inputs[ja].Costs, p.inner[ja], p.lstride[0]
	D, inf := p.lastD, math.Inf(1)
	for r := 0; r < len(dst); {
		n := p.runLen(dig, len(dst)-r)
		oa := off[ja]
		for i := r; i < r+n; i++ {
			c0 := dst[i]
			best, arg := inf, 0
			xa := oa
			for d := 0; d < D; d++ {
				s := c0 + a[xa]
				if s < best {
					arg = d
				}
				best = min(best, s)
				xa += sa
			}
			dst[i] = best
			if am != nil {
				am[i] = int32(arg)
			}
			oa += la
		}
		if r += n; r < len(dst) {
			p.nextRun(off, dig)
		}
	}
}

func (p *JoinProject) min2(dst []float64, am []int32, off, dig []int) {
	ja, jb := p.elimIn[0], p.elimIn[1]
	a, la, sa := p.inputs[ja].Costs, p.inner[ja], p.lstride[0]
	b, lb, sb := p.inputs[jb].Costs, p.inner[jb], p.lstride[1]
	D, inf := p.lastD, math.Inf(1)
	for r := 0; r < len(dst); {
		n := p.runLen(dig, len(dst)-r)
		oa, ob := off[ja], off[jb]
		for i := r; i < r+n; i++ {
			c0 := dst[i]
			best, arg := inf, 0
			xa, xb := oa, ob
			for d := 0; d < D; d++ {
				s := c0 + a[xa] + b[xb]
				if s < best {
					arg = d
				}
				best = min(best, s)
				xa += sa
				xb += sb
			}
			dst[i] = best
			if am != nil {
				am[i] = int32(arg)
			}
			oa += la
			ob += lb
		}
		if r += n; r < len(dst) {
			p.nextRun(off, dig)
		}
	}
}

func (p *JoinProject) min3(dst []float64, am []int32, off, dig []int) {
	ja, jb, jc := p.elimIn[0], p.elimIn[1], p.elimIn[2]
	a, la, sa := p.inputs[ja].Costs, p.inner[ja], p.lstride[0]
	b, lb, sb := p.inputs[jb].Costs, p.inner[jb], p.lstride[1]
	c, lc, sc := p.inputs[jc].Costs, p.inner[jc], p.lstride[2]
	D, inf := p.lastD, math.Inf(1)
	for r := 0; r < len(dst); {
		n := p.runLen(dig, len(dst)-r)
		oa, ob, oc := off[ja], off[jb], off[jc]
		for i := r; i < r+n; i++ {
			c0 := dst[i]
			best, arg := inf, 0
			xa, xb, xc := oa, ob, oc
			for d := 0; d < D; d++ {
				s := c0 + a[xa] + b[xb] + c[xc]
				if s < best {
					arg = d
				}
				best = min(best, s)
				xa += sa
				xb += sb
				xc += sc
			}
			dst[i] = best
			if am != nil {
				am[i] = int32(arg)
			}
			oa += la
			ob += lb
			oc += lc
		}
		if r += n; r < len(dst) {
			p.nextRun(off, dig)
		}
	}
}

func (p *JoinProject) min4(dst []float64, am []int32, off, dig []int) {
	ja, jb, jc, je := p.elimIn[0], p.elimIn[1], p.elimIn[2], p.elimIn[3]
	a, la, sa := p.inputs[ja].Costs, p.inner[ja], p.lstride[0]
	b, lb, sb := p.inputs[jb].Costs, p.inner[jb], p.lstride[1]
	c, lc, sc := p.inputs[jc].Costs, p.inner[jc], p.lstride[2]
	e, le, se := p.inputs[je].Costs, p.inner[je], p.lstride[3]
	D, inf := p.lastD, math.Inf(1)
	for r := 0; r < len(dst); {
		n := p.runLen(dig, len(dst)-r)
		oa, ob, oc, oe := off[ja], off[jb], off[jc], off[je]
		for i := r; i < r+n; i++ {
			c0 := dst[i]
			best, arg := inf, 0
			xa, xb, xc, xe := oa, ob, oc, oe
			for d := 0; d < D; d++ {
				s := c0 + a[xa] + b[xb] + c[xc] + e[xe]
				if s < best {
					arg = d
				}
				best = min(best, s)
				xa += sa
				xb += sb
				xc += sc
				xe += se
			}
			dst[i] = best
			if am != nil {
				am[i] = int32(arg)
			}
			oa += la
			ob += lb
			oc += lc
			oe += le
		}
		if r += n; r < len(dst) {
			p.nextRun(off, dig)
		}
	}
}

// minN is the loop for one eliminated variable held by any number of
// inputs; eoff is scratch for their offsets along a run. It takes the
// values in pairs, two sums per pass over the inputs, which halves the loop
// overhead that dominates binary domains.
func (p *JoinProject) minN(dst []float64, am []int32, off, dig, eoff []int) {
	var insBuf [16][]float64
	ins := insBuf[:0]
	if len(p.elimIn) > len(insBuf) {
		ins = make([][]float64, 0, len(p.elimIn))
	}
	for _, j := range p.elimIn {
		ins = append(ins, p.inputs[j].Costs)
	}
	ne := len(ins)
	eoff = eoff[:ne]
	ls := p.lstride[:ne]
	el := p.einner[:ne]
	D, inf := p.lastD, math.Inf(1)
	for r := 0; r < len(dst); {
		n := p.runLen(dig, len(dst)-r)
		for t, j := range p.elimIn {
			eoff[t] = off[j]
		}
		for i := r; i < r+n; i++ {
			c0 := dst[i]
			best, arg := inf, 0
			d := 0
			for ; d+1 < D; d += 2 {
				s0, s1 := c0, c0
				for t, in := range ins {
					o := eoff[t] + d*ls[t]
					s0 += in[o]
					s1 += in[o+ls[t]]
				}
				if s0 < best {
					arg = d
				}
				best = min(best, s0)
				if s1 < best {
					arg = d + 1
				}
				best = min(best, s1)
			}
			if d < D {
				s := c0
				for t, in := range ins {
					s += in[eoff[t]+d*ls[t]]
				}
				if s < best {
					arg = d
				}
				best = min(best, s)
			}
			dst[i] = best
			if am != nil {
				am[i] = int32(arg)
			}
			for t := range eoff {
				eoff[t] += el[t]
			}
		}
		if r += n; r < len(dst) {
			p.nextRun(off, dig)
		}
	}
}

// minGeneric handles several eliminated variables: the last one is the
// inner loop, the others an odometer (pdig) around it.
func (p *JoinProject) minGeneric(dst []float64, am []int32, off, dig, eoff, pdig []int) {
	if am == nil {
		p.minGenericNoArg(dst, off, dig, eoff, pdig)
		return
	}
	var buf [16][]float64
	ins := buf[:0]
	if len(p.elimIn) > len(buf) {
		ins = make([][]float64, 0, len(p.elimIn))
	}
	for _, j := range p.elimIn {
		ins = append(ins, p.inputs[j].Costs)
	}
	ne := len(ins)
	eoff = eoff[:ne]
	ls := p.lstride[:ne]
	D, inf := p.lastD, math.Inf(1)
	for r := 0; r < len(dst); {
		n := p.runLen(dig, len(dst)-r)
		for i := r; i < r+n; i++ {
			c0 := dst[i]
			for t, j := range p.elimIn {
				eoff[t] = off[j] + (i-r)*p.inner[j]
			}
			clear(pdig)
			best, arg := inf, 0
			for pe := 0; pe < p.psize; pe++ {
				for d := 0; d < D; d++ {
					s := c0
					for t, in := range ins {
						s += in[eoff[t]+d*ls[t]]
					}
					if s < best {
						arg = pe*D + d
					}
					best = min(best, s)
				}
				// Advance the odometer of the other eliminated
				// variables.
				for k := len(pdig) - 1; k >= 0; k-- {
					pdig[k]++
					if pdig[k] < p.pdims[k] {
						st := p.pstep[k*ne : (k+1)*ne]
						for t := range eoff {
							eoff[t] += st[t]
						}
						break
					}
					pdig[k] = 0
					rew := p.prew[k*ne : (k+1)*ne]
					for t := range eoff {
						eoff[t] -= rew[t]
					}
				}
			}
			dst[i] = best
			if am != nil {
				am[i] = int32(arg)
			}
		}
		if r += n; r < len(dst) {
			p.nextRun(off, dig)
		}
	}
}

// minGenericNoArg is minGeneric without the argmin (the mini-buckets'
// min-marginals keep none), as minBase1NoArg.
func (p *JoinProject) minGenericNoArg(dst []float64, off, dig, eoff, pdig []int) {
	var buf [16][]float64
	ins := buf[:0]
	if len(p.elimIn) > len(buf) {
		ins = make([][]float64, 0, len(p.elimIn))
	}
	for _, j := range p.elimIn {
		ins = append(ins, p.inputs[j].Costs)
	}
	ne := len(ins)
	eoff = eoff[:ne]
	ls := p.lstride[:ne]
	D, inf := p.lastD, math.Inf(1)
	for r := 0; r < len(dst); {
		n := p.runLen(dig, len(dst)-r)
		for i := r; i < r+n; i++ {
			c0 := dst[i]
			for t, j := range p.elimIn {
				eoff[t] = off[j] + (i-r)*p.inner[j]
			}
			clear(pdig)
			best := inf
			for pe := 0; pe < p.psize; pe++ {
				for d := 0; d < D; d++ {
					s := c0
					for t, in := range ins {
						s += in[eoff[t]+d*ls[t]]
					}
					best = min(best, s)
				}
				// Advance the odometer of the other eliminated
				// variables.
				for k := len(pdig) - 1; k >= 0; k-- {
					pdig[k]++
					if pdig[k] < p.pdims[k] {
						st := p.pstep[k*ne : (k+1)*ne]
						for t := range eoff {
							eoff[t] += st[t]
						}
						break
					}
					pdig[k] = 0
					rew := p.prew[k*ne : (k+1)*ne]
					for t := range eoff {
						eoff[t] -= rew[t]
					}
				}
			}
			dst[i] = best
		}
		if r += n; r < len(dst) {
			p.nextRun(off, dig)
		}
	}
}

// fillBase sets base[d] to the sum of the run-invariant inputs (inv, at
// least one) at eliminated value d, for the run starting at the
// odometer's row. The first input is copied rather than added to zeros:
// runs are often of two or three rows (the SHDS responses' mini-bucket
// messages end on a two-valued action), and clearing base was a tenth of
// such a run.
func (p *JoinProject) fillBase(base []float64, off []int) {
	j := p.inv[0]
	in, o, st := p.inputs[j].Costs, off[j], p.invS[0]
	for d := range base {
		base[d] = in[o]
		o += st
	}
	for q := 1; q < len(p.inv); q++ {
		j := p.inv[q]
		in, o, st := p.inputs[j].Costs, off[j], p.invS[q]
		for d := range base {
			base[d] += in[o]
			o += st
		}
	}
}

// The minBaseK functions are the minK loops when some inputs are constant
// along a run (see JoinProject.inv): base holds their sum per eliminated
// value, and K inputs remain to be read per row.

func (p *JoinProject) minBase0(dst []float64, am []int32, off, dig []int, base []float64) {
	inf := math.Inf(1)
	for r := 0; r < len(dst); {
		n := p.runLen(dig, len(dst)-r)
		p.fillBase(base, off)
		for i := r; i < r+n; i++ {
			c0 := dst[i]
			best, arg := inf, 0
			for d, bd := range base {
				s := c0 + bd
				if s < best {
					arg = d
				}
				best = min(best, s)
			}
			dst[i] = best
			if am != nil {
				am[i] = int32(arg)
			}
		}
		if r += n; r < len(dst) {
			p.nextRun(off, dig)
		}
	}
}

func (p *JoinProject) minBase1(dst []float64, am []int32, off, dig []int, base []float64) {
	if am == nil {
		p.minBase1NoArg(dst, off, dig, base)
		return
	}
	ja := p.vary[0]
	a, la, sa := p.inputs[ja].Costs, p.inner[ja], p.varyS[0]
	inf := math.Inf(1)
	for r := 0; r < len(dst); {
		n := p.runLen(dig, len(dst)-r)
		p.fillBase(base, off)
		oa := off[ja]
		for i := r; i < r+n; i++ {
			c0 := dst[i]
			best, arg := inf, 0
			xa := oa
			for d, bd := range base {
				s := c0 + bd + a[xa]
				if s < best {
					arg = d
				}
				best = min(best, s)
				xa += sa
			}
			dst[i] = best
			if am != nil {
				am[i] = int32(arg)
			}
			oa += la
		}
		if r += n; r < len(dst) {
			p.nextRun(off, dig)
		}
	}
}

// minBase1NoArg is minBase1 without the argmin (a mini-bucket message
// keeps none): the same minima, one comparison fewer per entry, and the
// registers it held free for the loop's offsets.
func (p *JoinProject) minBase1NoArg(dst []float64, off, dig []int, base []float64) {
	ja := p.vary[0]
	a, la, sa := p.inputs[ja].Costs, p.inner[ja], p.varyS[0]
	inf := math.Inf(1)
	for r := 0; r < len(dst); {
		n := p.runLen(dig, len(dst)-r)
		p.fillBase(base, off)
		oa := off[ja]
		for i := r; i < r+n; i++ {
			c0 := dst[i]
			best := inf
			xa := oa
			for _, bd := range base {
				best = min(best, c0+bd+a[xa])
				xa += sa
			}
			dst[i] = best
			oa += la
		}
		if r += n; r < len(dst) {
			p.nextRun(off, dig)
		}
	}
}

func (p *JoinProject) minBase2(dst []float64, am []int32, off, dig []int, base []float64) {
	ja, jb := p.vary[0], p.vary[1]
	a, la, sa := p.inputs[ja].Costs, p.inner[ja], p.varyS[0]
	b, lb, sb := p.inputs[jb].Costs, p.inner[jb], p.varyS[1]
	inf := math.Inf(1)
	for r := 0; r < len(dst); {
		n := p.runLen(dig, len(dst)-r)
		p.fillBase(base, off)
		oa, ob := off[ja], off[jb]
		for i := r; i < r+n; i++ {
			c0 := dst[i]
			best, arg := inf, 0
			xa, xb := oa, ob
			for d, bd := range base {
				s := c0 + bd + a[xa] + b[xb]
				if s < best {
					arg = d
				}
				best = min(best, s)
				xa += sa
				xb += sb
			}
			dst[i] = best
			if am != nil {
				am[i] = int32(arg)
			}
			oa += la
			ob += lb
		}
		if r += n; r < len(dst) {
			p.nextRun(off, dig)
		}
	}
}

func (p *JoinProject) minBaseN(dst []float64, am []int32, off, dig, eoff []int, base []float64) {
	var insBuf [16][]float64
	ins := insBuf[:0]
	if len(p.vary) > len(insBuf) {
		ins = make([][]float64, 0, len(p.vary))
	}
	for _, j := range p.vary {
		ins = append(ins, p.inputs[j].Costs)
	}
	ne := len(ins)
	eoff = eoff[:ne]
	ls := p.varyS[:ne]
	inf := math.Inf(1)
	for r := 0; r < len(dst); {
		n := p.runLen(dig, len(dst)-r)
		p.fillBase(base, off)
		for t, j := range p.vary {
			eoff[t] = off[j]
		}
		for i := r; i < r+n; i++ {
			c0 := dst[i]
			best, arg := inf, 0
			for d, bd := range base {
				s := c0 + bd
				for t, in := range ins {
					s += in[eoff[t]+d*ls[t]]
				}
				if s < best {
					arg = d
				}
				best = min(best, s)
			}
			dst[i] = best
			if am != nil {
				am[i] = int32(arg)
			}
			for t, j := range p.vary {
				eoff[t] += p.inner[j]
			}
		}
		if r += n; r < len(dst) {
			p.nextRun(off, dig)
		}
	}
}
