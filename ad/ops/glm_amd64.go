//go:build !purego

package ops

import (
	"math"

	"github.com/trjgo/trj/internal/cpufeat"
)

// The AVX2/FMA row kernels of glm_amd64.s. They read x, beta and r and
// write out or g only within the lengths that dotRows and axpyRows check.

//go:noescape
func dotRows4AVX2(x *float64, d int, beta *float64, out *float64, n int)

//go:noescape
func axpyRows4AVX2(x *float64, d int, r *float64, grad *float64, n int)

// bernoulliLogit4AVX2 continues bernoulliLogitRowsGo(eta, y, s, prod)
// over the rows 0…4n−1, four at a time, with the same result bit for bit;
// ok is false if some y_i is neither 0 nor 1.
//
//go:noescape
func bernoulliLogit4AVX2(eta *float64, y *float64, n int, s, prod float64) (sum, product float64, ok bool)

// poissonLog4AVX2 continues poissonLogRowsGo(eta, y, s) over the rows
// 0…4n−1, four at a time, with the same result bit for bit, as long as
// every η_i of a group of four is in (−700, 700); it stops before the
// first group that is not and returns the number of groups done.
//
//go:noescape
func poissonLog4AVX2(eta *float64, y *float64, n int, s float64) (sum float64, done int)

// haveAVX2FMA reports whether the row kernels of the assembly file can run.
var haveAVX2FMA = cpufeat.AVX2FMA()

// dotRows sets out[i] = x[i*d:(i+1)*d]·beta for every i < len(out).
// The caller guarantees len(x) ≥ len(out)·d, len(beta) ≥ d ≥ 1.
func dotRows(x []float64, d int, beta, out []float64) {
	byFours(len(out), func(g int) { dotRows4AVX2(&x[0], d, &beta[0], &out[0], g) },
		func(done int) { dotRowsGo(x[done*d:], d, beta, out[done:]) })
}

// axpyRows adds Σ_i r[i]·x[i*d:(i+1)*d] to g[:d] over every i < len(r).
// The caller guarantees len(x) ≥ len(r)·d, len(g) ≥ d ≥ 1.
func axpyRows(x []float64, d int, r, g []float64) {
	byFours(len(r), func(n int) { axpyRows4AVX2(&x[0], d, &r[0], &g[0], n) },
		func(done int) { axpyRowsGo(x[done*d:], d, r[done:], g) })
}

// byFours runs a row kernel over rows rows: asm over the first groups
// whole groups of four when the assembly kernels can run, and portable over
// the rows from done on that asm left.
func byFours(rows int, asm func(groups int), portable func(done int)) {
	done := 0
	if haveAVX2FMA && rows >= 4 {
		g := rows / 4
		asm(g)
		done = 4 * g
	}
	if done < rows {
		portable(done)
	}
}

// bernoulliLogitBlock returns Σ y_i η_i − log(1 + e^η_i) over a block of
// at most glmBlock rows and replaces each η_i by y_i − σ(η_i), with the
// same result as bernoulliLogitBlockGo bit for bit (so samplers' draws do
// not depend on the kernel): the vector kernel does four rows at a time,
// bernoulliLogitRowsGo the last len(eta) mod 4.
func bernoulliLogitBlock(eta, y []float64) (float64, error) {
	if !haveAVX2FMA || len(eta) < 4 {
		return bernoulliLogitBlockGo(eta, y)
	}
	y = y[:len(eta)]
	g := len(eta) / 4
	s, prod, ok := bernoulliLogit4AVX2(&eta[0], &y[0], g, 0, 1)
	if !ok {
		return 0, ErrDomain
	}
	s, prod, err := bernoulliLogitRowsGo(eta[4*g:], y[4*g:], s, prod)
	if err != nil {
		return 0, err
	}
	return s - math.Log(prod), nil
}

// poissonLogBlock returns Σ y_i η_i − e^η_i and replaces each η_i by
// y_i − e^η_i, with the same result as poissonLogBlockGo bit for bit: the
// vector kernel does four rows at a time, and poissonLogRowsGo the groups
// of four with an η outside (−700, 700) (or NaN) and the last
// len(eta) mod 4 rows.
func poissonLogBlock(eta, y []float64) float64 {
	if !haveAVX2FMA {
		return poissonLogBlockGo(eta, y)
	}
	y = y[:len(eta)]
	var s float64
	i := 0
	for len(eta)-i >= 4 {
		var done int
		s, done = poissonLog4AVX2(&eta[i], &y[i], (len(eta)-i)/4, s)
		i += 4 * done
		if len(eta)-i >= 4 {
			s = poissonLogRowsGo(eta[i:i+4], y[i:i+4], s)
			i += 4
		}
	}
	return poissonLogRowsGo(eta[i:], y[i:], s)
}
