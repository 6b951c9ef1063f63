package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/trjgo/trj/models/factor"
	"github.com/trjgo/trj/ppl"
)

// signFree is the k-factor posterior on the sign-free scale θ: every
// loading real (the diagonal β_jj included, with prior N(0, 1)), log Λ_ii
// as in the model. Its density is that of factor.NewModel at the point
// whose columns are flipped to make the diagonal positive, less the
// log-Jacobian Σ log β_jj of the model's log-diagonal and k·log 2 (the
// half-normal prior is twice N(0, 1) on β_jj > 0). The likelihood and the
// N(0, 1) priors are invariant under the sign flip of any column of B, so
// the density is too, and its integral is the evidence of factor.NewModel:
// each of the 2^k orthants of the diagonal holds 2^−k of it.
//
// θ uses the positions of factor.Layout, with β_jj in place of log β_jj.
type signFree struct {
	m    ppl.Model
	lay  factor.Layout
	u, g []float64
	flip []bool
}

var errZeroDiag = errors.New("factorref: a diagonal loading is exactly zero")

func newSignFree(m ppl.Model, lay factor.Layout) *signFree {
	n := lay.Dim()
	return &signFree{m: m, lay: lay, u: make([]float64, n), g: make([]float64, n), flip: make([]bool, lay.K)}
}

func (s *signFree) clone() *signFree { return newSignFree(s.m.Clone(), s.lay) }

// Dim is the dimension of θ.
func (s *signFree) Dim() int { return s.lay.Dim() }

// toModel writes the model's point u of θ and returns Σ log|β_jj|.
func (s *signFree) toModel(theta []float64) (float64, error) {
	copy(s.u, theta)
	logJ := 0.0
	for j, d := range s.lay.LogDiag {
		b := theta[d]
		if b == 0 {
			return 0, errZeroDiag
		}
		s.flip[j] = b < 0
		s.u[d] = math.Log(math.Abs(b))
		logJ += s.u[d]
		if s.flip[j] {
			for i := j + 1; i < s.lay.P; i++ {
				pos := s.lay.Lower[i][j]
				s.u[pos] = -theta[pos]
			}
		}
	}
	return logJ, nil
}

// LogDensity returns log p(θ), normalised so that its integral is the
// model's evidence.
func (s *signFree) LogDensity(theta []float64) (float64, error) {
	logJ, err := s.toModel(theta)
	if err != nil {
		return math.Inf(-1), err
	}
	lp, err := s.m.LogDensity(s.u)
	if err != nil {
		return math.Inf(-1), err
	}
	return lp - logJ - float64(s.lay.K)*math.Ln2, nil
}

// LogDensityGrad is LogDensity with its gradient, by the chain rule
// through the model's gradient: ∂/∂β_jj = (∂/∂u_jj − 1)/β_jj, and the
// loadings of a flipped column change sign.
func (s *signFree) LogDensityGrad(theta, grad []float64) (float64, error) {
	logJ, err := s.toModel(theta)
	if err != nil {
		return math.Inf(-1), err
	}
	lp, err := s.m.LogDensityGrad(s.u, s.g)
	if err != nil {
		return math.Inf(-1), err
	}
	copy(grad, s.g)
	for j, d := range s.lay.LogDiag {
		grad[d] = (s.g[d] - 1) / theta[d]
		if s.flip[j] {
			for i := j + 1; i < s.lay.P; i++ {
				pos := s.lay.Lower[i][j]
				grad[pos] = -s.g[pos]
			}
		}
	}
	return lp - logJ - float64(s.lay.K)*math.Ln2, nil
}

// Init draws the model's own initial point and gives each column a random
// sign.
func (s *signFree) Init(rng *rand.Rand, theta []float64) error {
	if err := s.m.Init(rng, theta); err != nil {
		return err
	}
	for j, d := range s.lay.LogDiag {
		theta[d] = math.Exp(theta[d])
		if rng.IntN(2) == 1 {
			flipColumn(s.lay, theta, j)
		}
	}
	return nil
}

// flipColumn changes the sign of column j of B in θ.
func flipColumn(lay factor.Layout, theta []float64, j int) {
	theta[lay.LogDiag[j]] = -theta[lay.LogDiag[j]]
	for i := j + 1; i < lay.P; i++ {
		pos := lay.Lower[i][j]
		theta[pos] = -theta[pos]
	}
}

// loadingPos is the position in θ of β_ij (i ≥ j).
func loadingPos(lay factor.Layout, i, j int) int {
	if i == j {
		return lay.LogDiag[j]
	}
	return lay.Lower[i][j]
}

// ParamNames names θ's coordinates theta.1, theta.2, ...
func (s *signFree) ParamNames() []string {
	out := make([]string, s.Dim())
	for i := range out {
		out[i] = "theta." + strconv.Itoa(i+1)
	}
	return out
}

// Constrain copies θ.
func (s *signFree) Constrain(x, dst []float64) error {
	if len(dst) != len(x) {
		return fmt.Errorf("factorref: Constrain into %d values, want %d", len(dst), len(x))
	}
	copy(dst, x)
	return nil
}
