package posteriordb

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl"
)

// linearRegression is the one builder behind posteriordb's linear
// regressions (the earnings, kidiq, mesquite, nes and sblri posteriors):
//
//	y ~ normal(Xβ, σ),  σ > 0,
//
// with X the design whose columns are given (the intercept's column of ones
// included) and y the response, both after the program's transformed data.
// A nil prior is Stan's flat (improper) prior: β on the reals, σ on the
// positive reals. The parameters are named as Stan's programs name them,
// beta (one per column) and sigma, so the draws match posteriordb's
// reference columns beta[1], …, sigma.
//
// The likelihood is one fused ops.NormalIDGLM: value and gradient in one
// pass over X.
type linearRegression struct {
	d          *dataSet // for errors naming the data file
	y          []float64
	cols       [][]float64
	betaPrior  ppl.Distribution
	sigmaPrior ppl.Distribution
}

// model checks that the posterior is proper and builds it. With a flat
// prior on β and on σ the posterior is proper exactly when X has full
// column rank and N > D + 1 (the marginal of σ is then proportional to
// σ^{−(N−D)} exp(−RSS/2σ²) with RSS > 0); a collinear design or too few
// observations is an error, not a sampler wandering off to infinity.
func (r linearRegression) model() (*ppl.GraphModel, error) {
	n, k := len(r.y), len(r.cols)
	x := mat.NewDense(n, k, nil)
	for j, c := range r.cols {
		x.SetCol(j, c)
	}
	if r.betaPrior == nil {
		if n <= k+1 {
			return nil, r.d.errorf("%d observations for %d coefficients: with flat priors the posterior is proper only when N > D + 1", n, k)
		}
		var svd mat.SVD
		if !svd.Factorize(x, mat.SVDNone) {
			return nil, r.d.errorf("the design matrix has no singular value decomposition")
		}
		s := svd.Values(nil)
		if s[k-1] <= 1e-10*s[0] {
			return nil, r.d.errorf("the %d design columns are collinear (condition number %.3g): with flat priors the posterior is improper", k, s[0]/s[k-1])
		}
	}
	b := ppl.NewBuilder()
	beta := b.Real("beta", k)
	sigma := b.Positive("sigma")
	if r.betaPrior != nil {
		b.Sample(r.betaPrior, beta)
	}
	if r.sigmaPrior != nil {
		b.Sample(r.sigmaPrior, sigma)
	}
	b.AddLogDensity(b.Check(ops.NormalIDGLM(b.DataMatrix("X", x), beta, b.Data("y", r.y), sigma)))
	return b.Model()
}

// The transforms below are the programs' transformed data, column by
// column. The loaders have checked what they need (positive values under a
// log, a non-constant column to standardise).

// ones is the intercept's column.
func ones(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

// apply returns f applied to each element of v.
func apply(v []float64, f func(float64) float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = f(x)
	}
	return out
}

// logs is the elementwise natural logarithm.
func logs(v []float64) []float64 { return apply(v, math.Log) }

// times is the elementwise product of vectors of equal length.
func times(v []float64, more ...[]float64) []float64 {
	out := append([]float64(nil), v...)
	for _, w := range more {
		for i := range out {
			out[i] *= w[i]
		}
	}
	return out
}

// over is the elementwise quotient v / w.
func over(v, w []float64) []float64 {
	out := make([]float64, len(v))
	for i := range v {
		out[i] = v[i] / w[i]
	}
	return out
}

// shift returns v − c.
func shift(v []float64, c float64) []float64 {
	return apply(v, func(x float64) float64 { return x - c })
}

// meanSD returns the mean and the sample standard deviation (divisor
// N − 1, as Stan's sd).
func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	if len(v) < 2 {
		return mean, 0
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}

// centred returns v minus its mean.
func centred(v []float64) []float64 {
	m, _ := meanSD(v)
	return shift(v, m)
}

// indicator is 1 where v equals level and 0 elsewhere (a factor's dummy
// column).
func indicator(v []float64, level float64) []float64 {
	return apply(v, func(x float64) float64 {
		if x == level {
			return 1
		}
		return 0
	})
}

// positive is vector with every element checked to be positive, as a
// logarithm of it requires.
func (l *loader) positive(name string, n int) []float64 {
	v := l.vector(name, n)
	for i, x := range v {
		if !(x > 0) {
			l.keep(l.d.errorf("field %q: element %d is %v; the model takes its logarithm, so it must be positive", name, i+1, x))
			return nil
		}
	}
	return v
}

// integers is vector with every element checked to be an integer (Stan's
// array[N] int).
func (l *loader) integers(name string, n int) []float64 {
	v := l.vector(name, n)
	for i, x := range v {
		if x != math.Trunc(x) {
			l.keep(l.d.errorf("field %q: element %d is %v, want an integer", name, i+1, x))
			return nil
		}
	}
	return v
}

// standardised is vector scaled to (v − mean)/(scale·sd), checked to be
// non-constant.
func (l *loader) standardised(name string, n int, scale float64) []float64 {
	v := l.vector(name, n)
	if l.err != nil {
		return nil
	}
	m, sd := meanSD(v)
	if !(sd > 0) {
		l.keep(l.d.errorf("field %q is constant: it cannot be standardised", name))
		return nil
	}
	return apply(v, func(x float64) float64 { return (x - m) / (scale * sd) })
}

// regression returns the flat-prior linear regression of y on an intercept
// and the columns, once the loader has read the data without error.
func (l *loader) regression(y []float64, cols ...[]float64) (*ppl.GraphModel, error) {
	return l.regressionWith(nil, y, cols...)
}

// regressionWith is regression with the prior sigmaPrior on σ (nil for
// flat).
func (l *loader) regressionWith(sigmaPrior ppl.Distribution, y []float64, cols ...[]float64) (*ppl.GraphModel, error) {
	if l.err != nil {
		return nil, l.err
	}
	return linearRegression{d: l.d, y: y, cols: append([][]float64{ones(len(y))}, cols...), sigmaPrior: sigmaPrior}.model()
}
