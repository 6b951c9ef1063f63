package ops

import "math"

// The portable row kernels of the fused GLM ops: dotRows and axpyRows use
// them where the assembly ones are missing, and for the last rows of a
// block. Four rows at a time, so that each load of beta or of g serves four
// rows and the four sums run in parallel.

// rows4 returns the rows i to i+3 of x, rows of d values.
func rows4(x []float64, i, d int) (r0, r1, r2, r3 []float64) {
	return x[i*d : i*d+d], x[(i+1)*d : (i+1)*d+d], x[(i+2)*d : (i+2)*d+d], x[(i+3)*d : (i+3)*d+d]
}

// dotRowsGo sets out[i] = x[i*d:(i+1)*d]·beta for every i < len(out).
func dotRowsGo(x []float64, d int, beta, out []float64) {
	beta = beta[:d]
	i := 0
	for ; i+4 <= len(out); i += 4 {
		r0, r1, r2, r3 := rows4(x, i, d)
		var s0, s1, s2, s3 float64
		for j, b := range beta {
			s0 += r0[j] * b
			s1 += r1[j] * b
			s2 += r2[j] * b
			s3 += r3[j] * b
		}
		out[i], out[i+1], out[i+2], out[i+3] = s0, s1, s2, s3
	}
	for ; i < len(out); i++ {
		row := x[i*d : i*d+d]
		var s float64
		for j, b := range beta {
			s += row[j] * b
		}
		out[i] = s
	}
}

// axpyRowsGo adds Σ_i r[i]·x[i*d:(i+1)*d] to g[:d] over every i < len(r).
func axpyRowsGo(x []float64, d int, r, g []float64) {
	g = g[:d]
	i := 0
	for ; i+4 <= len(r); i += 4 {
		r0, r1, r2, r3 := rows4(x, i, d)
		a0, a1, a2, a3 := r[i], r[i+1], r[i+2], r[i+3]
		for j := range g {
			g[j] += (a0*r0[j] + a1*r1[j]) + (a2*r2[j] + a3*r3[j])
		}
	}
	for ; i < len(r); i++ {
		row := x[i*d : i*d+d]
		a := r[i]
		for j := range g {
			g[j] += a * row[j]
		}
	}
}

// expTable holds 2^(j/64) for j = 0..63: fastExp's table, computed once at
// package initialisation and only read afterwards.
var expTable = func() (t [64]float64) {
	for j := range t {
		t[j] = math.Exp2(float64(j) / 64)
	}
	return t
}()

// Constants of fastExp: 64/ln2, ln2/64 split so that n·expL1 is exact for
// |n| < 2^20, and the shift that rounds to an integer.
const (
	expInvL  = 64 / math.Ln2
	expL1    = 0x1.62e42fefa0000p-7
	expL2    = 0x1.cf79abc9e3b3ap-46
	expShift = 0x1.8p52
)

// fastExp is e^x to within 1e-15 relative (a few units in the last place), several times
// faster than math.Exp in the GLM loops: x = (64k + j)·ln2/64 + r with
// |r| ≤ ln2/128, e^x = 2^k · 2^(j/64) · e^r, and e^r from its Taylor
// polynomial of degree 5 (truncation error below 4e-17). Outside
// (−708, 709), and for NaN, it defers to math.Exp.
func fastExp(x float64) float64 {
	if !(x > -708 && x < 709) {
		return math.Exp(x)
	}
	nf := (x*expInvL + expShift) - expShift // x·64/ln2 rounded to an integer
	n := int64(nf)
	r := (x - nf*expL1) - nf*expL2
	r2 := r * r
	p := 1 + r + r2*(0.5+r*(1.0/6)) + r2*r2*(1.0/24+r*(1.0/120))
	scale := math.Float64frombits(uint64(n>>6+1023) << 52)
	return expTable[n&63] * p * scale
}
