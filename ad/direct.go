package ad

import (
	"fmt"
	"math"
)

// Direct evaluation of the smallest programs.
//
// A standard normal's gradient program fuses into one instruction: a loop
// that sums the squares of x and writes the gradient, then a few scalar
// operations. Such a program's call costs more than its arithmetic, and
// most of that cost was the concurrency guard: the two locked instructions
// around the buffers a call writes. A program whose only instruction is a
// fused one of scalar arithmetic and paired square-and-gradient
// loops, whose only vector writes are the gradient, needs none of its
// buffers: its scalars fit in registers on the caller's stack, it reads x
// and writes grad where the caller has them, and the data it reads is
// never written during a call. LogDensityGrad runs such programs from that frame, without the
// guard and without touching the Program, so concurrent calls are safe and
// give the same bits as the buffered path.

// directRegs is the number of scalar registers of the direct path;
// programs that need more use the buffers.
const directRegs = 16

// directPlan is a program's direct evaluation: its ops over a register
// file of scalars, x and grad.
type directPlan struct {
	init    [directRegs]float64 // constants in place, zeros elsewhere
	loads   []directLoad        // scalars read from the Program's data at each call
	ops     []directOp
	out     uint8 // register of the log-density
	checked bool  // the ops check every gradient element they write
	chain   *directChain
}

// directLoad copies element off of a data slot into a register.
type directLoad struct {
	slot, off int
	reg       uint8
}

// directOp is a scalar op on registers (out = a op b) or, when square, the
// paired loop: out = Σ x[xoff:xoff+n]², grad[goff:goff+n] = x·y·c.
type directOp struct {
	code            fcode
	a, b, out       uint8
	square, pscaled bool
	check           bool
	// bounded: y and c are constants so small that a finite Σx² implies a
	// finite x·y·c, so checking the sum checks the gradient too.
	bounded bool
	// single: y and c are constants whose product m is exact and y is a
	// power of two of at least 1, so x·y is exact and (x·y)·c rounds the
	// same real number as x·m: one multiply per element, same bits.
	single        bool
	m             float64
	xoff, goff, n int
	y, c          uint8
}

// planDirect returns the direct plan of c's gradient program, or nil when
// it does not qualify (see the comment at the top of this file). isConst
// tells which slots hold compile-time constants, whose values c.init has.
func (c *code) planDirect(isConst map[int]bool) *directPlan {
	if c.outSlot < 0 || c.dim == 0 || len(c.full) != 1 || c.full[0].kind != kFused {
		return nil
	}
	ops := c.full[0].fz
	// Each gradient slot and each wrt slot own distinct memory.
	seen := make(map[int]bool)
	for _, s := range append(append([]int(nil), c.wrt...), c.gradSlots...) {
		if c.slotLen[s] == 0 || seen[c.slotOff[s]] {
			return nil
		}
		seen[c.slotOff[s]] = true
	}
	// inside reports where an n-element range of slot s lies within x
	// (wrt) or grad (the gradient slots), as an offset into it.
	inside := func(s, n int, slots []int) (int, bool) {
		lo, at := c.slotOff[s], 0
		for _, w := range slots {
			if wl, wn := c.slotOff[w], c.slotLen[w]; lo >= wl && lo+n <= wl+wn {
				return at + lo - wl, true
			}
			at += c.slotLen[w]
		}
		return 0, false
	}
	d := &directPlan{checked: c.gradChecked}
	regs := make(map[int]uint8) // arena offset of a scalar -> register
	bad := false
	reg := func(o foperand) uint8 {
		at := c.slotOff[o.slot] + o.off
		if r, ok := regs[at]; ok {
			return r
		}
		if len(regs) == directRegs {
			bad = true
			return 0
		}
		r := uint8(len(regs))
		regs[at] = r
		if _, inX := inside(o.slot, 1, c.wrt); inX {
			bad = true // a scalar read from x: not worth a special case
		}
		switch {
		case isConst[o.slot]:
			d.init[r] = c.init[at]
		default:
			// Data, or a value an earlier op writes (then this load
			// is overwritten before it is read).
			d.loads = append(d.loads, directLoad{slot: o.slot, off: o.off, reg: r})
		}
		return r
	}
	written := make(map[uint8]bool)
	readFirst := make(map[uint8]bool) // registers read before any op writes them
	read := func(o foperand) uint8 {
		r := reg(o)
		if !written[r] {
			readFirst[r] = true
		}
		return r
	}
	grads := 0
	for k := range ops {
		op := &ops[k]
		switch {
		case op.paired && op.noOut && op.code == fSquare && !op.a.scalar:
			xoff, okx := inside(op.a.slot, op.n, c.wrt)
			goff, okg := inside(op.pout, op.n, c.gradSlots)
			if !okx || !okg || op.a.off != 0 {
				return nil
			}
			dop := directOp{square: true, xoff: xoff, goff: goff, n: op.n, check: op.check,
				y: read(op.py), pscaled: op.pscaled}
			if op.pscaled {
				dop.c = read(op.pc)
			}
			// A finite Σx² bounds every |x| by 2⁵¹², so with |y|, |c| ≤ 2⁶⁴
			// every |x·y·c| < 2⁶⁴⁰ is finite.
			small := func(o foperand) bool {
				v := c.init[c.slotOff[o.slot]+o.off]
				return isConst[o.slot] && math.Abs(v) <= 0x1p64
			}
			dop.bounded = small(op.py) && (!op.pscaled || small(op.pc))
			if dop.bounded {
				cv := 1.0
				if op.pscaled {
					cv = c.init[c.slotOff[op.pc.slot]+op.pc.off]
				}
				dop.m, dop.single = exactProduct(c.init[c.slotOff[op.py.slot]+op.py.off], op.pscaled, cv)
			}
			dop.out = reg(foperand{slot: op.sum})
			written[dop.out] = true
			d.ops = append(d.ops, dop)
			grads += op.n
		case op.n == 1 && op.code >= fAdd && op.code <= fDiv && op.sum < 0 && !op.scaled && !op.check &&
			c.slotLen[op.out] == 1:
			if _, inG := inside(op.out, 1, c.gradSlots); inG {
				return nil
			}
			dop := directOp{code: op.code, a: read(op.a), b: read(op.b)}
			dop.out = reg(foperand{slot: op.out})
			written[dop.out] = true
			d.ops = append(d.ops, dop)
		default:
			return nil
		}
	}
	// The loops must write every gradient element exactly once.
	if grads != c.dim {
		return nil
	}
	out, ok := regs[c.slotOff[c.outSlot]]
	if bad || !ok || !written[out] {
		return nil
	}
	d.out = out
	// A register written by one op and read before it by another would
	// carry a value across calls: leave such a program to the buffers.
	// Loads of the other written registers are not needed.
	loads := d.loads[:0]
	for _, l := range d.loads {
		if written[l.reg] && readFirst[l.reg] {
			return nil
		}
		if !written[l.reg] {
			loads = append(loads, l)
		}
	}
	d.loads = loads
	d.chain = d.planChain()
	return d
}

// directChain is the commonest direct plan in its cheapest form: one
// square loop with a single multiplier, then a chain of scalar ops each of
// which combines the previous op's result with a constant or a data
// scalar (log N(x; 0, σ²I) = −Σx²/(2σ²) − c is one). It runs the same ops
// in the same order as the register plan, so it gives the same bits, with
// a fraction of the register plan's bookkeeping per call.
type directChain struct {
	sq   directOp
	tail []chainOp
}

// chainOp is acc = acc op k, or k op acc when kLeft; k is a constant, or
// the data scalar at slot, off when data.
type chainOp struct {
	code      fcode
	kLeft     bool
	data      bool
	k         float64
	slot, off int
}

// planChain returns d as a chain, or nil when it is not one.
func (d *directPlan) planChain() *directChain {
	if len(d.ops) == 0 || !d.ops[0].square || !d.ops[0].single {
		return nil
	}
	ch := &directChain{sq: d.ops[0]}
	acc := d.ops[0].out
	loaded := make(map[uint8]directLoad)
	for _, l := range d.loads {
		loaded[l.reg] = l
	}
	written := map[uint8]bool{acc: true}
	for _, op := range d.ops[1:] {
		if op.square {
			return nil
		}
		var k uint8
		var kLeft bool
		switch {
		case op.a == acc && op.b != acc:
			k = op.b
		case op.b == acc && op.a != acc:
			k, kLeft = op.a, true
		default:
			return nil
		}
		if written[k] { // an earlier result, not a constant or data
			return nil
		}
		c := chainOp{code: op.code, kLeft: kLeft, k: d.init[k]}
		if l, ok := loaded[k]; ok {
			c.data, c.slot, c.off = true, l.slot, l.off
		}
		ch.tail = append(ch.tail, c)
		acc = op.out
		written[acc] = true
	}
	if acc != d.out {
		return nil
	}
	return ch
}

// logDensityGradChain is logDensityGradDirect for a chain plan.
func (p *Program) logDensityGradChain(ch *directChain, x, grad []float64) (float64, error) {
	sq := &ch.sq
	acc := squareSumMulBounded(x[sq.xoff:sq.xoff+sq.n], grad[sq.goff:sq.goff+sq.n], sq.m)
	// A finite sum bounds the gradient (sq.bounded), so only a non-finite
	// one calls for the scan below.
	bad := acc-acc != 0
	for i := range ch.tail {
		t := &ch.tail[i]
		k := t.k
		if t.data {
			k = p.slots[t.slot][t.off]
		}
		a, b := acc, k
		if t.kLeft {
			a, b = k, acc
		}
		switch t.code {
		case fAdd:
			acc = a + b
		case fSub:
			acc = a - b
		case fMul:
			acc = a * b
		default:
			acc = a / b
		}
	}
	if acc-acc != 0 { // NaN or ±Inf
		return acc, fmt.Errorf("%w: log-density is %v", ErrNonFinite, acc)
	}
	if bad {
		for i, gi := range grad {
			if math.IsNaN(gi) || math.IsInf(gi, 0) {
				return acc, fmt.Errorf("%w: gradient[%d] is %v", ErrNonFinite, i, gi)
			}
		}
	}
	return acc, nil
}

// exactProduct returns m = y·c (or y when the loop is not scaled) and
// whether x·m equals (x·y)·c bit for bit for every x with |x| < 2⁵¹²:
// true when |y| is a power of two no less than 1 (x·y is then exact, even
// for subnormal x) and y·c is exact, which scaling by a power of two is.
func exactProduct(y float64, scaled bool, c float64) (float64, bool) {
	frac, _ := math.Frexp(math.Abs(y))
	if frac != 0.5 || math.Abs(y) < 1 {
		return 0, false
	}
	if !scaled {
		return y, true
	}
	m := y * c
	if m-m != 0 || m/y != c {
		return 0, false
	}
	return m, true
}

// logDensityGradDirect is LogDensityGrad for a program with a direct plan.
// x and grad have the program's dimension and do not overlap.
func (p *Program) logDensityGradDirect(d *directPlan, x, grad []float64) (float64, error) {
	r := d.init
	for _, l := range d.loads {
		r[l.reg] = p.slots[l.slot][l.off]
	}
	bad := false
	for k := range d.ops {
		op := &d.ops[k]
		if op.square {
			c := 1.0
			if op.pscaled {
				c = r[op.c]
			}
			xs, gs := x[op.xoff:op.xoff+op.n], grad[op.goff:op.goff+op.n]
			if op.single {
				sum := squareSumMulBounded(xs, gs, op.m)
				r[op.out&(directRegs-1)] = sum
				bad = bad || op.check && sum-sum != 0
				continue
			}
			if op.bounded {
				sum := squareSumScaledBounded(xs, gs, r[op.y], c)
				r[op.out] = sum
				bad = bad || op.check && sum-sum != 0
				continue
			}
			sum, b := squareSumScaled(xs, gs, r[op.y], c)
			r[op.out] = sum
			bad = bad || op.check && (b || sum-sum != 0)
			continue
		}
		// directRegs is a power of two and every register index is below
		// it: the masks only spare the bounds checks.
		a, b, o := r[op.a&(directRegs-1)], r[op.b&(directRegs-1)], op.out&(directRegs-1)
		switch op.code {
		case fAdd:
			r[o] = a + b
		case fSub:
			r[o] = a - b
		case fMul:
			r[o] = a * b
		default:
			r[o] = a / b
		}
	}
	v := r[d.out]
	if v-v != 0 { // NaN or ±Inf
		return v, fmt.Errorf("%w: log-density is %v", ErrNonFinite, v)
	}
	if d.checked && bad || !d.checked && !allFinite(grad) {
		for i, gi := range grad {
			if math.IsNaN(gi) || math.IsInf(gi, 0) {
				return v, fmt.Errorf("%w: gradient[%d] is %v", ErrNonFinite, i, gi)
			}
		}
	}
	return v, nil
}

// squareSumMulBounded is squareSumScaledBounded with the factors y·c
// folded into one exact multiplier m (see exactProduct): the same sum, the
// same gradient bits, one multiply per element fewer, and no bounds checks
// in the loop.
func squareSumMulBounded(a, g []float64, m float64) float64 {
	g = g[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		e, o := (*[4]float64)(a[i:i+4]), (*[4]float64)(g[i:i+4])
		s0 += e[0] * e[0]
		s1 += e[1] * e[1]
		s2 += e[2] * e[2]
		s3 += e[3] * e[3]
		o[0], o[1], o[2], o[3] = e[0]*m, e[1]*m, e[2]*m, e[3]*m
	}
	for ; i < len(a); i++ {
		e := a[i]
		s0 += e * e
		g[i] = e * m
	}
	return (s0 + s1) + (s2 + s3)
}

// squareSumScaledBounded is squareSumScaled without the test of g, for
// factors y and c small enough that a finite sum implies a finite g.
func squareSumScaledBounded(a, g []float64, y, c float64) float64 {
	g = g[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		e0, e1, e2, e3 := a[i], a[i+1], a[i+2], a[i+3]
		s0 += e0 * e0
		s1 += e1 * e1
		s2 += e2 * e2
		s3 += e3 * e3
		g[i], g[i+1], g[i+2], g[i+3] = e0*y*c, e1*y*c, e2*y*c, e3*y*c
	}
	for ; i < len(a); i++ {
		e := a[i]
		s0 += e * e
		g[i] = e * y * c
	}
	return (s0 + s1) + (s2 + s3)
}
