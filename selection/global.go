package selection

import (
	"context"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// Global is a baseline Proposal: one Laplace approximation of
// the full model, fitted before the chains start, whose marginal over a
// model's coordinates is that model's jump transport (like CTRJ with an
// affine flow fitted once). The within-model moves use each model's own
// Laplace fit.
type Global struct{}

func (Global) String() string { return "global" }

// Prepare fits the full model's Laplace approximation.
func (Global) Prepare(_ context.Context, in *Preparation) (Proposer, error) {
	sp := in.Space
	lap, err := in.FullLaplace()
	if err != nil {
		return nil, err
	}
	return &globalProposer{A: sp.Always(), S: sp.Shared(), P: sp.P(), global: lap, cov: lap.Covariance()}, nil
}

type globalProposer struct {
	A, S, P int
	global  *flows.Laplace
	cov     *mat.SymDense
}

func (*globalProposer) Laplace() bool { return true }

// Model returns the global approximation's marginal over model tm's
// coordinates.
func (g *globalProposer) Model(tm ppl.Terms, _ *ppl.GraphModel, lap *flows.Laplace) (kernels.Transport, kernels.Transport, error) {
	A, S, P := g.A, g.S, g.P
	idx := make([]int, 0, A+tm.Count()+S)
	for i := range A {
		idx = append(idx, i)
	}
	for _, j := range tm.Indices() {
		idx = append(idx, A+j)
	}
	for i := range S {
		idx = append(idx, A+P+i)
	}
	n := len(idx)
	cov := mat.NewSymDense(n, nil)
	mean := make([]float64, n)
	for a, i := range idx {
		mean[a] = g.global.Mean()[i]
		for b := a; b < n; b++ {
			cov.SetSym(a, b, g.cov.At(i, idx[b]))
		}
	}
	var ch mat.Cholesky
	prec := mat.NewSymDense(n, nil)
	if ch.Factorize(cov) {
		if err := ch.InverseTo(prec); err != nil {
			return nil, nil, err
		}
	}
	jump, err := flows.NewLaplace(mean, prec)
	return jump, lap, err
}
