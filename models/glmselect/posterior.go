package glmselect

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/ppl"
)

// posteriorOf returns the fixed-g g-prior's per-model Gaussian posterior
// approximation (ppl.WithModelPosterior), in the model's coordinates
// (intercept, active coefficients in data units, log σ²): the joint
// mode, α = ȳ, β = s β̂ (s = g/(1+g), β̂ the least-squares fit on the
// centred predictors), σ̂² = S/(n + k) with S = Σ(y − ȳ)²(1 − s R²), and
// the Hessian there, which is block diagonal: n/σ̂² for α,
// X_γᵀX_γ/(s σ̂²) for β and (n + k)/2 for log σ². Exactly Gaussian in β
// given σ², this transport makes the jumps nearly those of a sampler on
// the closed-form evidences, where the full model's conditional
// (FullConditional) misplaces σ² for models far smaller than the full one.
func posteriorOf(d *design, gm *gram, g float64) func(ppl.Terms) ([]float64, *mat.SymDense, error) {
	ybar := 0.0
	for _, v := range d.y {
		ybar += v
	}
	ybar /= float64(d.n)
	pool := &sync.Pool{New: func() any { return new([]float64) }}
	return func(t ppl.Terms) ([]float64, *mat.SymDense, error) {
		idx := t.Indices()
		k := len(idx)
		bufp := pool.Get().(*[]float64)
		defer pool.Put(bufp)
		if cap(*bufp) < k*k+k {
			*bufp = make([]float64, k*k+k)
		}
		buf := (*bufp)[:k*k+k]
		L, b := buf[:k*k], buf[k*k:k*k+k]
		if k > gm.maxTerms() || !gm.cholesky(idx, L) {
			return nil, nil, fmt.Errorf("glmselect: model %v has no g-prior", t)
		}
		// b = C_γ⁻¹ X_γᵀy, the least-squares fit on the standardised
		// predictors, and R² = yᵀX_γ b / syy.
		var q float64
		for i, j := range idx {
			b[i] = gm.xty[j]
		}
		solveChol(L, k, b)
		for i, j := range idx {
			q += gm.xty[j] * b[i]
		}
		s := g / (1 + g)
		r2 := math.Min(math.Max(q/gm.syy, 0), 1)
		S := gm.syy * (1 - s*r2)
		nk := float64(d.n + k)
		s2 := S / nk
		dim := k + 2
		mean := make([]float64, dim)
		prec := mat.NewSymDense(dim, nil)
		mean[0] = ybar
		prec.SetSym(0, 0, float64(d.n)/s2)
		for a, ja := range idx {
			mean[1+a] = s * b[a] / d.scale[ja]
			row := gm.row(ja)
			for c := a; c < k; c++ {
				jc := idx[c]
				prec.SetSym(1+a, 1+c, row[jc]*d.scale[ja]*d.scale[jc]/(s*s2))
			}
		}
		mean[dim-1] = math.Log(s2)
		prec.SetSym(dim-1, dim-1, nk/2)
		return mean, prec, nil
	}
}
