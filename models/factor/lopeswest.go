package factor

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trjgo/trj/internal/scalar"
	"github.com/trjgo/trj/kernels"
)

// LopesWestProposal is the independence proposal of Lopes and West (2004)
// for factor analysis, as in the paper's §4.3:
// q_k(θ_k) = N(β; μ_β, 2B) × Π_i IG(Λ_ii; 18, 18·υ_i²), with μ_β and B the
// mean and covariance of the loadings in pilot draws and υ_i² an estimate of
// the marginal mode of Λ_ii.
type LopesWestProposal struct {
	dim       int
	beta      []int
	lambda    []int
	logLambda bool
	mean      []float64
	chol      []float64 // row-major lower factor of 2B
	logDetC   float64   // log|det chol|
	shape     float64
	scale     []float64 // IG scale 18·υ_i²
	eps, diff []float64
}

// LopesWestShape is the inverse-gamma shape of the Lopes–West proposal for
// the idiosyncratic variances.
const LopesWestShape = 18.0

// NewLopesWestProposal fits the proposal to pilot draws of one model (each
// draws[i] of the model's dimension). beta and lambda list the coordinates
// of θ holding the loadings and the idiosyncratic variances Λ_ii; other
// coordinates are not allowed. If logLambda, θ holds log Λ_ii and the
// density includes the Jacobian of that change of variables. υ_i² is the
// mode of a Gaussian kernel density estimate of Λ_ii's draws.
func NewLopesWestProposal(draws [][]float64, beta, lambda []int, logLambda bool) (*LopesWestProposal, error) {
	if len(draws) < 2 {
		return nil, fmt.Errorf("kernels: %d pilot draws, need at least 2", len(draws))
	}
	dim := len(draws[0])
	if len(beta)+len(lambda) != dim {
		return nil, fmt.Errorf("%w: %d loadings and %d variances for dimension %d", kernels.ErrDimension, len(beta), len(lambda), dim)
	}
	seen := make([]bool, dim)
	for _, i := range append(append([]int(nil), beta...), lambda...) {
		if i < 0 || i >= dim || seen[i] {
			return nil, fmt.Errorf("kernels: coordinate %d repeated or out of range [0, %d)", i, dim)
		}
		seen[i] = true
	}
	for i, d := range draws {
		if len(d) != dim {
			return nil, fmt.Errorf("%w: draw %d has length %d, want %d", kernels.ErrDimension, i, len(d), dim)
		}
		for _, v := range d {
			if !scalar.Finite(v) {
				return nil, fmt.Errorf("kernels: draw %d is not finite", i)
			}
		}
	}
	nb := len(beta)
	q := &LopesWestProposal{
		dim: dim, beta: append([]int(nil), beta...), lambda: append([]int(nil), lambda...),
		logLambda: logLambda, mean: make([]float64, nb), chol: make([]float64, nb*nb),
		shape: LopesWestShape, scale: make([]float64, len(lambda)),
		eps: make([]float64, nb), diff: make([]float64, nb),
	}
	if nb > 0 {
		x := mat.NewDense(len(draws), nb, nil)
		for i, d := range draws {
			for j, c := range beta {
				x.Set(i, j, d[c])
			}
		}
		for j := 0; j < nb; j++ {
			q.mean[j] = stat.Mean(mat.Col(nil, j, x), nil)
		}
		var cov mat.SymDense
		stat.CovarianceMatrix(&cov, x, nil)
		cov.ScaleSym(2, &cov)
		var ch mat.Cholesky
		if !ch.Factorize(&cov) {
			return nil, fmt.Errorf("kernels: covariance of the loadings in the pilot draws is not positive definite")
		}
		var l mat.TriDense
		ch.LTo(&l)
		for i := 0; i < nb; i++ {
			for j := 0; j <= i; j++ {
				q.chol[i*nb+j] = l.At(i, j)
			}
			q.logDetC += math.Log(l.At(i, i))
		}
	}
	vals := make([]float64, len(draws))
	for j, c := range lambda {
		for i, d := range draws {
			vals[i] = d[c]
			if logLambda {
				vals[i] = math.Exp(d[c])
			}
			if !(vals[i] > 0) {
				return nil, fmt.Errorf("kernels: draw %d has variance %v ≤ 0 at coordinate %d", i, vals[i], c)
			}
		}
		q.scale[j] = LopesWestShape * kdeMode(vals)
	}
	return q, nil
}

// kdeMode returns the mode of a Gaussian kernel density estimate with
// Silverman's bandwidth, located on a grid over the central 99% of x and
// refined by golden-section search.
func kdeMode(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	n := float64(len(s))
	sd := stat.StdDev(s, nil)
	iqr := stat.Quantile(0.75, stat.Empirical, s, nil) - stat.Quantile(0.25, stat.Empirical, s, nil)
	h := 0.9 * math.Min(sd, iqr/1.34) * math.Pow(n, -0.2)
	if !(h > 0) {
		return stat.Mean(s, nil)
	}
	dens := func(t float64) float64 {
		v := 0.0
		// Only points within 8 bandwidths matter.
		lo := sort.SearchFloat64s(s, t-8*h)
		for _, xi := range s[lo:] {
			if xi > t+8*h {
				break
			}
			d := (t - xi) / h
			v += math.Exp(-0.5 * d * d)
		}
		return v
	}
	a := stat.Quantile(0.005, stat.Empirical, s, nil)
	b := stat.Quantile(0.995, stat.Empirical, s, nil)
	const grid = 256
	best, bestV := a, -1.0
	step := (b - a) / grid
	for i := 0; i <= grid; i++ {
		t := a + float64(i)*step
		if v := dens(t); v > bestV {
			best, bestV = t, v
		}
	}
	lo, hi := best-step, best+step
	const g = 0.6180339887498949
	for it := 0; it < 40; it++ {
		c, d := hi-g*(hi-lo), lo+g*(hi-lo)
		if dens(c) > dens(d) {
			hi = d
		} else {
			lo = c
		}
	}
	return 0.5 * (lo + hi)
}

// Dim returns the model dimension.
func (q *LopesWestProposal) Dim() int { return q.dim }

// Scale returns the inverse-gamma scales 18·υ_i², one per variance.
func (q *LopesWestProposal) Scale() []float64 { return append([]float64(nil), q.scale...) }

// Mean returns μ_β.
func (q *LopesWestProposal) Mean() []float64 { return append([]float64(nil), q.mean...) }

// LogDensity returns log q(θ).
func (q *LopesWestProposal) LogDensity(theta []float64) (float64, error) {
	if len(theta) != q.dim {
		return math.Inf(-1), fmt.Errorf("%w: len(theta)=%d, want %d", kernels.ErrDimension, len(theta), q.dim)
	}
	nb := len(q.beta)
	lp := -q.logDetC
	for i := 0; i < nb; i++ {
		s := theta[q.beta[i]] - q.mean[i]
		for j := 0; j < i; j++ {
			s -= q.chol[i*nb+j] * q.diff[j]
		}
		q.diff[i] = s / q.chol[i*nb+i]
		lp += stdNormalLogProb(q.diff[i])
	}
	lgA, _ := math.Lgamma(q.shape)
	for j, c := range q.lambda {
		v := theta[c]
		logV := math.Log(v)
		if q.logLambda {
			logV = v
			v = math.Exp(v)
		}
		if !(v > 0) || math.IsInf(v, 0) {
			return math.Inf(-1), fmt.Errorf("kernels: variance %v outside (0, ∞)", v)
		}
		b := q.scale[j]
		lp += q.shape*math.Log(b) - lgA - (q.shape+1)*logV - b/v
		if q.logLambda {
			lp += logV // dΛ/d log Λ = Λ
		}
	}
	if !scalar.Finite(lp) {
		return math.Inf(-1), fmt.Errorf("kernels: non-finite proposal density")
	}
	return lp, nil
}

// Sample draws θ ~ q.
func (q *LopesWestProposal) Sample(rng *rand.Rand, theta []float64) error {
	if len(theta) != q.dim {
		return fmt.Errorf("%w: len(theta)=%d, want %d", kernels.ErrDimension, len(theta), q.dim)
	}
	nb := len(q.beta)
	for i := range q.eps {
		q.eps[i] = rng.NormFloat64()
	}
	for i := 0; i < nb; i++ {
		s := q.mean[i]
		for j := 0; j <= i; j++ {
			s += q.chol[i*nb+j] * q.eps[j]
		}
		theta[q.beta[i]] = s
	}
	for j, c := range q.lambda {
		// Λ = b / G with G ~ Gamma(a, 1) is IG(a, b).
		v := q.scale[j] / distuv.Gamma{Alpha: q.shape, Beta: 1, Src: rng}.Rand()
		if q.logLambda {
			v = math.Log(v)
		}
		theta[c] = v
	}
	return nil
}

func stdNormalLogProb(x float64) float64 { return distuv.UnitNormal.LogProb(x) }

// lopesWest is the Lopes–West independence proposal on the unconstrained
// scale: the Gaussian part is on the loadings themselves (β_jj, not its
// log), as in the paper, so a draw with a non-positive β_jj lies outside
// the support and is rejected.
type lopesWest struct {
	q   *LopesWestProposal
	lay Layout
	c   []float64
}

func newLopesWest(draws [][]float64, lay Layout) (*lopesWest, error) {
	conv := make([][]float64, len(draws))
	for i, d := range draws {
		c := append([]float64(nil), d...)
		for _, pos := range lay.LogDiag {
			c[pos] = math.Exp(c[pos])
		}
		conv[i] = c
	}
	q, err := NewLopesWestProposal(conv, lay.BetaIndices(), lay.LambdaIndices(), true)
	if err != nil {
		return nil, err
	}
	return &lopesWest{q: q, lay: lay, c: make([]float64, lay.Dim())}, nil
}

func (l *lopesWest) Dim() int { return l.lay.Dim() }

func (l *lopesWest) LogDensity(u []float64) (float64, error) {
	if len(u) != len(l.c) {
		return math.Inf(-1), fmt.Errorf("factor: point of length %d, want %d", len(u), len(l.c))
	}
	copy(l.c, u)
	jac := 0.0
	for _, pos := range l.lay.LogDiag {
		l.c[pos] = math.Exp(u[pos])
		jac += u[pos]
	}
	lq, err := l.q.LogDensity(l.c)
	return lq + jac, err
}

var errOutsideSupport = errors.New("factor: Lopes–West draw outside the support (β_jj ≤ 0)")

func (l *lopesWest) Sample(rng *rand.Rand, u []float64) error {
	if err := l.q.Sample(rng, l.c); err != nil {
		return err
	}
	for _, pos := range l.lay.LogDiag {
		if !(l.c[pos] > 0) {
			return errOutsideSupport
		}
	}
	copy(u, l.c)
	for _, pos := range l.lay.LogDiag {
		u[pos] = math.Log(l.c[pos])
	}
	return nil
}
