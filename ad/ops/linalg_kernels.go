package ops

import "math"

// The kernels below work on small dense row-major matrices. They are written
// out rather than calling gonum/lapack because for the 2–50 dimensional
// matrices of trj's models the call and bookkeeping overhead of the general
// routines dominates, and kernels must not allocate.

// choleskyInto writes into l (n×n) the lower Cholesky factor of the symmetric
// part of a, with zeros above the diagonal.
func choleskyInto(l, a []float64, n int) error {
	for j := 0; j < n; j++ {
		lj := l[j*n : j*n+n]
		s := a[j*n+j]
		for k := 0; k < j; k++ {
			s -= lj[k] * lj[k]
		}
		if !(s > 0) || math.IsInf(s, 1) {
			return ErrNotPositiveDefinite
		}
		d := math.Sqrt(s)
		lj[j] = d
		for k := j + 1; k < n; k++ {
			lj[k] = 0
		}
		for i := j + 1; i < n; i++ {
			li := l[i*n : i*n+n]
			s := 0.5 * (a[i*n+j] + a[j*n+i])
			for k := 0; k < j; k++ {
				s -= li[k] * lj[k]
			}
			li[j] = s / d
		}
	}
	return nil
}

// choleskyGradInto computes Ā, the gradient with respect to A of a function
// of L = chol(sym(A)), from L and L̄ (Murray 2016, "Differentiation of the
// Cholesky decomposition"): G = L⁻ᵀ Φ(Lᵀ L̄) L⁻¹ with Φ taking the lower
// triangle and halving the diagonal, and Ā = (G+Gᵀ)/2 because only the
// symmetric part of A is used. p is n×n scratch. Entries of L̄ above the
// diagonal are ignored: they never enter Φ(Lᵀ L̄).
//
// Each element is a chain of products added or subtracted one after
// another in a register. The loops put independent chains side by side
// (four elements of a row of Φ(Lᵀ L̄) and of G, the rows of one column of
// P L⁻¹), so that the processor overlaps them, divisions included; at the
// sizes of trj's models, waiting for each addition (or for a row stored
// and loaded again) is what costs.
func choleskyGradInto(abar, l, lbar, p []float64, n int) error {
	nn := n * n
	abar, l, lbar, p = abar[:nn], l[:nn], lbar[:nn], p[:nn]
	for i := 0; i < n; i++ {
		if !(l[i*n+i] > 0) {
			return ErrNotPositiveDefinite
		}
	}
	// P = Φ(Lᵀ L̄), lower triangular: P_ij = Σ_{k≥i} L_ki L̄_kj for j ≤ i,
	// in order of k, terms with L_ki = 0 skipped; zero above the diagonal.
	for i := 0; i < n; i++ {
		pi := p[i*n : i*n+n]
		j := 0
		for ; j+4 <= i+1; j += 4 {
			var s0, s1, s2, s3 float64
			for k := i; k < n; k++ {
				if lki := l[k*n+i]; lki != 0 {
					lb := lbar[k*n+j : k*n+j+4]
					s0 += lki * lb[0]
					s1 += lki * lb[1]
					s2 += lki * lb[2]
					s3 += lki * lb[3]
				}
			}
			pi[j], pi[j+1], pi[j+2], pi[j+3] = s0, s1, s2, s3
		}
		for ; j <= i; j++ {
			var s float64
			for k := i; k < n; k++ {
				if lki := l[k*n+i]; lki != 0 {
					s += lki * lbar[k*n+j]
				}
			}
			pi[j] = s
		}
		pi[i] *= 0.5
		clear(pi[i+1:])
	}
	// X = P L⁻¹ in place, lower triangular like P: row r solves x L = p_r,
	// x_j = (p_rj − Σ_{k=r..j+1} x_k L_kj)/L_jj from the last column down,
	// terms with x_k = 0 skipped. The rows of a column are independent.
	for j := n - 1; j >= 0; j-- {
		d := l[j*n+j]
		for r := j; r < n; r++ {
			x := p[r*n : r*n+r+1]
			s := x[j]
			for k := r; k > j; k-- {
				if xk := x[k]; xk != 0 {
					s -= xk * l[k*n+j]
				}
			}
			x[j] = s / d
		}
	}
	// G = L⁻ᵀ X in place, from the last row up:
	// G_i = (X_i − Σ_{k>i} L_ki G_k)·(1/L_ii), the sum in order of k, terms
	// with L_ki = 0 skipped.
	for i := n - 1; i >= 0; i-- {
		gi := p[i*n : i*n+n]
		r := 1 / l[i*n+i]
		j := 0
		for ; j+4 <= n; j += 4 {
			s0, s1, s2, s3 := gi[j], gi[j+1], gi[j+2], gi[j+3]
			for k := i + 1; k < n; k++ {
				if lki := l[k*n+i]; lki != 0 {
					gk := p[k*n+j : k*n+j+4]
					s0 -= lki * gk[0]
					s1 -= lki * gk[1]
					s2 -= lki * gk[2]
					s3 -= lki * gk[3]
				}
			}
			gi[j], gi[j+1], gi[j+2], gi[j+3] = s0*r, s1*r, s2*r, s3*r
		}
		for ; j < n; j++ {
			s := gi[j]
			for k := i + 1; k < n; k++ {
				if lki := l[k*n+i]; lki != 0 {
					s -= lki * p[k*n+j]
				}
			}
			gi[j] = s * r
		}
	}
	// Ā = (G+Gᵀ)/2.
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			s := 0.5 * (p[i*n+j] + p[j*n+i])
			abar[i*n+j], abar[j*n+i] = s, s
		}
	}
	return nil
}

// logDetFromCholesky returns log det A = 2 Σ log L_ii.
func logDetFromCholesky(l []float64, n int) float64 {
	var s float64
	for i := 0; i < n; i++ {
		s += math.Log(l[i*n+i])
	}
	return 2 * s
}

// triOuterInto writes −mask(u vᵀ) into dst (n×n), where u and v are n×m and
// mask keeps the lower (or upper) triangle: the gradient of a triangular
// solve with respect to its matrix. Each element is −Σ_k u_ik v_jk summed
// in order of k; four elements of a row are summed side by side, so that
// their additions, each waiting for the one before, overlap.
func triOuterInto(dst, u, v []float64, n, m int, lower bool) {
	u, v, dst = u[:n*m], v[:n*m], dst[:n*n]
	for i := 0; i < n; i++ {
		ui := u[i*m : i*m+m]
		di := dst[i*n : i*n+n]
		lo, hi := i, n // columns kept
		if lower {
			lo, hi = 0, i+1
		}
		clear(di[:lo])
		clear(di[hi:])
		j := lo
		for ; j+4 <= hi; j += 4 {
			v0, v1, v2, v3 := v[j*m:j*m+m], v[(j+1)*m:(j+1)*m+m], v[(j+2)*m:(j+2)*m+m], v[(j+3)*m:(j+3)*m+m]
			var s0, s1, s2, s3 float64
			for k, x := range ui {
				s0 += x * v0[k]
				s1 += x * v1[k]
				s2 += x * v2[k]
				s3 += x * v3[k]
			}
			di[j], di[j+1], di[j+2], di[j+3] = -s0, -s1, -s2, -s3
		}
		for ; j+2 <= hi; j += 2 {
			v0, v1 := v[j*m:j*m+m], v[(j+1)*m:(j+1)*m+m]
			var s0, s1 float64
			for k, x := range ui {
				s0 += x * v0[k]
				s1 += x * v1[k]
			}
			di[j], di[j+1] = -s0, -s1
		}
		if j < hi {
			di[j] = -dot(ui, v[j*m:j*m+m])
		}
	}
}

// dot returns Σ x_i y_i; len(y) must be at least len(x).
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s float64
	for i, xi := range x {
		s += xi * y[i]
	}
	return s
}
