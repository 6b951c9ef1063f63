package factor

import (
	"fmt"
	"math"
)

// density is what a fitted flow offers: a transport with a tractable
// density (*flows.RQMA and *flows.Affine).
type density interface {
	Dim() int
	Forward(theta, z []float64) (float64, error)
	Inverse(z, theta []float64) (float64, error)
	LogDensity(theta []float64) (float64, error)
}

// loadingScale is a flow f fitted to the loadings' diagonal β_jj itself
// rather than to log β_jj, as a transport on the model's unconstrained
// space: T(u) = f(x) with x_j = exp(u_j) at the positions diag and x = u
// elsewhere.
//
// Why: the posterior of log β_jj has an exponential left tail (the
// half-normal prior has a positive density at β_jj = 0, and β_22, β_33
// are close to zero), which a flow whose tails are Gaussian under-covers
// by orders of magnitude; a chain that wanders into that tail then sees
// jump acceptance probabilities of nearly zero and stays in its model for
// tens of thousands of steps. On the β_jj scale the density is bounded
// at 0 and the flow covers it; proposals with β_jj ≤ 0 fall outside the
// support and Inverse rejects them.
//
// A loadingScale keeps scratch space: one per goroutine.
type loadingScale struct {
	f    density
	diag []int
	x    []float64
}

func newLoadingScale(f density, diag []int) *loadingScale {
	return &loadingScale{f: f, diag: diag, x: make([]float64, f.Dim())}
}

// toLoadingScale returns copies of the draws u with exp applied at diag.
func toLoadingScale(draws [][]float64, diag []int) [][]float64 {
	out := make([][]float64, len(draws))
	for i, d := range draws {
		x := append([]float64(nil), d...)
		for _, pos := range diag {
			x[pos] = math.Exp(x[pos])
		}
		out[i] = x
	}
	return out
}

// Dim is the model's dimension.
func (t *loadingScale) Dim() int { return t.f.Dim() }

// Forward sets z = f(x(u)) and returns log|det J| including Σ u_j, the
// log-Jacobian of exp at the diagonal positions.
func (t *loadingScale) Forward(u, z []float64) (float64, error) {
	if len(u) != len(t.x) {
		return 0, fmt.Errorf("factor: point of length %d, want %d", len(u), len(t.x))
	}
	copy(t.x, u)
	ld := 0.0
	for _, pos := range t.diag {
		t.x[pos] = math.Exp(u[pos])
		ld += u[pos]
	}
	lf, err := t.f.Forward(t.x, z)
	return lf + ld, err
}

var errLoadingSign = fmt.Errorf("factor: proposal with β_jj ≤ 0 (outside the support)")

// Inverse sets u = x⁻¹(f⁻¹(z)); a non-positive β_jj is an error (a
// rejected proposal).
func (t *loadingScale) Inverse(z, u []float64) (float64, error) {
	lf, err := t.f.Inverse(z, t.x)
	if err != nil {
		return 0, err
	}
	copy(u, t.x)
	ld := 0.0
	for _, pos := range t.diag {
		if !(t.x[pos] > 0) {
			return 0, errLoadingSign
		}
		u[pos] = math.Log(t.x[pos])
		ld -= u[pos]
	}
	return lf + ld, nil
}

// LogDensity is the flow's density of u, log q_x(x(u)) + Σ u_j.
func (t *loadingScale) LogDensity(u []float64) (float64, error) {
	if len(u) != len(t.x) {
		return 0, fmt.Errorf("factor: point of length %d, want %d", len(u), len(t.x))
	}
	copy(t.x, u)
	ld := 0.0
	for _, pos := range t.diag {
		t.x[pos] = math.Exp(u[pos])
		ld += u[pos]
	}
	l, err := t.f.LogDensity(t.x)
	return l + ld, err
}
