package experiment

import (
	"fmt"
	"math"
)

// Density is the part of ppl.Model that Likelihood needs: a log-density
// and its gradient on an unconstrained space of dimension Dim.
type Density interface {
	Dim() int
	LogDensity(u []float64) (float64, error)
	LogDensityGrad(u, grad []float64) (float64, error)
}

// Likelihood is log p(y | θ) as a kernels.Target: the log posterior minus
// the log prior of the same model. SMC tempers the likelihood alone
// (kernels.NewSplitModel), and the experiments' models are written as whole
// posteriors, so subtracting the prior is the cheapest way to obtain it.
// A Likelihood owns gradient scratch space: use one per goroutine.
type Likelihood struct {
	post, prior Density
	g           []float64
}

// NewLikelihood returns the likelihood post − prior. It owns post and
// prior from then on; pass clones when they are shared.
func NewLikelihood(post, prior Density) (*Likelihood, error) {
	if post == nil || prior == nil {
		return nil, fmt.Errorf("experiment: nil posterior or prior")
	}
	if post.Dim() != prior.Dim() {
		return nil, fmt.Errorf("experiment: posterior of dimension %d, prior of dimension %d", post.Dim(), prior.Dim())
	}
	return &Likelihood{post: post, prior: prior, g: make([]float64, post.Dim())}, nil
}

// Dim is the dimension of the parameter space.
func (l *Likelihood) Dim() int { return l.post.Dim() }

// LogDensity returns log p(y | u) up to a constant.
func (l *Likelihood) LogDensity(u []float64) (float64, error) {
	a, err := l.post.LogDensity(u)
	if err != nil {
		return math.Inf(-1), err
	}
	b, err := l.prior.LogDensity(u)
	if err != nil {
		return math.Inf(-1), err
	}
	return a - b, nil
}

// LogDensityGrad returns log p(y | u) and writes its gradient into grad.
func (l *Likelihood) LogDensityGrad(u, grad []float64) (float64, error) {
	a, err := l.post.LogDensityGrad(u, grad)
	if err != nil {
		return math.Inf(-1), err
	}
	b, err := l.prior.LogDensityGrad(u, l.g)
	if err != nil {
		return math.Inf(-1), err
	}
	for i, v := range l.g {
		grad[i] -= v
	}
	return a - b, nil
}
