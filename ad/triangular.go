package ad

import (
	"errors"
	"math"
)

// TriangularSolve is the Kernel of a triangular solve: out = T⁻¹b, or T⁻ᵀb
// when Trans, where T is the lower (Lower) or upper triangle of the N×N
// matrix in[0] and b the N×M matrix in[1], all row-major; the other
// triangle of T is never read. out may alias b. A zero or non-finite
// diagonal element of T makes Eval return Singular (or a generic error when
// it is nil).
//
// ad/ops.SolveTriangular lowers to it.
type TriangularSolve struct {
	N, M         int
	Lower, Trans bool
	Singular     error
}

var (
	errTriangularSize     = errors.New("ad: TriangularSolve: buffer of the wrong length")
	errTriangularSingular = errors.New("ad: TriangularSolve: singular matrix")
)

// Eval implements Kernel.
func (k TriangularSolve) Eval(out []float64, in [][]float64) error {
	n, m := k.N, k.M
	if len(in) != 2 || len(in[0]) != n*n || len(in[1]) != n*m || len(out) != n*m {
		return errTriangularSize
	}
	if !solveTriangular(out, in[0], in[1], n, m, k.Lower, k.Trans) {
		if k.Singular != nil {
			return k.Singular
		}
		return errTriangularSingular
	}
	return nil
}

// solveTriangular solves T x = b for x, where T is the lower (lower) or
// upper triangle of t, transposed if trans; b and x are n×m and may alias.
// It reports false, leaving x unspecified, when a diagonal element of T is
// zero or not finite. Each element is b's minus the products with the
// elements already solved, divided by the diagonal element (with several
// right-hand sides, times its reciprocal).
func solveTriangular(x, t, b []float64, n, m int, lower, trans bool) bool {
	t = t[:n*n]
	x, b = x[:n*m], b[:n*m]
	// Coefficient (i, j) of the effective matrix is t[i*rs + j*cs].
	rs, cs := n, 1
	if trans {
		rs, cs = 1, n
	}
	if m == 1 {
		// One right-hand side: each unknown is b's element minus a dot
		// product, summed over four accumulators, and the diagonal is
		// checked as it is used.
		if lower != trans {
			for i := 0; i < n; i++ {
				v := b[i]
				if cs == 1 && i < 4 {
					// dotStrided's short sum, inline.
					var s float64
					for j, a := range t[i*n : i*n+i] {
						s += a * x[j]
					}
					v -= s
				} else {
					v -= dotStrided(t[i*rs:], x[:i], cs)
				}
				d := t[i*n+i]
				if d == 0 || d-d != 0 {
					return false
				}
				x[i] = v / d
			}
			return true
		}
		for i := n - 1; i >= 0; i-- {
			v := b[i] - dotStrided(t[min(i*rs+(i+1)*cs, n*n):], x[i+1:n], cs)
			d := t[i*n+i]
			if d == 0 || d-d != 0 {
				return false
			}
			x[i] = v / d
		}
		return true
	}
	for i := 0; i < n; i++ {
		if d := t[i*n+i]; d == 0 || math.IsNaN(d) || math.IsInf(d, 0) {
			return false
		}
	}
	copy(x, b)
	substituteRows(x, t, n, m, rs, cs, lower != trans)
	return true
}

// substituteRows solves for the rows of x in place, by forward
// substitution (each row from those above it) when the effective matrix is
// lower triangular, back substitution otherwise: row i becomes
// (row i − Σ_j T_ij·row j)/T_ii over the solved rows j, T_ij read at
// t[i·rs + j·cs]. Four columns at a time (then two) stay in registers
// while the rows j are subtracted in order, so each element is computed
// as one subtraction after another and a product with the reciprocal. The
// rows are one loop rather than a call each: at the sizes of trj's models
// the calls cost about as much as the arithmetic.
func substituteRows(x, t []float64, n, m, rs, cs int, forward bool) {
	for s := 0; s < n; s++ {
		i, lo, hi := s, 0, s
		if !forward {
			i, lo, hi = n-1-s, n-s, n
		}
		xi := x[i*m : i*m+m]
		r := 1 / t[i*n+i]
		k := 0
		for ; k+4 <= m; k += 4 {
			v0, v1, v2, v3 := xi[k], xi[k+1], xi[k+2], xi[k+3]
			for j := lo; j < hi; j++ {
				if c := t[i*rs+j*cs]; c != 0 {
					xj := (*[4]float64)(x[j*m+k : j*m+k+4])
					v0 -= c * xj[0]
					v1 -= c * xj[1]
					v2 -= c * xj[2]
					v3 -= c * xj[3]
				}
			}
			xi[k], xi[k+1], xi[k+2], xi[k+3] = v0*r, v1*r, v2*r, v3*r
		}
		if k+2 <= m {
			v0, v1 := xi[k], xi[k+1]
			for j := lo; j < hi; j++ {
				if c := t[i*rs+j*cs]; c != 0 {
					xj := (*[2]float64)(x[j*m+k : j*m+k+2])
					v0 -= c * xj[0]
					v1 -= c * xj[1]
				}
			}
			xi[k], xi[k+1] = v0*r, v1*r
			k += 2
		}
		for ; k < m; k++ {
			v := xi[k]
			for j := lo; j < hi; j++ {
				if c := t[i*rs+j*cs]; c != 0 {
					v -= c * x[j*m+k]
				}
			}
			xi[k] = v * r
		}
	}
}

// dot4 returns Σ_j a[j·stride]·x[j] over four accumulators.
func dot4(a, x []float64, stride int) float64 {
	var s0, s1, s2, s3 float64
	j := 0
	if stride == 1 {
		return dotRow(a, x)
	}
	for ; j+4 <= len(x); j += 4 {
		s0 += a[j*stride] * x[j]
		s1 += a[(j+1)*stride] * x[j+1]
		s2 += a[(j+2)*stride] * x[j+2]
		s3 += a[(j+3)*stride] * x[j+3]
	}
	for ; j < len(x); j++ {
		s0 += a[j*stride] * x[j]
	}
	return (s0 + s1) + (s2 + s3)
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

// dotStrided returns Σ_j a[j·stride]·x[j]: in order for fewer than four
// terms, else over four accumulators.
func dotStrided(a, x []float64, stride int) float64 {
	if len(x) >= 4 {
		return dot4(a, x, stride)
	}
	var s float64
	for j := range x {
		s += a[j*stride] * x[j]
	}
	return s
}
