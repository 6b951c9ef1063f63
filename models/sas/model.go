package sas

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl"
)

// NewModel returns c's density p_{ε,δ,L}(θ) as a ppl model: θ is one
// unconstrained vector parameter "theta" of length n, and the log-density,
// written as a gorgonia graph (so that its gradient comes from automatic
// differentiation), is
//
//	log p(θ) = −½|L⁻¹y|² − (n/2)·log 2π − log|det L|
//	           + Σᵢ [log cosh aᵢ + log δᵢ − ½·log(1+θᵢ²)],
//	aᵢ = δᵢ·asinh θᵢ − εᵢ, yᵢ = sinh aᵢ,
//
// normalised like Component.LogDensity, which stays the exact reference
// (and the exact sampler and transport). The whole density is one
// AddLogDensity term: in the model's tempered form it is all likelihood,
// with no prior.
func NewModel(c *Component) (*ppl.GraphModel, error) {
	if c == nil {
		return nil, errors.New("sas: nil component")
	}
	n := c.Dim()
	// L⁻¹ by forward substitution on the columns of the identity: L is
	// lower triangular with a non-zero diagonal (checked by NewComponent).
	linv := mat.NewDense(n, n, nil)
	for col := range n {
		for i := col; i < n; i++ {
			s := 0.0
			if i == col {
				s = 1
			}
			for j := col; j < i; j++ {
				s -= c.l[i*n+j] * linv.At(j, col)
			}
			linv.Set(i, col, s/c.l[i*n+i])
		}
	}
	logDelta := 0.0
	for _, d := range c.delta {
		logDelta += math.Log(d)
	}
	b := ppl.NewBuilder()
	theta := b.Real("theta", n)
	eps := b.Data("eps", c.eps)
	delta := b.Data("delta", c.delta)
	as := b.Check(ops.Asinh(theta))
	a := b.Check(gorgonia.Sub(b.Check(gorgonia.HadamardProd(delta, as)), eps))
	y := b.Check(ops.Sinh(a))
	z := b.Check(gorgonia.Mul(b.DataMatrix("Linv", linv), y))
	// −½|z|²
	b.AddLogDensity(b.Check(gorgonia.Mul(gorgonia.NewConstant(-0.5), b.Check(gorgonia.Sum(b.Check(gorgonia.Square(z)))))))
	// log cosh a = softplus(2a) − a − log 2, without overflow.
	two := gorgonia.NewConstant(2.0)
	sp := b.Check(ops.Softplus(b.Check(gorgonia.Mul(two, a))))
	b.AddLogDensity(b.Check(gorgonia.Sub(sp, a)))
	// −½ log(1+θ²)
	l1p := b.Check(gorgonia.Log1p(b.Check(gorgonia.Square(theta))))
	b.AddLogDensity(b.Check(gorgonia.Mul(gorgonia.NewConstant(-0.5), b.Check(gorgonia.Sum(l1p)))))
	// The constants: −(n/2)·log 2π − log|det L| + Σ log δ − n·log 2.
	b.AddLogDensity(gorgonia.NewConstant(-float64(n)*halfLog2Pi - c.logDetL + logDelta - float64(n)*math.Ln2))
	return b.Model()
}

// NewSpace returns t as a ppl.Space for trj.Run: one NewModel per
// component, with the target's model probabilities as the prior p(k) and
// the paper's labels "1", "2", … (Labels). Each model's density
// is normalised, so the posterior model probabilities are p(k).
func (t *Target) NewSpace() (*ppl.Space, error) {
	models := make([]ppl.Model, t.NumModels())
	for k, c := range t.comps {
		m, err := NewModel(c)
		if err != nil {
			return nil, fmt.Errorf("sas: model %d: %w", k+1, err)
		}
		models[k] = m
	}
	return ppl.NewSpace(models, ppl.WithLabels(t.Labels()...), ppl.WithLogPrior(append([]float64(nil), t.logP...)))
}
