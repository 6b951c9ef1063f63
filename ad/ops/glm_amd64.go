//go:build !purego

package ops

import "github.com/trjgo/trj/internal/cpufeat"

// The AVX2/FMA row kernels of glm_amd64.s. They read x, beta and r and
// write out or g only within the lengths that dotRows and axpyRows check.

//go:noescape
func dotRows4AVX2(x *float64, d int, beta *float64, out *float64, n int)

//go:noescape
func axpyRows4AVX2(x *float64, d int, r *float64, grad *float64, n int)

// haveAVX2FMA reports whether the row kernels of the assembly file can run.
var haveAVX2FMA = cpufeat.AVX2FMA()

// dotRows sets out[i] = x[i*d:(i+1)*d]·beta for every i < len(out).
// The caller guarantees len(x) ≥ len(out)·d, len(beta) ≥ d ≥ 1.
func dotRows(x []float64, d int, beta, out []float64) {
	done := 0
	if haveAVX2FMA && len(out) >= 4 {
		g := len(out) / 4
		dotRows4AVX2(&x[0], d, &beta[0], &out[0], g)
		done = 4 * g
	}
	if done < len(out) {
		dotRowsGo(x[done*d:], d, beta, out[done:])
	}
}

// axpyRows adds Σ_i r[i]·x[i*d:(i+1)*d] to g[:d] over every i < len(r).
// The caller guarantees len(x) ≥ len(r)·d, len(g) ≥ d ≥ 1.
func axpyRows(x []float64, d int, r, g []float64) {
	done := 0
	if haveAVX2FMA && len(r) >= 4 {
		n := len(r) / 4
		axpyRows4AVX2(&x[0], d, &r[0], &g[0], n)
		done = 4 * n
	}
	if done < len(r) {
		axpyRowsGo(x[done*d:], d, r[done:], g)
	}
}
