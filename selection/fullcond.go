package selection

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// FullConditional (the default Proposal) has one Laplace fit in all:
// that of the full model, N(μ, H⁻¹), fitted before the chains start. A
// model's transport (for its jumps and its within-model moves) is that
// Gaussian conditioned on the coefficients of the terms it lacks being 0:
// precision H_AA, mean μ_A + H_AA⁻¹ H_AB μ_B (A the model's coordinates, B
// the missing terms'). For a Gaussian likelihood with known scale this is
// the model's exact posterior; elsewhere an approximation whose cost per
// model is one Cholesky factorisation, with no finite-difference Hessian.
// Models get no evidence.
type FullConditional struct{}

func (FullConditional) String() string { return "fullcond" }

// Prepare fits the full model's Laplace approximation.
func (FullConditional) Prepare(_ context.Context, in *Preparation) (Proposer, error) {
	sp := in.Space
	lap, err := in.FullLaplace()
	if err != nil {
		return nil, err
	}
	return &fullCondProposer{A: sp.Always(), S: sp.Shared(), P: sp.P(), mean: lap.Mean(), prec: lap.Precision()}, nil
}

type fullCondProposer struct {
	A, S, P int
	mean    []float64
	prec    *mat.SymDense
}

func (*fullCondProposer) Laplace() bool { return false }

func (g *fullCondProposer) Model(tm ppl.Terms, _ *ppl.GraphModel, _ *flows.Laplace) (kernels.Transport, kernels.Transport, error) {
	A, S, P := g.A, g.S, g.P
	in := make([]int, 0, A+tm.Count()+S)
	out := make([]int, 0, P-tm.Count())
	for i := range A {
		in = append(in, i)
	}
	r := 0
	idx := tm.Indices()
	for j := range P {
		if r < len(idx) && idx[r] == j {
			in = append(in, A+j)
			r++
		} else {
			out = append(out, A+j)
		}
	}
	for i := range S {
		in = append(in, A+P+i)
	}
	n := len(in)
	haa := mat.NewSymDense(n, nil)
	// rhs = H_AA μ_A + H_AB μ_B, so that the mean solves H_AA m = rhs.
	rhs := mat.NewVecDense(n, nil)
	for a, i := range in {
		for b := a; b < n; b++ {
			haa.SetSym(a, b, g.prec.At(i, in[b]))
		}
		var v float64
		for _, k := range in {
			v += g.prec.At(i, k) * g.mean[k]
		}
		for _, k := range out {
			v += g.prec.At(i, k) * g.mean[k]
		}
		rhs.SetVec(a, v)
	}
	var ch mat.Cholesky
	if !ch.Factorize(haa) {
		return nil, nil, fmt.Errorf("the full model's precision restricted to model %v is not positive definite", tm)
	}
	var m mat.VecDense
	if err := ch.SolveVecTo(&m, rhs); err != nil {
		return nil, nil, err
	}
	t, err := flows.NewLaplace(m.RawVector().Data, haa)
	return t, t, err
}
