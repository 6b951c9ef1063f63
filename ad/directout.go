package ad

import (
	"fmt"
	"sort"

	"gonum.org/v1/gonum/blas"
)

// Direct evaluation of small forward-only programs.
//
// A flow's affine layer at n = 2 is two instructions of two elements: a
// difference and a triangular solve. Evaluated on the Program's buffers it
// costs several times its arithmetic: the concurrency guard's two locked
// instructions, copying x in and the outputs out, the dispatch loop with
// its deferred recover and a kernel's interface call. Program.Outputs
// therefore runs a program compiled by CompileOutputs from the caller's
// stack when its instructions are all of a few kinds that ad evaluates with
// its own loops (elementwise arithmetic, copies and fills, matrix–vector
// products, triangular solves) and its intermediate values fit a small
// scratch array: it reads x where the caller has it, keeps intermediates in
// the array, writes each output it can straight into dst, and reads
// constants, data and shared data from the Program without writing to it.
// Such calls need no guard, and concurrent calls on one Program are safe.
// The values are those of the buffered path, bit for bit, except matrix–
// vector products, which sum in their own order rather than BLAS's and may
// differ from it in the last bits, and which skip the trailing zeros of the
// rows of a constant matrix (a triangular factor's upper half), so that a
// non-finite element of the vector met only by those zeros does not make
// the product NaN.

// directOutMax is the most scratch elements a direct plan may use.
const directOutMax = 256

// dsrc is where a direct operand lives.
type dsrc uint8

const (
	dRO dsrc = iota // the Program's slot (never written by a direct call)
	dX              // the caller's x
	dS              // the scratch array
	dD              // the caller's dst
)

// dref is an operand of a direct op: elements of src from off (of slot,
// for dRO).
type dref struct {
	src       dsrc
	slot, off int
}

// dkind is the operation of a direct op.
type dkind uint8

const (
	dBinary dkind = iota // out = a code b, a or b possibly a scalar
	dNeg                 // out = −a
	dCopy                // out = a
	dFill                // out = a scalar
	dGemv                // out = op(A)·v, A = a (rows×cols), v = b
	dTrsv                // out = T⁻¹b or T⁻ᵀb, T = a (n×n), b = b (n×m)
)

// dop is one op of a direct plan.
type dop struct {
	kind         dkind
	code         fcode // dBinary
	n            int   // elements of out
	out, a, b    dref
	as, bs       bool // dBinary: scalar operands
	rows, cols   int  // dGemv: A's stored shape; dTrsv: n, m
	trans, lower bool
	// dGemv and dTrsv with one right-hand side: a difference or sum
	// fused in (fuseDirect). fused is fAdd or fSub (0 when none); for
	// dTrsv, b then reads u fused v (u, v = b, c); for dGemv, out is
	// A·v fused c, or c + A·v when cFirst. cs: c is a scalar.
	fused      fcode
	c          dref
	cs, cFirst bool
	// dGemv: when A is a compile-time constant, ext[i] is one past the
	// last non-zero element of its row i (a triangular factor's
	// products then skip its zero half); nil otherwise.
	ext []int
}

// dinfo is what a direct op needs only for an error message.
type dinfo struct {
	singular error  // dTrsv: the kernel's error for a singular T
	ins      *instr // the instruction, labelled only for an error
}

// dcopy copies n elements of an output that the ops did not write in place
// to dst[at:].
type dcopy struct {
	at, n int
	from  dref
}

// directOutPlan is a program's direct evaluation of Outputs.
type directOutPlan struct {
	ops     []dop
	info    []dinfo // parallel to ops
	copies  []dcopy
	scratch int
	// one: the plan is a single solve or product with a fused sum or
	// difference, from x and read-only operands straight into dst (an
	// affine layer); runOne evaluates it without the general loop.
	one bool
}

// oneOp reports whether d qualifies for runOne.
func (d *directOutPlan) oneOp() bool {
	if len(d.ops) != 1 || len(d.copies) != 0 || d.scratch != 0 {
		return false
	}
	op := &d.ops[0]
	return (op.kind == dTrsv || op.kind == dGemv && !op.trans) && op.fused != 0 &&
		op.out.src == dD && op.a.src == dRO && op.b.src == dX && op.c.src == dRO
}

// runOne evaluates a plan of one op (see oneOp). Its operands are resolved
// here, as runDirectOut's views would resolve them.
func (p *Program) runOne(d *directOutPlan, x, dst []float64) error {
	op := &d.ops[0]
	a := p.slots[op.a.slot][op.a.off:]
	c := p.slots[op.c.slot][op.c.off:]
	out, b := dst[op.out.off:op.out.off+op.n], x[op.b.off:]
	if op.kind == dGemv {
		gemvAddDirect(out, a, b, c, op.rows, op.cols, op.ext, op.cs, op.cFirst)
		return nil
	}
	if !solveTriangularShift(out, a, b, c, op.rows, op.lower, op.trans, op.fused == fSub, op.cs) {
		return p.singular(d, 0)
	}
	return nil
}

// singular is the error of the singular solve of op k of d.
func (p *Program) singular(d *directOutPlan, k int) error {
	in := d.info[k]
	err := in.singular
	if err == nil {
		err = errTriangularSingular
	}
	return fmt.Errorf("ad: %s: %w", in.ins.label(), err)
}

// interval is a range [lo, hi) of the arena.
type interval struct{ lo, hi int }

// planOutputs returns the direct plan of c's Outputs, or nil when the
// program does not qualify (see the comment at the top of this file).
func (c *code) planOutputs() *directOutPlan {
	if len(c.outputs) == 0 || len(c.extra) == 0 {
		return nil
	}
	// The arena ranges the instructions write, each with its length.
	var writes []interval
	wr := func(s, n int) bool {
		if _, sh := c.shared[s]; sh || n > c.slotLen[s] {
			return false
		}
		writes = append(writes, interval{c.slotOff[s], c.slotOff[s] + n})
		return true
	}
	for i := range c.outputs {
		ins := &c.outputs[i]
		switch ins.kind {
		case kFused:
			for k := range ins.fz {
				op := &ins.fz[k]
				if !directFop(op) || !wr(op.out, op.n) {
					return nil
				}
			}
		case kBinary:
			if _, ok := binaryCodes[ins.sym]; !ok || !wr(ins.out, c.slotLen[ins.out]) {
				return nil
			}
		case kGemv:
			if !wr(ins.out, c.slotLen[ins.out]) {
				return nil
			}
		case kKernel:
			if _, ok := c.kernels[ins.kernel].(TriangularSolve); !ok || !wr(ins.out, c.slotLen[ins.out]) {
				return nil
			}
		default:
			return nil
		}
	}
	// Merge them into disjoint intervals, each given a place in the
	// scratch array or in dst.
	sort.Slice(writes, func(i, j int) bool { return writes[i].lo < writes[j].lo })
	var ivs []interval
	for _, w := range writes {
		if k := len(ivs) - 1; k >= 0 && w.lo < ivs[k].hi {
			ivs[k].hi = max(ivs[k].hi, w.hi)
			continue
		}
		ivs = append(ivs, w)
	}
	// The wrt slots' ranges, in the order x fills them.
	type xrange struct {
		interval
		at int
	}
	var xs []xrange
	at := 0
	for _, s := range c.wrt {
		if _, sh := c.shared[s]; sh {
			return nil
		}
		xs = append(xs, xrange{interval: interval{c.slotOff[s], c.slotOff[s] + c.slotLen[s]}, at: at})
		at += c.slotLen[s]
	}
	place := make([]dref, len(ivs)) // where each interval lives
	placed := make([]bool, len(ivs))
	find := func(lo, hi int) (int, bool) {
		k := sort.Search(len(ivs), func(k int) bool { return ivs[k].hi > lo })
		if k == len(ivs) || ivs[k].lo >= hi {
			return -1, true // no overlap
		}
		return k, ivs[k].lo <= lo && hi <= ivs[k].hi
	}
	d := &directOutPlan{}
	// Outputs first: an interval that is exactly an output's range, and no
	// other output's, is written in dst.
	dstAt := 0
	for _, s := range c.extra {
		if _, sh := c.shared[s]; !sh {
			lo, hi := c.slotOff[s], c.slotOff[s]+c.slotLen[s]
			if k, ok := find(lo, hi); ok && k >= 0 && !placed[k] && ivs[k] == (interval{lo, hi}) {
				place[k], placed[k] = dref{src: dD, off: dstAt}, true
			}
		}
		dstAt += c.slotLen[s]
	}
	for k, iv := range ivs {
		if !placed[k] {
			place[k], placed[k] = dref{src: dS, off: d.scratch}, true
			d.scratch += iv.hi - iv.lo
		}
	}
	if d.scratch > directOutMax {
		return nil
	}
	// ref resolves n elements of slot s from off.
	bad := false
	ref := func(s, off, n int) dref {
		if _, sh := c.shared[s]; sh {
			return dref{src: dRO, slot: s, off: off}
		}
		lo := c.slotOff[s] + off
		hi := lo + n
		for _, xr := range xs {
			if lo >= xr.lo && hi <= xr.hi {
				return dref{src: dX, off: xr.at + lo - xr.lo}
			}
			if lo < xr.hi && xr.lo < hi {
				bad = true
			}
		}
		k, ok := find(lo, hi)
		switch {
		case !ok:
			bad = true
		case k >= 0:
			p := place[k]
			p.off += lo - ivs[k].lo
			return p
		}
		return dref{src: dRO, slot: s, off: off}
	}
	// Every element a call reads from the scratch or dst must have been
	// written earlier in the same call.
	written := make(map[dref]bool)
	mark := func(r dref, n int) {
		for i := range n {
			written[dref{src: r.src, off: r.off + i}] = true
		}
	}
	read := func(s, off, n int) dref {
		r := ref(s, off, n)
		if r.src == dS || r.src == dD {
			for i := range n {
				if !written[dref{src: r.src, off: r.off + i}] {
					bad = true
				}
			}
		}
		return r
	}
	out := func(s, n int) dref {
		r := ref(s, 0, n)
		if r.src != dS && r.src != dD {
			bad = true
		}
		return r
	}
	for i := range c.outputs {
		ins := &c.outputs[i]
		switch ins.kind {
		case kFused:
			for k := range ins.fz {
				op := &ins.fz[k]
				o := dop{n: op.n}
				switch op.code {
				case fNeg, fCopy:
					o.kind = dNeg
					if op.code == fCopy {
						o.kind = dCopy
					}
					o.a = read(op.a.slot, op.a.off, op.n)
				case fFill:
					o.kind = dFill
					o.a = read(op.a.slot, op.a.off, 1)
				default:
					o.kind, o.code = dBinary, op.code
					o.as, o.bs = op.a.scalar || op.n == 1, op.b.scalar || op.n == 1
					na, nb := op.n, op.n
					if o.as {
						na = 1
					}
					if o.bs {
						nb = 1
					}
					o.a = read(op.a.slot, op.a.off, na)
					o.b = read(op.b.slot, op.b.off, nb)
				}
				o.out = out(op.out, op.n)
				mark(o.out, op.n)
				d.ops = append(d.ops, o)
				d.info = append(d.info, dinfo{ins: ins})
			}
		case kBinary:
			// A lone elementwise instruction, not fused.
			n := c.slotLen[ins.out]
			o := dop{kind: dBinary, code: binaryCodes[ins.sym], n: n, as: ins.variant == 1 || n == 1, bs: ins.variant == 2 || n == 1}
			na, nb := n, n
			if o.as {
				na = 1
			}
			if o.bs {
				nb = 1
			}
			if c.slotLen[ins.args[0]] < na || c.slotLen[ins.args[1]] < nb || n < 1 {
				return nil
			}
			o.a = read(ins.args[0], 0, na)
			o.b = read(ins.args[1], 0, nb)
			o.out = out(ins.out, n)
			mark(o.out, n)
			d.ops = append(d.ops, o)
			d.info = append(d.info, dinfo{ins: ins})
		case kGemv:
			l := &ins.la
			o := dop{kind: dGemv, n: c.slotLen[ins.out], rows: l.ar, cols: l.ac, trans: l.tA != blas.NoTrans}
			nv := l.ac
			if o.trans {
				nv = l.ar
			}
			if c.slotLen[ins.args[0]] != l.ar*l.ac || c.slotLen[ins.args[1]] != nv || o.n != l.ar*l.ac/nv {
				return nil
			}
			o.a = read(ins.args[0], 0, l.ar*l.ac)
			o.b = read(ins.args[1], 0, nv)
			if !o.trans && c.isConstSlot(ins.args[0]) {
				o.ext = make([]int, l.ar)
				a := c.init[c.slotOff[ins.args[0]]:][:l.ar*l.ac]
				for i := range o.ext {
					e := l.ac
					for e > 0 && a[i*l.ac+e-1] == 0 {
						e--
					}
					o.ext[i] = e
				}
			}
			o.out = out(ins.out, o.n)
			// The product reads v while it writes out.
			bad = bad || overlapRef(o.out, o.n, o.b, nv)
			mark(o.out, o.n)
			d.ops = append(d.ops, o)
			d.info = append(d.info, dinfo{ins: ins})
		case kKernel:
			k := c.kernels[ins.kernel].(TriangularSolve)
			args := c.kernArgs[ins.kernel]
			n, m := k.N, k.M
			if len(args) != 2 || c.slotLen[args[0]] != n*n || c.slotLen[args[1]] != n*m || c.slotLen[ins.out] != n*m {
				return nil
			}
			o := dop{kind: dTrsv, n: n * m, rows: n, cols: m, trans: k.Trans, lower: k.Lower}
			o.a = read(args[0], 0, n*n)
			o.b = read(args[1], 0, n*m)
			o.out = out(ins.out, n*m)
			// The solve may write out over b but must not write over T.
			bad = bad || overlapRef(o.out, n*m, o.a, n*n)
			mark(o.out, n*m)
			d.ops = append(d.ops, o)
			d.info = append(d.info, dinfo{ins: ins, singular: k.Singular})
		}
		if bad {
			return nil
		}
	}
	// Outputs not written in place are copied at the end.
	dstAt = 0
	for _, s := range c.extra {
		n := c.slotLen[s]
		r := read(s, 0, n)
		if r.src != dD || r.off != dstAt {
			d.copies = append(d.copies, dcopy{at: dstAt, n: n, from: r})
		}
		dstAt += n
	}
	if bad {
		return nil
	}
	d.fuse()
	d.one = d.oneOp()
	return d
}

// reads calls f with each range that op reads.
func (op *dop) reads(f func(r dref, n int)) {
	switch op.kind {
	case dBinary:
		na, nb := op.n, op.n
		if op.as {
			na = 1
		}
		if op.bs {
			nb = 1
		}
		f(op.a, na)
		f(op.b, nb)
	case dNeg, dCopy:
		f(op.a, op.n)
	case dFill:
		f(op.a, 1)
	case dGemv:
		f(op.a, op.rows*op.cols)
		f(op.b, op.rows*op.cols/op.n)
	case dTrsv:
		f(op.a, op.rows*op.rows)
		f(op.b, op.n)
	}
	if op.fused != 0 {
		nc := op.n
		if op.cs {
			nc = 1
		}
		f(op.c, nc)
	}
}

// fuse merges a difference or sum into the triangular solve that reads it
// (b = u − v) and a sum into the matrix–vector product it adds to
// (A·v + c), when nothing else reads the intermediate: one op fewer, and
// the same arithmetic in the same order, so the same bits. Then it sizes
// the scratch to the ranges still used.
func (d *directOutPlan) fuse() {
	// used reports whether ops after k or the output copies read any of
	// the n elements of r.
	used := func(k int, r dref, n int) bool {
		hit := false
		for j := k + 1; j < len(d.ops); j++ {
			d.ops[j].reads(func(q dref, m int) { hit = hit || overlapRef(r, n, q, m) })
		}
		for _, cp := range d.copies {
			hit = hit || overlapRef(r, n, cp.from, cp.n)
		}
		return hit
	}
	var ops []dop
	var info []dinfo
	for k := 0; k < len(d.ops); k++ {
		op := d.ops[k]
		if k+1 < len(d.ops) && op.kind == dBinary && (op.code == fAdd || op.code == fSub) && !op.as && op.out.src == dS {
			// u ∓ v into the b of a solve with one right-hand side.
			nx := &d.ops[k+1]
			if nx.kind == dTrsv && nx.cols == 1 && nx.fused == 0 && nx.b == op.out && nx.n == op.n &&
				!used(k+1, op.out, op.n) &&
				!overlapRef(nx.out, nx.n, op.a, op.n) && !(!op.bs && overlapRef(nx.out, nx.n, op.b, op.n)) {
				f := *nx
				f.b, f.c, f.cs, f.fused = op.a, op.b, op.bs, op.code
				ops, info = append(ops, f), append(info, d.info[k+1])
				k++
				continue
			}
		}
		if k+1 < len(d.ops) && op.kind == dGemv && !op.trans && op.out.src == dS {
			// A·v + c.
			nx := &d.ops[k+1]
			if nx.kind == dBinary && nx.code == fAdd && nx.n == op.n && (nx.a == op.out && !nx.as || nx.b == op.out && !nx.bs) &&
				!used(k+1, op.out, op.n) && !overlapRef(nx.out, nx.n, op.b, op.cols) && !overlapRef(nx.out, nx.n, op.a, op.rows*op.cols) {
				f := op
				f.out, f.fused = nx.out, fAdd
				if nx.a == op.out {
					f.c, f.cs = nx.b, nx.bs
				} else {
					f.c, f.cs, f.cFirst = nx.a, nx.as, true
				}
				ops, info = append(ops, f), append(info, d.info[k])
				k++
				continue
			}
		}
		ops, info = append(ops, op), append(info, d.info[k])
	}
	d.ops, d.info = ops, info
	d.scratch = 0
	see := func(r dref, n int) {
		if r.src == dS {
			d.scratch = max(d.scratch, r.off+n)
		}
	}
	for k := range d.ops {
		op := &d.ops[k]
		op.reads(see)
		see(op.out, op.n)
	}
	for _, cp := range d.copies {
		see(cp.from, cp.n)
	}
}

// overlapRef reports whether n elements of r and m of q may share memory.
func overlapRef(r dref, n int, q dref, m int) bool {
	if r.src != q.src {
		return false
	}
	if r.src == dRO {
		return r.slot == q.slot
	}
	return r.off < q.off+m && q.off < r.off+n
}

// binaryCodes are the elementwise binary instructions the direct path runs.
var binaryCodes = map[string]fcode{"+": fAdd, "-": fSub, "⊙": fMul, "÷": fDiv}

// isConstSlot reports whether slot s holds a compile-time constant: not
// shared, not data, not an input, and written by no instruction of any
// entry point.
func (c *code) isConstSlot(s int) bool {
	if _, sh := c.shared[s]; sh {
		return false
	}
	for _, d := range c.data {
		if d == s {
			return false
		}
	}
	lo, hi := c.slotOff[s], c.slotOff[s]+c.slotLen[s]
	hit := func(t, n int) bool {
		if _, sh := c.shared[t]; sh {
			return false
		}
		return c.slotOff[t] < hi && lo < c.slotOff[t]+n
	}
	for _, w := range c.wrt {
		if hit(w, c.slotLen[w]) {
			return false
		}
	}
	for _, list := range [][]instr{c.value, c.full, c.outputs} {
		for i := range list {
			ins := &list[i]
			if hit(ins.out, c.slotLen[ins.out]) {
				return false
			}
			for k := range ins.fz {
				op := &ins.fz[k]
				if hit(op.out, c.slotLen[op.out]) || op.out2 >= 0 && op.code == fSoftplusSigmoid && hit(op.out2, c.slotLen[op.out2]) ||
					op.sum >= 0 && hit(op.sum, 1) || op.paired && hit(op.pout, c.slotLen[op.pout]) {
					return false
				}
			}
		}
	}
	return true
}

// directFop reports whether a fused op is of a kind the direct path runs.
func directFop(op *fop) bool {
	if op.sum >= 0 || op.scaled || op.check || op.paired || op.n < 1 {
		return false
	}
	switch op.code {
	case fAdd, fSub, fMul, fDiv, fNeg, fCopy, fFill:
		return true
	}
	return false
}

// outputsDirect is Outputs by the direct plan d. x has the program's
// dimension, dst its output size, and they do not overlap. The scratch
// array is sized to the plan in a few steps, since Go clears it on every
// call.
func (p *Program) outputsDirect(d *directOutPlan, x, dst []float64) error {
	switch {
	case d.scratch <= 8:
		var s [8]float64
		return p.runDirectOut(d, x, dst, s[:])
	case d.scratch <= 32:
		var s [32]float64
		return p.runDirectOut(d, x, dst, s[:])
	default:
		var s [directOutMax]float64
		return p.runDirectOut(d, x, dst, s[:])
	}
}

// outputsFromCopy runs Outputs' direct plan on a copy of x, which overlaps
// dst, so that writing dst cannot change inputs still to be read. It is a
// function of its own so that only these calls carry the copy's frame.
//
//go:noinline
func (p *Program) outputsFromCopy(d *directOutPlan, x, dst []float64) error {
	var buf [directOutMax]float64
	xc := buf[:copy(buf[:len(x)], x)]
	if d.one {
		return p.runOne(d, xc, dst)
	}
	if d.scratch == 0 {
		return p.runDirectOut(d, xc, dst, nil)
	}
	return p.outputsDirect(d, xc, dst)
}

// view returns n elements of r.
func (p *Program) view(r dref, n int, x, dst, s []float64) []float64 {
	b := x
	switch r.src {
	case dS:
		b = s
	case dD:
		b = dst
	case dRO:
		b = p.slots[r.slot]
	}
	return b[r.off : r.off+n]
}

func (p *Program) runDirectOut(d *directOutPlan, x, dst, s []float64) error {
	for k := range d.ops {
		op := &d.ops[k]
		n := op.n
		out := p.view(op.out, n, x, dst, s)
		switch op.kind {
		case dBinary:
			na, nb := n, n
			if op.as {
				na = 1
			}
			if op.bs {
				nb = 1
			}
			directBinary(op, out, p.view(op.a, na, x, dst, s), p.view(op.b, nb, x, dst, s))
		case dNeg:
			a := p.view(op.a, n, x, dst, s)
			for i, v := range a {
				out[i] = -v
			}
		case dCopy:
			copy(out, p.view(op.a, n, x, dst, s))
		case dFill:
			v := p.view(op.a, 1, x, dst, s)[0]
			for i := range out {
				out[i] = v
			}
		case dGemv:
			a, v := p.view(op.a, op.rows*op.cols, x, dst, s), p.view(op.b, op.rows*op.cols/n, x, dst, s)
			if op.fused != 0 {
				gemvAddDirect(out, a, v, p.view(op.c, fusedLen(op), x, dst, s), op.rows, op.cols, op.ext, op.cs, op.cFirst)
				break
			}
			gemvDirect(out, a, v, op.rows, op.cols, op.ext, op.trans)
		case dTrsv:
			t := p.view(op.a, op.rows*op.rows, x, dst, s)
			var ok bool
			if op.fused != 0 {
				ok = solveTriangularShift(out, t, p.view(op.b, n, x, dst, s), p.view(op.c, fusedLen(op), x, dst, s), op.rows, op.lower, op.trans, op.fused == fSub, op.cs)
			} else {
				ok = solveTriangular(out, t, p.view(op.b, n, x, dst, s), op.rows, op.cols, op.lower, op.trans)
			}
			if !ok {
				return p.singular(d, k)
			}
		}
	}
	for k := range d.copies {
		cp := &d.copies[k]
		if cp.n == 1 { // a scalar output, such as a log-determinant
			dst[cp.at] = p.view(cp.from, 1, x, dst, s)[0]
			continue
		}
		copy(dst[cp.at:cp.at+cp.n], p.view(cp.from, cp.n, x, dst, s))
	}
	return nil
}

// directBinary is out = a op b elementwise, a or b a scalar when flagged,
// with the arithmetic of binaryFused.
func directBinary(op *dop, out, a, b []float64) {
	switch {
	case op.as && op.bs:
		x, y := a[0], b[0]
		var v float64
		switch op.code {
		case fAdd:
			v = x + y
		case fSub:
			v = x - y
		case fMul:
			v = x * y
		default:
			v = x / y
		}
		for i := range out {
			out[i] = v
		}
	case op.as:
		x := a[0]
		b = b[:len(out)]
		switch op.code {
		case fAdd:
			for i, v := range b {
				out[i] = x + v
			}
		case fSub:
			for i, v := range b {
				out[i] = x - v
			}
		case fMul:
			for i, v := range b {
				out[i] = x * v
			}
		default:
			for i, v := range b {
				out[i] = x / v
			}
		}
	case op.bs:
		y := b[0]
		a = a[:len(out)]
		switch op.code {
		case fAdd:
			for i, v := range a {
				out[i] = v + y
			}
		case fSub:
			for i, v := range a {
				out[i] = v - y
			}
		case fMul:
			for i, v := range a {
				out[i] = v * y
			}
		default:
			for i, v := range a {
				out[i] = v / y
			}
		}
	default:
		a, b = a[:len(out)], b[:len(out)]
		switch op.code {
		case fAdd:
			for i := range out {
				out[i] = a[i] + b[i]
			}
		case fSub:
			for i := range out {
				out[i] = a[i] - b[i]
			}
		case fMul:
			for i := range out {
				out[i] = a[i] * b[i]
			}
		default:
			for i := range out {
				out[i] = a[i] / b[i]
			}
		}
	}
}

// gemvDirect is out = A·v (A rows×cols, row-major) or Aᵀ·v when trans. Each
// element of A·v is a dot product over four accumulators, over the first
// ext[i] elements of row i when ext is not nil; Aᵀ·v adds the rows of A
// scaled by v.
func gemvDirect(out, a, v []float64, rows, cols int, ext []int, trans bool) {
	if trans {
		clear(out)
		out = out[:cols]
		for i := 0; i < rows; i++ {
			row, vi := a[i*cols:i*cols+cols], v[i]
			for j, aij := range row {
				out[j] += aij * vi
			}
		}
		return
	}
	for i := range out[:rows] {
		e := cols
		if ext != nil {
			e = ext[i]
		}
		out[i] = dotRow(a[i*cols:i*cols+e], v[:e])
	}
}

// dotRow is Σ a_j·v_j over four accumulators.
func dotRow(a, v []float64) float64 {
	a = a[:len(v)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(v); j += 4 {
		s0 += a[j] * v[j]
		s1 += a[j+1] * v[j+1]
		s2 += a[j+2] * v[j+2]
		s3 += a[j+3] * v[j+3]
	}
	for ; j < len(v); j++ {
		s0 += a[j] * v[j]
	}
	return (s0 + s1) + (s2 + s3)
}

// fusedLen is the length of a fused op's operand c.
func fusedLen(op *dop) int {
	if op.cs {
		return 1
	}
	return op.n
}

// gemvAddDirect is out = A·v + c (c + A·v when cFirst), c a scalar when
// cs, each product summed as gemvDirect sums it.
func gemvAddDirect(out, a, v, c []float64, rows, cols int, ext []int, cs, cFirst bool) {
	for i := range out[:rows] {
		e := cols
		if ext != nil {
			e = ext[i]
		}
		p := dotRow(a[i*cols:i*cols+e], v[:e])
		ci := c[0]
		if !cs {
			ci = c[i]
		}
		if cFirst {
			out[i] = ci + p
		} else {
			out[i] = p + ci
		}
	}
}
