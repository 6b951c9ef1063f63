package ad

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
)

// Fusion of elementwise instructions.
//
// Small models spend most of an evaluation between kernels: a standard
// normal in 21 dimensions is six instructions of 21 or 1 elements each, and
// the per-instruction dispatch, the indirect call and the reloading of
// operands cost more than the arithmetic. After lowering and constant
// folding, the compiler therefore rewrites each entry point's instruction
// list:
//
//   - every maximal run of consecutive elementwise instructions (unary and
//     binary ops, sums of all elements, broadcasts and plain copies) becomes
//     one kFused instruction whose ops run from a single switch with the
//     loops inline, instead of one dispatch and one indirect call each;
//   - operands are resolved at compile time: a broadcast of a scalar is read
//     as that scalar, a copy as its source, and a constant whose elements are
//     all equal (the seeds of gradients, broadcast constants) as a scalar, so
//     that a product with it loads one operand instead of two;
//   - broadcasts and copies that nothing reads any more are dropped;
//   - softplus(x) and sigmoid(x) of the same x in one run (a logistic
//     likelihood and its gradient) share one exp per element.
//
// Every op writes its own buffer as before, in the original order, so the
// program computes the same values: bit for bit, except the shared
// softplus/sigmoid, which is within an ulp or two of the separate formulas.
// Errors and non-finite results are therefore unchanged.

// fcode is the operation of one fused op.
type fcode uint8

const (
	fUnary           fcode = iota // out = un(a)
	fNeg                          // out = −a
	fSquare                       // out = a²
	fAdd                          // out = a + b
	fSub                          // out = a − b
	fMul                          // out = a · b
	fDiv                          // out = a / b
	fGeneric                      // out = gen(a, b), elementwise
	fSum                          // out[0] = Σ a
	fFill                         // out = a (a scalar)
	fCopy                         // out = a (a vector)
	fSoftplusSigmoid              // out = softplus(a), out2 = sigmoid(a)
)

// foperand is an operand of a fused op: n elements of slot from off, or,
// when scalar, the single element at off.
type foperand struct {
	slot, off int
	scalar    bool
}

// fop is one op of a fused instruction.
type fop struct {
	code fcode
	// run is how runFused dispatches the op, decided once its other
	// fields are final (see setDispatch); the zero value tests the fields
	// at every run. It sits beside the fields the common ops read, in the
	// op's first cache line.
	run  fdispatch
	out  int // slot written
	out2 int // fSoftplusSigmoid: the sigmoid's slot
	n    int // elements of the vector operands and of out (fSum: of a)
	a, b foperand
	un   unaryFunc
	gen  func(x, y float64) float64
	sym  string // the unary op's name, for pairing softplus and sigmoid

	// fSquare, fMul: sum >= 0 is a slot whose element 0 receives the sum
	// of out, accumulated in the same loop.
	sum int
	// fMul: when scaled, each product is multiplied by the scalar scale
	// (the product with a scalar that read this op's result alone, merged
	// into it), and out is that scaled product's slot.
	scale  foperand
	scaled bool

	check bool // report non-finite results (a gradient's writer)

	// fSquare with a sum: when paired, the same loop also writes
	// pout[i] = a[i]·py (·pc when pscaled), a later product of the same
	// vector with a scalar moved here (see pairSquareMul); noOut says that
	// nothing reads out, so the squares are not stored.
	paired, pscaled, noOut bool
	pout                   int
	py, pc                 foperand
	// pmul: py and pc are constants whose product pm is exact, py a power
	// of two of at least 1 and both at most 2⁶⁴ in magnitude, so that
	// a·pm has the bits of a·py·pc for every a of a finite Σa², and a
	// finite Σa² implies a finite product (see exactMultiplier).
	pmul bool
	pm   float64
}

// fdispatch is the branch of runFused that executes an op. Deciding it
// at compile time, from the op's code, its operands' shapes and what is
// merged into it, leaves one jump per op at run time: the common ops (an
// arithmetic op of vectors and scalars, a unary op from the table, a
// square or product with its sum) go straight to their loop, without the
// tests of the general path (dFields) that only checked and merged ops
// need.
type fdispatch uint8

const (
	dFields        fdispatch = iota // decide from the op's fields
	dScalar                         // an unchecked arithmetic op on two numbers
	dScalarChecked                  // the same, writing a gradient (checked)
	dVV                             // an arithmetic op on two vectors
	dVS                             // an arithmetic op, vector and scalar
	dSV                             // an arithmetic op, scalar and vector
	dUnary                          // op.un of a vector (neg and square too)
	dSquareSum                      // a square and its sum
	dMulFused                       // a product with its scale or sum
	dAddSubSum                      // a sum or difference and its sum
	dSum                            // the sum of a vector
	dCopy                           // a copy of a vector
	dPairedExact                    // a paired square with one exact multiplier
)

// setDispatch decides the dispatch of every fused op of list, which must
// not change afterwards.
func setDispatch(list []instr) {
	for i := range list {
		for k := range list[i].fz {
			op := &list[i].fz[k]
			op.run = dispatchOf(op)
			switch {
			case op.run != dUnary:
			case op.code == fNeg:
				op.un = unaryFuncs["neg"]
			case op.code == fSquare:
				op.un = unaryFuncs["square"]
			}
		}
	}
}

// dispatchOf is the dispatch of op (see fdispatch).
func dispatchOf(op *fop) fdispatch {
	if op.paired {
		if op.pmul && op.code == fSquare {
			return dPairedExact
		}
		return dFields
	}
	if op.check && op.code == fMul && op.a.scalar != op.b.scalar && op.sum < 0 {
		return dFields // checked in its loop (mulScalarChecked)
	}
	arith := op.code >= fAdd && op.code <= fDiv
	plain := op.sum < 0 && !op.scaled
	switch {
	case arith && plain && op.n == 1 && !op.check:
		return dScalar
	case arith && plain && op.n == 1:
		// Kept off the unchecked fast path of runFused: a scalar
		// gradient (√x at 0, say) can be infinite at a finite value.
		return dScalarChecked
	case arith && plain && op.a.scalar && op.b.scalar:
		return dFields // a broadcast result: rare
	case arith && plain && op.a.scalar:
		return dSV
	case arith && plain && op.b.scalar:
		return dVS
	case arith && plain:
		return dVV
	case (op.code == fUnary || op.code == fNeg || op.code == fSquare) && plain:
		return dUnary
	case op.code == fSquare:
		return dSquareSum
	case op.code == fMul:
		return dMulFused
	case op.code == fAdd || op.code == fSub:
		return dAddSubSum
	case op.code == fSum:
		return dSum
	case op.code == fCopy:
		return dCopy
	}
	return dFields
}

// runFused executes the ops of a kFused instruction in order. Ops marked
// check also set element 0 of slot chk to 1 when they write a NaN or an
// infinity (see markGradChecks).
func runFused(s [][]float64, ops []fop, chk int) {
	for k := range ops {
		op := &ops[k]
		if op.run == dScalar {
			// A scalar op (a small model's value is mostly these), ahead
			// of the jump table of the others.
			s[op.out][0] = arith(op.code, s[op.a.slot][op.a.off], s[op.b.slot][op.b.off])
			continue
		}
		if op.run == dPairedExact {
			// squareSumMul's exact case, the square of a normal density
			// (every Gaussian prior), without its tests: a finite sum
			// implies a finite product.
			n := op.n
			a := s[op.a.slot][op.a.off : op.a.off+n]
			sum := squareSumMulExact(a, s[op.pout], op.pm)
			s[op.sum][0] = sum
			if !op.noOut {
				mapUnary(s[op.out][:n], a, square)
			}
			if op.check && (sum-sum != 0 || !op.noOut && !allFinite(s[op.out][:n])) {
				s[chk][0] = 1
			}
			continue
		}
		n := op.n
		switch op.run {
		case dScalarChecked:
			s[op.out][0] = arith(op.code, s[op.a.slot][op.a.off], s[op.b.slot][op.b.off])
		case dVV:
			arithVV(op.code, s[op.out][:n], s[op.a.slot][op.a.off:op.a.off+n], s[op.b.slot][op.b.off:op.b.off+n])
		case dVS:
			arithVS(op.code, s[op.out][:n], s[op.a.slot][op.a.off:op.a.off+n], s[op.b.slot][op.b.off])
		case dSV:
			arithSV(op.code, s[op.out][:n], s[op.a.slot][op.a.off], s[op.b.slot][op.b.off:op.b.off+n])
		case dUnary:
			op.un(s[op.out][:n], s[op.a.slot][op.a.off:op.a.off+n])
		case dSquareSum:
			s[op.sum][0] = squareSum(s[op.out][:n], s[op.a.slot][op.a.off:op.a.off+n])
		case dMulFused:
			mulFused(s[op.out][:n], s, op)
		case dAddSubSum:
			s[op.sum][0] = addSubSum(s[op.out][:n], s, op)
		case dSum:
			s[op.out][0] = floats.Sum(s[op.a.slot][op.a.off : op.a.off+n])
		case dCopy:
			copy(s[op.out][:n], s[op.a.slot][op.a.off:op.a.off+n])
		default:
			runFields(s, op, chk)
			continue
		}
		// The ops that write a gradient check it after their loop, except
		// the ones dFields runs, which check for themselves.
		if op.check && badOutputs(s, op) {
			s[chk][0] = 1
		}
	}
}

// runFields executes op from its fields: the general path of runFused.
func runFields(s [][]float64, op *fop, chk int) {
	if op.paired {
		bad := squareSumMul(s, op)
		if op.check {
			if v := s[op.sum][0]; bad || v-v != 0 || !op.noOut && !allFinite(s[op.out][:op.n]) {
				s[chk][0] = 1
			}
		}
		return
	}
	if op.check {
		if runChecked(s, op) {
			s[chk][0] = 1
		}
		return
	}
	runOp(s, op)
}

// runChecked runs op and reports whether any value it wrote is NaN or
// infinite. A product with a scalar checks in its loop; other ops check
// their results after it.
func runChecked(s [][]float64, op *fop) bool {
	if op.code == fMul && op.a.scalar != op.b.scalar && op.sum < 0 {
		return mulScalarChecked(s[op.out][:op.n], s, op)
	}
	if op.code == fSquare && op.paired {
		bad := squareSumMul(s, op)
		if !op.noOut {
			bad = bad || !allFinite(s[op.out][:op.n])
		}
		return bad || !allFinite(s[op.sum][:1])
	}
	runOp(s, op)
	return badOutputs(s, op)
}

// badOutputs reports whether a value op wrote is NaN or infinite.
func badOutputs(s [][]float64, op *fop) bool {
	bad := false
	switch op.code {
	case fSum:
		bad = !allFinite(s[op.out][:1])
	case fSoftplusSigmoid:
		bad = !allFinite(s[op.out][:op.n]) || !allFinite(s[op.out2][:op.n])
	default:
		bad = !allFinite(s[op.out][:op.n])
	}
	if op.sum >= 0 {
		bad = bad || !allFinite(s[op.sum][:1])
	}
	return bad
}

// mulScalarChecked runs a product of a vector and a scalar, scaled or not
// (a product with 1 leaves every value's bits unchanged), and reports
// whether a result is NaN or infinite: a result's exponent bits plus one
// carry into the sign bit exactly when they are all ones.
func mulScalarChecked(out []float64, s [][]float64, op *fop) bool {
	v, x := op.a, op.b
	if v.scalar {
		v, x = x, v
	}
	a, y := s[v.slot][v.off:v.off+len(out)], s[x.slot][x.off]
	c := 1.0
	if op.scaled {
		c = s[op.scale.slot][op.scale.off]
	}
	const expMask = 0x7ff << 52
	var m uint64
	out = out[:len(a)]
	for i, e := range a {
		r := e * y * c
		out[i] = r
		m |= math.Float64bits(r)&expMask + 1<<52
	}
	return m>>63 != 0
}

// runOp executes one fused op.
func runOp(s [][]float64, op *fop) {
	{
		n := op.n
		switch op.code {
		case fUnary:
			op.un(s[op.out][:n], s[op.a.slot][op.a.off:op.a.off+n])
		case fNeg:
			mapUnary(s[op.out][:n], s[op.a.slot][op.a.off:op.a.off+n], neg)
		case fSquare:
			if op.paired {
				squareSumMul(s, op)
				return
			}
			out, a := s[op.out][:n], s[op.a.slot][op.a.off:op.a.off+n]
			if op.sum >= 0 {
				s[op.sum][0] = squareSum(out, a)
				return
			}
			mapUnary(out, a, square)
		case fMul, fAdd, fSub, fDiv, fGeneric:
			switch {
			case op.code == fMul && (op.sum >= 0 || op.scaled):
				mulFused(s[op.out][:n], s, op)
			case op.sum >= 0:
				s[op.sum][0] = addSubSum(s[op.out][:n], s, op)
			case n == 1:
				s[op.out][0] = scalarOp(op.bop(), s[op.a.slot][op.a.off], s[op.b.slot][op.b.off])
			default:
				binaryFused(s[op.out][:n], s, op)
			}
		case fSum:
			s[op.out][0] = floats.Sum(s[op.a.slot][op.a.off : op.a.off+n])
		case fFill:
			out, v := s[op.out][:n], s[op.a.slot][op.a.off]
			for i := range out {
				out[i] = v
			}
		case fCopy:
			copy(s[op.out][:n], s[op.a.slot][op.a.off:op.a.off+n])
		case fSoftplusSigmoid:
			softplusSigmoid(s[op.out][:n], s[op.out2][:n], s[op.a.slot][op.a.off:op.a.off+n])
		}
	}
}

// bop is the binary op of op, an fAdd … fGeneric.
func (op *fop) bop() binaryOp { return binaryOp{op.code, op.gen} }

// view is the operand o of n elements (one when scalar).
func (o foperand) view(s [][]float64, n int) []float64 {
	if o.scalar {
		n = 1
	}
	return s[o.slot][o.off : o.off+n]
}

// binaryFused runs a binary op with its operands' shapes: tensor–tensor,
// scalar–tensor, tensor–scalar or scalar–scalar (a broadcast result).
func binaryFused(out []float64, s [][]float64, op *fop) {
	n := len(out)
	binaryLoop(op.bop(), out, op.a.view(s, n), op.b.view(s, n), op.a.scalar, op.b.scalar)
}

// squareSum writes a² into out and returns Σ a², summed in four
// interleaved partial sums.
func squareSum(out, a []float64) float64 {
	a = a[:len(out)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		v0, v1, v2, v3 := a[i]*a[i], a[i+1]*a[i+1], a[i+2]*a[i+2], a[i+3]*a[i+3]
		out[i], out[i+1], out[i+2], out[i+3] = v0, v1, v2, v3
		s0 += v0
		s1 += v1
		s2 += v2
		s3 += v3
	}
	for ; i < len(a); i++ {
		v := a[i] * a[i]
		out[i] = v
		s0 += v
	}
	return (s0 + s1) + (s2 + s3)
}

// squareSumMul runs a paired square (see pairSquareMul): Σ a² into the sum
// slot, in squareSum's order, and a·y·c into pout, in one pass over a, then
// a² into out unless noOut. It reports whether a value written to pout is
// NaN or infinite (the test of mulScalarChecked).
func squareSumMul(s [][]float64, op *fop) bool {
	n := op.n
	a := s[op.a.slot][op.a.off : op.a.off+n]
	y, c := s[op.py.slot][op.py.off], 1.0
	if op.pscaled {
		c = s[op.pc.slot][op.pc.off]
	}
	var sum float64
	var bad bool
	if op.pmul {
		// A finite sum implies a finite product; a non-finite one flags
		// the product for the caller's scan.
		sum = squareSumMulExact(a, s[op.pout][:n], op.pm)
		bad = sum-sum != 0
	} else {
		sum, bad = squareSumScaled(a, s[op.pout][:n], y, c)
	}
	s[op.sum][0] = sum
	if !op.noOut {
		mapUnary(s[op.out][:n], a, square)
	}
	return bad
}

// exactMultiplier sets op.pmul and op.pm when the factors of a paired
// square allow one exact multiplier (see fop.pmul). A finite Σa² bounds
// every |a| by 2⁵¹², so with |py|, |pc| ≤ 2⁶⁴ every |a·py·pc| < 2⁶⁴⁰ is
// finite; |py| a power of two no less than 1 makes a·py exact, even for
// subnormal a, so (a·py)·pc rounds the same real number as a·(py·pc)
// when py·pc is exact, which scaling by a power of two is.
func (f *fuser) exactMultiplier(op *fop) {
	val := func(o foperand) (float64, bool) {
		if !f.isConst[o.slot] || f.shared(o.slot) {
			return 0, false
		}
		v := f.c.init[f.c.slotOff[o.slot]+o.off]
		return v, math.Abs(v) <= 0x1p64
	}
	y, ok := val(op.py)
	c := 1.0
	if op.pscaled {
		var okc bool
		c, okc = val(op.pc)
		ok = ok && okc
	}
	if frac, _ := math.Frexp(math.Abs(y)); !ok || frac != 0.5 || math.Abs(y) < 1 {
		return
	}
	if m := y * c; m-m == 0 && m/y == c {
		op.pmul, op.pm = true, m
	}
}

// squareSumMulExact is squareSumScaled with the factors folded into one
// exact multiplier m (see fop.pmul): the same sum, the same gradient bits,
// one multiply per element fewer and no test of g, which a finite sum
// implies is finite.
func squareSumMulExact(a, g []float64, m float64) float64 {
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

// squareSumScaled returns Σ a² and writes g = a·y·c, reporting whether
// some g[i] is NaN or infinite (its exponent bits plus one carry into the
// sign bit exactly when they are all ones). The sum's four partial sums
// keep its order the same as squareSum's.
func squareSumScaled(a, g []float64, y, c float64) (float64, bool) {
	g = g[:len(a)]
	const expMask = 0x7ff << 52
	var m uint64
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		e0, e1, e2, e3 := a[i], a[i+1], a[i+2], a[i+3]
		s0 += e0 * e0
		s1 += e1 * e1
		s2 += e2 * e2
		s3 += e3 * e3
		r0, r1, r2, r3 := e0*y*c, e1*y*c, e2*y*c, e3*y*c
		g[i], g[i+1], g[i+2], g[i+3] = r0, r1, r2, r3
		m |= (math.Float64bits(r0)&expMask + 1<<52) | (math.Float64bits(r1)&expMask + 1<<52) |
			(math.Float64bits(r2)&expMask + 1<<52) | (math.Float64bits(r3)&expMask + 1<<52)
	}
	for ; i < len(a); i++ {
		e := a[i]
		s0 += e * e
		r := e * y * c
		g[i] = r
		m |= math.Float64bits(r)&expMask + 1<<52
	}
	return (s0 + s1) + (s2 + s3), m>>63 != 0
}

// mulFused runs a product with a fused scale and/or sum.
func mulFused(out []float64, s [][]float64, op *fop) {
	n := len(out)
	c := 1.0
	scaled := op.scaled
	if scaled {
		c = s[op.scale.slot][op.scale.off]
	}
	var s0, s1 float64
	switch {
	case !op.a.scalar && !op.b.scalar:
		a, b := s[op.a.slot][op.a.off:op.a.off+n], s[op.b.slot][op.b.off:op.b.off+n]
		a, b = a[:len(out)], b[:len(out)]
		i := 0
		if scaled {
			for ; i+2 <= n; i += 2 {
				v0, v1 := a[i]*b[i]*c, a[i+1]*b[i+1]*c
				out[i], out[i+1] = v0, v1
				s0 += v0
				s1 += v1
			}
			for ; i < n; i++ {
				v := a[i] * b[i] * c
				out[i] = v
				s0 += v
			}
		} else {
			for ; i+2 <= n; i += 2 {
				v0, v1 := a[i]*b[i], a[i+1]*b[i+1]
				out[i], out[i+1] = v0, v1
				s0 += v0
				s1 += v1
			}
			for ; i < n; i++ {
				v := a[i] * b[i]
				out[i] = v
				s0 += v
			}
		}
	case op.a.scalar && op.b.scalar:
		v := s[op.a.slot][op.a.off] * s[op.b.slot][op.b.off]
		if scaled {
			v *= c
		}
		for i := range out {
			out[i] = v
			s0 += v
		}
	default:
		// One side is a scalar, whose slot may hold fewer than n values:
		// slice only the vector side.
		// A product of two factors commutes to the bit, so which side
		// is the scalar does not matter once it is known.
		vec, sc := op.a, op.b
		if op.a.scalar {
			vec, sc = op.b, op.a
		}
		a, x := s[vec.slot][vec.off:vec.off+n], s[sc.slot][sc.off]
		if scaled {
			for i, v := range a {
				out[i] = v * x * c
			}
		} else {
			for i, v := range a {
				out[i] = v * x
			}
		}
		if op.sum >= 0 {
			s0 = pairSum(out)
		}
	}
	if op.sum >= 0 {
		s[op.sum][0] = s0 + s1
	}
}

// addSubSum runs a sum or difference and returns the sum of its result.
func addSubSum(out []float64, s [][]float64, op *fop) float64 {
	if len(out) == 1 {
		out[0] = scalarOp(op.bop(), s[op.a.slot][op.a.off], s[op.b.slot][op.b.off])
	} else {
		binaryFused(out, s, op)
	}
	return pairSum(out)
}

// pairSum is Σ v over two accumulators, even and odd elements, as the
// fused loops sum their results.
func pairSum(v []float64) float64 {
	var s0, s1 float64
	i := 0
	for ; i+2 <= len(v); i += 2 {
		s0 += v[i]
		s1 += v[i+1]
	}
	for ; i < len(v); i++ {
		s0 += v[i]
	}
	return s0 + s1
}

// softplusSigmoid computes softplus and sigmoid of x from one exp where
// both take their general branch (gorgonia's cut-offs otherwise).
func softplusSigmoid(sp, sg, x []float64) {
	x, sg = x[:len(sp)], sg[:len(sp)]
	for i, v := range x {
		if v >= -708 && v <= 16 {
			e := math.Exp(v)
			sp[i] = math.Log1p(e)
			sg[i] = e / (1 + e)
			continue
		}
		sp[i] = softplus(v)
		sg[i] = sigmoid(v)
	}
}

// fuse rewrites an instruction list of code c as described above. liveOut
// are the slots the entry point reads after running the list; isConst the
// slots fixed at compile time, whose values are in c.init.
func (c *code) fuse(list []instr, liveOut []int, isConst map[int]bool) []instr {
	if len(list) == 0 {
		return list
	}
	f := &fuser{c: c, list: list, liveOut: liveOut, isConst: isConst}
	f.resolveCopies()
	f.ops = make([]*fop, len(list))
	for i := range list {
		f.ops[i] = f.lowerOp(&list[i])
	}
	f.dropDead()
	return f.group()
}

// fuser holds the state of one fuse call.
type fuser struct {
	c       *code
	list    []instr
	liveOut []int
	isConst map[int]bool
	res     map[int]foperand // broadcasts and copies, resolved to their sources
	ops     []*fop           // each instruction's op, nil when not fusable
	dead    []bool           // instructions dropped
	reads   []int            // slots read by the live instructions and the entry point
}

func (f *fuser) shared(t int) bool { _, ok := f.c.shared[t]; return ok }

// resolveCopies maps the output of each broadcast and copy to its source.
func (f *fuser) resolveCopies() {
	c := f.c
	f.res = make(map[int]foperand)
	for i := range f.list {
		ins := &f.list[i]
		if ins.kind != kGather || len(ins.segs) != 1 {
			continue
		}
		sg := ins.segs[0]
		n := c.slotLen[ins.out]
		if sg.at != 0 || sg.n != n || n == 0 || sg.arg < 0 || (sg.stride != 0 && sg.stride != 1) {
			continue
		}
		src := foperand{slot: ins.args[sg.arg], off: sg.src, scalar: sg.stride == 0}
		if r, ok := f.res[src.slot]; ok {
			if r.scalar {
				src = r
			} else {
				src.slot, src.off = r.slot, r.off+src.off
			}
		}
		f.res[ins.out] = src
	}
}

// uniform reports whether slot t is a constant with all elements equal.
func (f *fuser) uniform(t int) bool {
	c := f.c
	if !f.isConst[t] || f.shared(t) || c.slotLen[t] == 0 {
		return false
	}
	v := c.init[c.slotOff[t] : c.slotOff[t]+c.slotLen[t]]
	b0 := math.Float64bits(v[0])
	for _, x := range v[1:] {
		if math.Float64bits(x) != b0 {
			return false
		}
	}
	return true
}

// operand resolves slot t read as n elements; vecOnly refuses a scalar.
func (f *fuser) operand(t, n int, vecOnly bool) foperand {
	r, ok := f.res[t]
	if !ok {
		r = foperand{slot: t}
		if n > 1 && (f.c.slotLen[t] == 1 || f.uniform(t)) {
			r.scalar = true
		}
	}
	if r.scalar && vecOnly {
		return foperand{slot: t}
	}
	return r
}

// lowerOp returns the fused op of a fusable instruction, or nil.
func (f *fuser) lowerOp(ins *instr) *fop {
	c := f.c
	n := c.slotLen[ins.out]
	if n == 0 {
		return nil
	}
	op := &fop{out: ins.out, n: n, sum: -1}
	switch ins.kind {
	case kUnary:
		op.code, op.a, op.un, op.sym = fUnary, f.operand(ins.args[0], n, true), ins.unary, ins.sym
		switch ins.sym {
		case "neg":
			op.code = fNeg
		case "square":
			op.code = fSquare
		}
	case kBinary:
		op.a, op.b = f.operand(ins.args[0], n, false), f.operand(ins.args[1], n, false)
		op.code, op.gen = ins.bop.code, ins.bop.f
		if op.code != fMul {
			break
		}
		// A product with a constant 1 is its other operand, with −1 its
		// negation: the same bits, one pass fewer.
		v, k := op.a, op.b
		if v.scalar {
			v, k = k, v
		}
		if !v.scalar && k.scalar && f.isConst[k.slot] && !f.shared(k.slot) {
			switch c.init[c.slotOff[k.slot]+k.off] {
			case 1:
				f.res[ins.out] = v
				op.code, op.a = fCopy, v
			case -1:
				op.code, op.a = fNeg, v
			}
		}
	case kSumAll:
		m := c.slotLen[ins.args[0]]
		if m == 0 {
			return nil
		}
		op.code, op.n, op.a = fSum, m, f.operand(ins.args[0], m, true)
	case kGather:
		r, ok := f.res[ins.out]
		if !ok {
			return nil
		}
		op.code, op.a = fCopy, r
		if r.scalar {
			op.code = fFill
		}
	default:
		return nil
	}
	return op
}

// overlaps reports whether slots t and u may share memory.
func (f *fuser) overlaps(t, u int) bool {
	c := f.c
	if f.shared(t) || f.shared(u) || c.slotLen[t] == 0 || c.slotLen[u] == 0 {
		return t == u
	}
	return c.slotOff[t] < c.slotOff[u]+c.slotLen[u] && c.slotOff[u] < c.slotOff[t]+c.slotLen[t]
}

// dropDead drops the broadcasts and copies whose buffers nothing reads now
// that their readers take the sources, and leaves in f.reads the slots the
// rest read.
func (f *fuser) dropDead() {
	f.dead = make([]bool, len(f.list))
	for changed := true; changed; {
		changed = false
		f.reads = append(f.reads[:0], f.liveOut...)
		for i := range f.list {
			if f.dead[i] {
				continue
			}
			switch op := f.ops[i]; {
			case op == nil:
				f.reads = append(f.reads, f.list[i].args...)
			case op.code == fUnary || op.code == fNeg || op.code == fSquare || op.code == fSum ||
				op.code == fFill || op.code == fCopy:
				f.reads = append(f.reads, op.a.slot)
			default:
				f.reads = append(f.reads, op.a.slot, op.b.slot)
			}
		}
		for i, op := range f.ops {
			if op == nil || f.dead[i] || (op.code != fFill && op.code != fCopy) {
				continue
			}
			used := false
			for _, r := range f.reads {
				if f.overlaps(r, op.out) {
					used = true
					break
				}
			}
			if !used {
				f.dead[i], changed = true, true
			}
		}
	}
}

// readOnce reports whether slot t is read exactly once, not by the entry
// point.
func (f *fuser) readOnce(t int) bool {
	k := 0
	for _, r := range f.reads {
		if f.overlaps(r, t) {
			k++
		}
	}
	for _, r := range f.liveOut {
		if f.overlaps(r, t) {
			return false
		}
	}
	return k == 1
}

// group groups consecutive ops into fused instructions, merging as they
// come, and returns the new list.
func (f *fuser) group() []instr {
	var out []instr
	var run []fop
	last := -1 // the instruction of the last op appended to run
	flush := func() {
		if len(run) == 0 {
			return
		}
		if len(run) == 1 && unchanged(&run[0], &f.list[last]) {
			// A lone op gains nothing from fusion: keep its instruction
			// and one dispatch fewer.
			out = append(out, f.list[last])
			run = nil
			return
		}
		run = pairSquareMul(run, f.overlaps, f.readOnce)
		for k := range run {
			if run[k].paired {
				f.exactMultiplier(&run[k])
			}
		}
		out = append(out, instr{kind: kFused, out: run[0].out, fz: run,
			name: fmt.Sprintf("fused elementwise ops (%d)", len(run))})
		run = nil
	}
	for i := range f.list {
		if f.dead[i] {
			continue
		}
		op := f.ops[i]
		if op == nil {
			flush()
			out = append(out, f.list[i])
			continue
		}
		switch {
		case op.code == fUnary && (op.sym == "softplus" || op.sym == "sigmoid") && pairSoftplusSigmoid(run, op):
			continue
		case op.code == fSum && mergeSum(run, op):
			continue
		case op.code == fMul:
			if r, ok := mergeScale(run, op, f.readOnce); ok {
				run = r
				continue
			}
		}
		run = append(run, *op)
		last = i
	}
	flush()
	return out
}

// unchanged reports whether op computes what ins computes, from the same
// buffers, with nothing merged into it.
func unchanged(op *fop, ins *instr) bool {
	if op.sum >= 0 || op.scaled || op.out != ins.out || op.code == fSoftplusSigmoid {
		return false
	}
	switch ins.kind {
	case kUnary, kSumAll:
		return op.a.slot == ins.args[0] && op.a.off == 0 && op.code != fCopy
	case kBinary:
		return op.code != fCopy && op.code != fNeg && op.a.slot == ins.args[0] && op.b.slot == ins.args[1] &&
			op.a.off == 0 && op.b.off == 0
	}
	return false
}

// mergeSum folds a sum of all elements into the square or product of run
// that computes its operand, and reports whether it did. The product's
// buffer is still written; the sum is accumulated in the same loop and
// written earlier than before, which nothing can notice since nothing
// before the sum reads it.
func mergeSum(run []fop, sum *fop) bool {
	if sum.a.scalar || sum.a.off != 0 {
		return false
	}
	for k := len(run) - 1; k >= 0; k-- {
		p := &run[k]
		if p.out != sum.a.slot || p.n != sum.n {
			continue
		}
		if (p.code != fSquare && p.code != fMul && p.code != fAdd && p.code != fSub) || p.sum >= 0 {
			return false
		}
		p.sum = sum.out
		return true
	}
	return false
}

// mergeScale folds a product op of a vector and a scalar, whose vector is
// the result of a product p in run that nothing else reads, into p: p moves
// to op's place (its operands were ready before) and writes op's buffer
// instead of its own. It returns the new run.
func mergeScale(run []fop, op *fop, readOnce func(int) bool) ([]fop, bool) {
	v, x := op.a, op.b
	if v.scalar {
		v, x = x, v
	}
	if v.scalar || !x.scalar || v.off != 0 || op.sum >= 0 || op.scaled {
		return run, false
	}
	for k := len(run) - 1; k >= 0; k-- {
		p := run[k]
		if p.out != v.slot {
			continue
		}
		if p.code != fMul || p.n != op.n || p.sum >= 0 || p.scaled || !readOnce(p.out) {
			return run, false
		}
		p.scale, p.scaled, p.out = x, true, op.out
		run = append(run[:k], run[k+1:]...)
		return append(run, p), true
	}
	return run, false
}

// pairSquareMul moves each product of a vector and a scalar in run (scaled
// or not) into an earlier square with a sum of the same vector, so that one
// pass over the vector computes Σ a² and the product (a Gaussian's
// log-density and its gradient), and returns the new run. It moves a
// product only when the ops from the square to it neither write its
// operands nor read or write its buffer; every buffer then receives the same
// values as before. The squares are not stored when nothing but the merged
// sum reads them.
func pairSquareMul(run []fop, overlaps func(t, u int) bool, readOnce func(int) bool) []fop {
	writes := func(op *fop) []int {
		w := []int{op.out}
		if op.code == fSoftplusSigmoid {
			w = append(w, op.out2)
		}
		if op.sum >= 0 {
			w = append(w, op.sum)
		}
		if op.paired {
			w = append(w, op.pout)
		}
		return w
	}
	reads := func(op *fop) []int {
		r := []int{op.a.slot}
		switch op.code {
		case fAdd, fSub, fMul, fDiv, fGeneric:
			r = append(r, op.b.slot)
		}
		if op.scaled {
			r = append(r, op.scale.slot)
		}
		if op.paired {
			r = append(r, op.py.slot)
			if op.pscaled {
				r = append(r, op.pc.slot)
			}
		}
		return r
	}
	hits := func(ts, us []int) bool {
		for _, t := range ts {
			for _, u := range us {
				if overlaps(t, u) {
					return true
				}
			}
		}
		return false
	}
	for j := 0; j < len(run); j++ {
		g := &run[j]
		v, x := g.a, g.b
		if v.scalar {
			v, x = x, v
		}
		if g.code != fMul || g.sum >= 0 || v.scalar || !x.scalar {
			continue
		}
		for k := j - 1; k >= 0; k-- {
			q := &run[k]
			if q.code != fSquare || q.sum < 0 || q.paired || q.a != v || q.n != g.n {
				continue
			}
			gin := []int{v.slot, x.slot}
			if g.scaled {
				gin = append(gin, g.scale.slot)
			}
			ok := !hits([]int{g.out}, append(gin, q.out, q.sum))
			for m := k; m < j && ok; m++ {
				ok = !hits(writes(&run[m]), append(gin, g.out))
				if m > k {
					ok = ok && !hits(reads(&run[m]), []int{g.out})
				}
			}
			if !ok {
				break
			}
			q.paired, q.pout, q.py, q.pscaled, q.pc = true, g.out, x, g.scaled, g.scale
			q.noOut = readOnce(q.out)
			run = append(run[:j], run[j+1:]...)
			j--
			break
		}
	}
	return run
}

// pairSoftplusSigmoid merges op, a softplus or a sigmoid, into an earlier
// op of run computing the other of the two from the same operand, and
// reports whether it did. The earlier op then writes both buffers; nothing
// between the two reads op's buffer, since op had not run yet.
func pairSoftplusSigmoid(run []fop, op *fop) bool {
	want := "sigmoid"
	if op.sym == "sigmoid" {
		want = "softplus"
	}
	for k := range run {
		p := &run[k]
		if p.code != fUnary || p.sym != want || p.a != op.a || p.n != op.n {
			continue
		}
		p.code = fSoftplusSigmoid
		if op.sym == "sigmoid" {
			p.out2 = op.out
		} else {
			p.out, p.out2 = op.out, p.out
		}
		return true
	}
	return false
}

// markGradChecks lets the ops that write the gradient check it for
// non-finite values as they write it, so that LogDensityGrad need not scan
// it again. It marks them only when every gradient slot is written whole
// by a fused op of full (directly, or as a fused sum), and reports whether it did.
func (c *code) markGradChecks() bool {
	type at struct{ i, k int }
	writer := make(map[int]at)
	for i := range c.full {
		ins := &c.full[i]
		if ins.kind != kFused {
			// A later instruction writing a slot (a product accumulated
			// into it, see accumulateProducts) is not a fused op.
			delete(writer, ins.out)
			continue
		}
		for k := range ins.fz {
			op := &ins.fz[k]
			writer[op.out] = at{i, k}
			if op.code == fSoftplusSigmoid {
				writer[op.out2] = at{i, k}
			}
			if op.sum >= 0 {
				writer[op.sum] = at{i, k}
			}
			if op.paired {
				writer[op.pout] = at{i, k}
			}
		}
	}
	var marks []at
	for _, g := range c.gradSlots {
		if c.slotLen[g] == 0 {
			continue
		}
		w, ok := writer[g]
		if !ok {
			return false
		}
		op := &c.full[w.i].fz[w.k]
		whole := op.sum == g || (op.code == fSum && op.out == g) || op.n == c.slotLen[g]
		if !whole {
			return false
		}
		marks = append(marks, w)
	}
	for _, w := range marks {
		c.full[w.i].fz[w.k].check = true
	}
	return true
}

// fusedOuts appends the slots a kFused instruction writes.
func fusedOuts(dst []int, ins *instr) []int {
	for k := range ins.fz {
		op := &ins.fz[k]
		dst = append(dst, op.out)
		if op.code == fSoftplusSigmoid {
			dst = append(dst, op.out2)
		}
		if op.paired {
			dst = append(dst, op.pout)
		}
	}
	return dst
}
