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
	bounded       bool
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
	return d
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
		a, b := r[op.a], r[op.b]
		switch op.code {
		case fAdd:
			r[op.out] = a + b
		case fSub:
			r[op.out] = a - b
		case fMul:
			r[op.out] = a * b
		default:
			r[op.out] = a / b
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
