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

// Default prior settings; Settings and the priors document each.
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
	// Raw keeps the predictors as given, neither centred nor scaled: the
	// intercept is then the linear predictor at x = 0 and the priors of
	// the normal-inverse-gamma, logistic and Poisson families are on the
	// predictors' own scales. The g-priors are defined on centred
	// predictors and refuse Raw. By default the design is the predictors
	// centred (the intercept is the mean linear predictor) in their own
	// units, each coefficient in y-units (or the link's) per x-unit, and the
	// priors that are stated on standardised predictors scale each
	// coefficient's prior by 1/sd_j instead, the same model; a constant
	// column is then an error.
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
	// which gives the same log-densities without a compilation per model;
	// Gaussian above 2,000 terms builds per model whatever PerModel says,
	// since the saturated graph would hold the p × p Gram matrix.
	PerModel bool

	// Prior is the Gaussian family's prior on each model's parameters
	// (default GPrior{}, Zellner's g-prior with g = n, which does not
	// depend on the units of y or of the predictors).
	Prior GaussianPrior

	// PriorSD is the prior standard deviation of each coefficient of the
	// Logistic and Poisson families on the standardised predictors,
	// β_j ~ N(0, PriorSD²) (default 2.5), and InterceptSD the intercept's
	// around the data's link-scale mean (default 10).
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
	if o.Prior == nil {
		o.Prior = GPrior{}
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
	}{{"PriorSD", s.PriorSD}, {"InterceptSD", s.InterceptSD}} {
		if !(v.x > 0) || math.IsInf(v.x, 1) {
			return fmt.Errorf("glmselect: prior setting %s = %v, want positive and finite", v.name, v.x)
		}
	}
	return nil
}

// design is the checked predictors, by column: centred in their own
// units, unless Raw.
type design struct {
	n, p  int
	cols  [][]float64
	scale []float64 // each column's standard deviation (1 when Raw)
	means []float64 // each column's mean, subtracted from it (0 when Raw)
	y     []float64
	names []string
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
	d := &design{n: n, p: p, cols: make([][]float64, p), scale: make([]float64, p), means: make([]float64, p), y: append([]float64(nil), y...)}
	for j := range p {
		c := make([]float64, n)
		for i := range n {
			c[i] = X.At(i, j)
			if math.IsNaN(c[i]) || math.IsInf(c[i], 0) {
				return nil, fmt.Errorf("%w: predictor %d, row %d is %v", ErrData, j, i, c[i])
			}
		}
		d.scale[j] = 1
		if !s.Raw {
			m, sd := stat.MeanStdDev(c, nil)
			if !(sd > 1e-12*math.Max(1, math.Abs(m))) {
				return nil, fmt.Errorf("%w: predictor %d is constant (%v), which cannot be standardised and duplicates the intercept", ErrData, j, m)
			}
			for i := range c {
				c[i] -= m
			}
			d.scale[j], d.means[j] = sd, m
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

// all is every term index, 0, …, p−1.
func (d *design) all() []int {
	all := make([]int, d.p)
	for j := range all {
		all[j] = j
	}
	return all
}

// Logistic returns the selection space of the logistic regression
// P(y_i = 1) = logistic(α + x_iᵀβ), y_i in {0, 1}, with independent
// normal priors α ~ N(logit ȳ, InterceptSD²), centred where the data put
// the intercept (the log-odds at the predictors' means), and
// β_j ~ N(0, PriorSD²/sd_j²), PriorSD on the standardised predictors
// (Settings). Each model's parameter is beta: the intercept, then the
// active coefficients in increasing term index, per unit of each
// predictor. A response that is all 0 or all 1 is an error: no term can
// explain it.
func Logistic(X mat.Matrix, y []float64, settings *Settings) (*ppl.SelectionSpace, error) {
	for i, v := range y {
		if v != 0 && v != 1 {
			return nil, fmt.Errorf("%w: logistic regression needs a binary response (0 or 1), but response %d is %v", ErrData, i, v)
		}
	}
	ybar := stat.Mean(y, nil)
	if ybar == 0 || ybar == 1 {
		return nil, fmt.Errorf("%w: logistic regression needs both outcomes, but every response is %v", ErrData, ybar)
	}
	return glm(X, y, settings, ops.BernoulliLogitGLM, math.Log(ybar/(1-ybar)), logistic)
}

// Poisson returns the selection space of the Poisson regression
// log E[y_i] = α + x_iᵀβ, y_i a count, with the priors of Logistic, the
// intercept's centred at log ȳ. Counts that are all 0 are an error.
func Poisson(X mat.Matrix, y []float64, settings *Settings) (*ppl.SelectionSpace, error) {
	for i, v := range y {
		if !(v >= 0) || v != math.Trunc(v) || math.IsInf(v, 1) {
			return nil, fmt.Errorf("%w: Poisson regression needs non-negative integer counts, but response %d is %v", ErrData, i, v)
		}
	}
	ybar := stat.Mean(y, nil)
	if ybar == 0 {
		return nil, fmt.Errorf("%w: Poisson regression needs a positive count, but every response is 0", ErrData)
	}
	return glm(X, y, settings, ops.PoissonLogGLM, math.Log(ybar), math.Exp)
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

func glm(X mat.Matrix, y []float64, settings *Settings, lik func(x, beta, y *gorgonia.Node) (*gorgonia.Node, error), centre float64, link func(float64) float64) (*ppl.SelectionSpace, error) {
	s, d, err := prepare(X, y, settings)
	if err != nil {
		return nil, err
	}
	prior := func(cols []int) ppl.Normal {
		mu := make([]float64, 1+len(cols))
		sd := make([]float64, 1+len(cols))
		mu[0], sd[0] = centre, s.InterceptSD
		for i, j := range cols {
			sd[1+i] = s.PriorSD / d.scale[j]
		}
		return ppl.Normal{Mu: mu, Sigma: sd}
	}
	build := func(b *ppl.Builder, t ppl.Terms) error {
		cols := t.Indices()
		beta := b.Real("beta", 1+len(cols))
		b.Sample(prior(cols), beta)
		b.AddLogDensity(b.Check(lik(b.DataMatrix("X", d.matrix(t)), beta, b.Data("y", d.y))))
		return nil
	}
	opts, err := d.predictOption(&s, link)
	if err != nil {
		return nil, err
	}
	return d.choose(build, glmMasked(d, prior(d.all()), lik), &s, 0, opts...)
}
