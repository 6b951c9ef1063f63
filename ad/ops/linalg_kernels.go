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
// diagonal are ignored: they never enter Φ(Lᵀ L̄). Every inner loop runs
// along rows, so memory access is contiguous.
func choleskyGradInto(abar, l, lbar, p []float64, n int) error {
	for i := 0; i < n; i++ {
		if !(l[i*n+i] > 0) {
			return ErrNotPositiveDefinite
		}
	}
	// P = Φ(Lᵀ L̄), lower triangular: P_ij = Σ_{k≥i} L_ki L̄_kj for j ≤ i,
	// accumulated as P_i,0:i+1 += L_ki · L̄_k,0:i+1.
	for i := range p[:n*n] {
		p[i] = 0
	}
	for k := 0; k < n; k++ {
		lk, lbk := l[k*n:k*n+k+1], lbar[k*n:k*n+k+1]
		for i, lki := range lk {
			if lki == 0 {
				continue
			}
			axpy(p[i*n:i*n+i+1], lki, lbk[:i+1])
		}
	}
	for i := 0; i < n; i++ {
		p[i*n+i] *= 0.5
	}
	// X = P L⁻¹ in place, row by row: x L = p, solved for x_j from the last
	// column down, eliminating x_j from the earlier columns. X is lower
	// triangular, like P.
	for r := 0; r < n; r++ {
		x := p[r*n : r*n+r+1]
		for j := r; j >= 0; j-- {
			xj := x[j] / l[j*n+j]
			x[j] = xj
			if xj != 0 {
				axpy(x[:j], -xj, l[j*n:j*n+j])
			}
		}
	}
	// G = L⁻ᵀ X in place, from the last row up: G_i = (X_i − Σ_{k>i} L_ki G_k)/L_ii.
	for i := n - 1; i >= 0; i-- {
		gi := p[i*n : i*n+n]
		for k := i + 1; k < n; k++ {
			if lki := l[k*n+i]; lki != 0 {
				axpy(gi, -lki, p[k*n:k*n+n])
			}
		}
		scale(gi, 1/l[i*n+i])
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
// solve with respect to its matrix.
func triOuterInto(dst, u, v []float64, n, m int, lower bool) {
	for i := 0; i < n; i++ {
		ui := u[i*m : i*m+m]
		di := dst[i*n : i*n+n]
		for j := range di {
			if (lower && j > i) || (!lower && j < i) {
				di[j] = 0
				continue
			}
			di[j] = -dot(ui, v[j*m:j*m+m])
		}
	}
}

// axpy computes y += a·x; len(x) must be at least len(y).
func axpy(y []float64, a float64, x []float64) {
	x = x[:len(y)]
	for i, xi := range x {
		y[i] += a * xi
	}
}

// scale computes x *= a.
func scale(x []float64, a float64) {
	for i := range x {
		x[i] *= a
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
