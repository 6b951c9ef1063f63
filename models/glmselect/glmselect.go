package glmselect

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl"
)

// ErrData is returned (wrapped) for data a family cannot use.
var ErrData = errors.New("glmselect: bad data")

// Default prior settings; Settings documents each.
const (
	DefaultG           = 1.0
	DefaultA           = 0.01
	DefaultB           = 0.01
	DefaultPriorSD     = 2.5
	DefaultInterceptSD = 10.0
)

// Settings configures a selection space. The zero value (or nil) gives
// the documented defaults.
type Settings struct {
	// Names names the p candidate terms (default x1, …, xp).
	Names []string
	// Raw keeps the predictors as given. By default each column is
	// centred and scaled to unit standard deviation, so that one prior
	// scale suits every coefficient and the intercept is the mean linear
	// predictor; a constant column is then an error.
	Raw bool
	// ModelPrior is the prior over models (default ppl.BetaBinomial{1, 1},
	// every model size equally likely).
	ModelPrior ppl.ModelPrior
	// Cache bounds the models each chain keeps (default
	// ppl.DefaultMaskedModelCache, or ppl.DefaultModelCache with PerModel).
	Cache int
	// PerModel builds and compiles each model on its own when first
	// visited. By default the family's saturated model is compiled once
	// and every model is a masked view of it (ppl.NewMaskedSelectionSpace),
	// which gives the same log-densities without a compilation per model.
	PerModel bool

	// G, A and B are the Gaussian family's normal-inverse-gamma prior:
	// every coefficient, intercept included, β | σ² ~ N(0, σ² G), and
	// σ² ~ InverseGamma(A, B) (defaults G = 1, the unit-information scale
	// for standardised predictors, and A = B = 0.01, vague).
	G, A, B float64

	// PriorSD is the prior standard deviation of each coefficient of the
	// Logistic and Poisson families, β_j ~ N(0, PriorSD²) (default 2.5),
	// and InterceptSD the intercept's (default 10).
	PriorSD, InterceptSD float64

	// Predict, when set, holds new rows of predictors (the columns of X,
	// in data units) at which the space predicts: its quantities
	// (ppl.WithQuantities) are then mean[i], the mean response of new row
	// i (the inverse link of its linear predictor: the mean for Gaussian,
	// the probability for Logistic, the rate for Poisson), which a
	// selection run averages over the models.
	Predict mat.Matrix
}

func (s *Settings) withDefaults() Settings {
	var o Settings
	if s != nil {
		o = *s
	}
	if o.G == 0 {
		o.G = DefaultG
	}
	if o.A == 0 {
		o.A = DefaultA
	}
	if o.B == 0 {
		o.B = DefaultB
	}
	if o.PriorSD == 0 {
		o.PriorSD = DefaultPriorSD
	}
	if o.InterceptSD == 0 {
		o.InterceptSD = DefaultInterceptSD
	}
	if o.Cache == 0 {
		o.Cache = ppl.DefaultModelCache
		if !o.PerModel {
			o.Cache = ppl.DefaultMaskedModelCache
		}
	}
	if o.ModelPrior == nil {
		o.ModelPrior = ppl.BetaBinomial{A: 1, B: 1}
	}
	return o
}

func (s *Settings) validate() error {
	for _, v := range []struct {
		name string
		x    float64
	}{{"G", s.G}, {"A", s.A}, {"B", s.B}, {"PriorSD", s.PriorSD}, {"InterceptSD", s.InterceptSD}} {
		if !(v.x > 0) || math.IsInf(v.x, 1) {
			return fmt.Errorf("glmselect: prior setting %s = %v, want positive and finite", v.name, v.x)
		}
	}
	return nil
}

// design is the checked, optionally standardised predictors, by column.
type design struct {
	n, p  int
	cols  [][]float64
	y     []float64
	names []string
	// means and scales are the training columns' means and the scales
	// they were divided by (0 and 1 for Raw): cols[j] = (x_j − means[j]) /
	// scales[j], how new rows are put on the coefficients' scale.
	means, scales []float64
}

func newDesign(X mat.Matrix, y []float64, s *Settings) (*design, error) {
	if X == nil {
		return nil, fmt.Errorf("%w: nil predictor matrix", ErrData)
	}
	n, p := X.Dims()
	if p < 1 {
		return nil, fmt.Errorf("%w: no candidate predictors (p = 0)", ErrData)
	}
	if n < 2 {
		return nil, fmt.Errorf("%w: %d observations, want at least 2", ErrData, n)
	}
	if len(y) != n {
		return nil, fmt.Errorf("%w: %d responses for %d rows of predictors", ErrData, len(y), n)
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: response %d is %v", ErrData, i, v)
		}
	}
	d := &design{n: n, p: p, cols: make([][]float64, p), y: append([]float64(nil), y...), means: make([]float64, p), scales: make([]float64, p)}
	for j := range p {
		c := make([]float64, n)
		for i := range n {
			c[i] = X.At(i, j)
			if math.IsNaN(c[i]) || math.IsInf(c[i], 0) {
				return nil, fmt.Errorf("%w: predictor %d, row %d is %v", ErrData, j, i, c[i])
			}
		}
		d.scales[j] = 1
		if !s.Raw {
			m, sd := stat.MeanStdDev(c, nil)
			d.means[j], d.scales[j] = m, sd
			if !(sd > 1e-12*math.Max(1, math.Abs(m))) {
				return nil, fmt.Errorf("%w: predictor %d is constant (%v), which cannot be standardised and duplicates the intercept", ErrData, j, m)
			}
			for i := range c {
				c[i] = (c[i] - m) / sd
			}
		}
		d.cols[j] = c
	}
	if s.Names != nil {
		if len(s.Names) != p {
			return nil, fmt.Errorf("glmselect: %d names for %d predictors", len(s.Names), p)
		}
		d.names = append([]string(nil), s.Names...)
	} else {
		d.names = make([]string, p)
		for j := range d.names {
			d.names[j] = "x" + strconv.Itoa(j+1)
		}
	}
	return d, nil
}

// matrix returns the n×(1+|t|) design of model t: a column of ones, then
// the active predictors in increasing index.
func (d *design) matrix(t ppl.Terms) *mat.Dense {
	idx := t.Indices()
	m := mat.NewDense(d.n, 1+len(idx), nil)
	for i := range d.n {
		m.Set(i, 0, 1)
		for j, c := range idx {
			m.Set(i, 1+j, d.cols[c][i])
		}
	}
	return m
}

// Gaussian returns the selection space of the linear regression
// y = α + Xβ + ε, ε ~ N(0, σ² I), with the conjugate normal-inverse-gamma
// prior: every coefficient, the intercept α included, N(0, σ² G), and
// σ² ~ InverseGamma(A, B) (Settings). Each model's parameters are beta
// (the intercept, then the active coefficients in increasing term index)
// and sigma2, the shared parameter, on the log scale.
//
// The models are sampled like any others; NIG gives their closed-form
// evidence, the exact reference.
func Gaussian(X mat.Matrix, y []float64, settings *Settings) (*ppl.SelectionSpace, error) {
	s, d, err := prepare(X, y, settings)
	if err != nil {
		return nil, err
	}
	sqrtG := math.Sqrt(s.G)
	build := func(b *ppl.Builder, t ppl.Terms) error {
		beta := b.Real("beta", 1+t.Count())
		sigma2 := b.Positive("sigma2")
		b.Sample(ppl.InverseGamma{Shape: s.A, Scale: s.B}, sigma2)
		sigma := b.Check(gorgonia.Sqrt(sigma2))
		b.Sample(ppl.Normal{Mu: 0.0, Sigma: b.Check(gorgonia.Mul(sigma, gorgonia.NewConstant(sqrtG)))}, beta)
		b.AddLogDensity(b.Check(ops.NormalIDGLM(b.DataMatrix("X", d.matrix(t)), beta, b.Data("y", d.y), sigma)))
		return nil
	}
	return d.choose(build, gaussianMasked(d, &s), &s, 1, identity)
}

// Logistic returns the selection space of the logistic regression
// P(y_i = 1) = logistic(α + x_iᵀβ), y_i in {0, 1}, with independent
// normal priors α ~ N(0, InterceptSD²) and β_j ~ N(0, PriorSD²)
// (Settings). Each model's parameter is beta: the intercept, then the
// active coefficients in increasing term index.
func Logistic(X mat.Matrix, y []float64, settings *Settings) (*ppl.SelectionSpace, error) {
	for i, v := range y {
		if v != 0 && v != 1 {
			return nil, fmt.Errorf("%w: logistic regression needs a binary response (0 or 1), but response %d is %v", ErrData, i, v)
		}
	}
	return glm(X, y, settings, ops.BernoulliLogitGLM, logistic)
}

// Poisson returns the selection space of the Poisson regression
// log E[y_i] = α + x_iᵀβ, y_i a count, with the priors of Logistic.
func Poisson(X mat.Matrix, y []float64, settings *Settings) (*ppl.SelectionSpace, error) {
	for i, v := range y {
		if !(v >= 0) || v != math.Trunc(v) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("%w: Poisson regression needs non-negative integer counts, but response %d is %v", ErrData, i, v)
		}
	}
	return glm(X, y, settings, ops.PoissonLogGLM, math.Exp)
}

// prepare applies settings' defaults, checks them and makes the design.
func prepare(X mat.Matrix, y []float64, settings *Settings) (Settings, *design, error) {
	s := settings.withDefaults()
	if err := s.validate(); err != nil {
		return s, nil, err
	}
	d, err := newDesign(X, y, &s)
	return s, d, err
}

func glm(X mat.Matrix, y []float64, settings *Settings, lik func(x, beta, y *gorgonia.Node) (*gorgonia.Node, error), link func(float64) float64) (*ppl.SelectionSpace, error) {
	s, d, err := prepare(X, y, settings)
	if err != nil {
		return nil, err
	}
	build := func(b *ppl.Builder, t ppl.Terms) error {
		k := t.Count()
		beta := b.Real("beta", 1+k)
		sd := make([]float64, 1+k)
		sd[0] = s.InterceptSD
		for j := 1; j <= k; j++ {
			sd[j] = s.PriorSD
		}
		b.Sample(ppl.Normal{Mu: 0.0, Sigma: sd}, beta)
		b.AddLogDensity(b.Check(lik(b.DataMatrix("X", d.matrix(t)), beta, b.Data("y", d.y))))
		return nil
	}
	return d.choose(build, glmMasked(d, &s, lik), &s, 0, link)
}
