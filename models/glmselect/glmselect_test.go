package glmselect

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/ppl"
)

// synth returns n rows of p correlated predictors and a response from a
// few strong, weak and null effects.
func synth(n, p int, seed uint64) (*mat.Dense, []float64) {
	effects := []float64{1.5, 0.3, -0.8}
	return checks.Regression{Stream: 7, Group: 1, Common: 0.6, Own: 0.8, Intercept: 1,
		Effect: func(j int) float64 {
			if j < len(effects) {
				return effects[j]
			}
			return 0
		}}.Data(n, p, seed)
}

// familyData is synth's predictors and response y with the responses of
// the other families made from it: yb = 1{y > 1} for the logistic, yc =
// ⌊exp(0.3·y)⌋ for the Poisson.
func familyData(n, p int, seed uint64) (X *mat.Dense, y, yb, yc []float64) {
	X, y = synth(n, p, seed)
	yb = make([]float64, n)
	yc = make([]float64, n)
	for i := range n {
		if y[i] > 1 {
			yb[i] = 1
		}
		yc[i] = math.Floor(math.Exp(0.3 * y[i]))
	}
	return X, y, yb, yc
}

// TestGLMGaussianEvidenceIdentity checks the closed form against the
// graph: for any θ, log π(θ) − log p(θ | y) = log p(y), the posterior
// β | σ², y ~ N(m, σ² P⁻¹), σ² | y ~ InverseGamma(A + n/2, B + S/2).
func TestGLMGaussianEvidenceIdentity(t *testing.T) {
	n, p := 30, 4
	X, y := synth(n, p, 1)
	q := NormalInverseGamma{G: 2, A: 1.5, B: 0.7}
	set := &Settings{Prior: q}
	sp, err := Gaussian(X, y, set)
	if err != nil {
		t.Fatal(err)
	}
	nig, err := NewEvidence(X, y, set)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := newDesign(X, y, set)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, idx := range [][]int{{}, {0}, {1, 3}, {0, 1, 2, 3}} {
		tm, _ := ppl.NewTerms(p, idx...)
		m, err := sp.Model(tm)
		if err != nil {
			t.Fatal(err)
		}
		logZ, err := nig.LogEvidence(tm)
		if err != nil {
			t.Fatal(err)
		}
		Z := d.matrix(tm)
		_, k := Z.Dims()
		var P mat.SymDense
		P.SymOuterK(1, Z.T())
		// The prior precision per unit of each predictor: 1/G for the
		// intercept, sd_j²/G for a term.
		P.SetSym(0, 0, P.At(0, 0)+1/q.G)
		for i, j := range idx {
			P.SetSym(1+i, 1+i, P.At(1+i, 1+i)+d.scale[j]*d.scale[j]/q.G)
		}
		var zty, mean mat.VecDense
		zty.MulVec(Z.T(), mat.NewVecDense(n, y))
		var ch mat.Cholesky
		if !ch.Factorize(&P) {
			t.Fatal("P not PD")
		}
		if err := ch.SolveVecTo(&mean, &zty); err != nil {
			t.Fatal(err)
		}
		yv := mat.NewVecDense(n, y)
		S := mat.Dot(yv, yv) - mat.Dot(&zty, &mean)
		an, bn := q.A+float64(n)/2, q.B+S/2
		u := make([]float64, m.Dim())
		for trial := range 3 {
			for i := range u {
				u[i] = 0.3 * rng.NormFloat64()
			}
			for i := range k {
				u[i] += mean.AtVec(i)
			}
			lp, err := m.LogDensity(u)
			if err != nil {
				t.Fatal(err)
			}
			s2 := math.Exp(u[k])
			// log N(β; m, σ² P⁻¹) = −(k/2) log(2πσ²) + ½ log|P| − (β − m)ᵀP(β − m)/(2σ²)
			diff := mat.NewVecDense(k, nil)
			for i := range k {
				diff.SetVec(i, u[i]-mean.AtVec(i))
			}
			normLP := -float64(k)/2*math.Log(2*math.Pi*s2) + 0.5*ch.LogDet() - mat.Inner(diff, &P, diff)/(2*s2)
			lga, _ := math.Lgamma(an)
			post := normLP + an*math.Log(bn) - lga - (an+1)*math.Log(s2) - bn/s2 + u[k]
			if got := lp - post; math.Abs(got-logZ) > 1e-8*math.Max(1, math.Abs(logZ)) {
				t.Errorf("terms %v trial %d: log π − log posterior = %.12g, closed form %.12g", idx, trial, got, logZ)
			}
		}
	}
}

// TestGLMGaussianEvidenceQuadrature checks the closed form of the
// intercept-only model against a brute tensor-grid integral of the
// model's density over (α, log σ²).
func TestGLMGaussianEvidenceQuadrature(t *testing.T) {
	X, y := synth(8, 2, 5)
	q := NormalInverseGamma{G: 3, A: 2, B: 1}
	set := &Settings{Prior: q}
	sp, err := Gaussian(X, y, set)
	if err != nil {
		t.Fatal(err)
	}
	nig, _ := NewEvidence(X, y, set)
	empty, _ := ppl.NewTerms(2)
	m, _ := sp.Model(empty)
	want, _ := nig.LogEvidence(empty)
	const N = 600
	lo0, hi0, lo1, hi1 := -6.0, 8.0, -8.0, 6.0
	h0, h1 := (hi0-lo0)/N, (hi1-lo1)/N
	var sum float64
	u := make([]float64, 2)
	for i := range N + 1 {
		for j := range N + 1 {
			u[0], u[1] = lo0+float64(i)*h0, lo1+float64(j)*h1
			lp, err := m.LogDensity(u)
			if err != nil {
				t.Fatal(err)
			}
			w := 1.0
			if i == 0 || i == N {
				w /= 2
			}
			if j == 0 || j == N {
				w /= 2
			}
			sum += w * math.Exp(lp-want)
		}
	}
	got := want + math.Log(sum*h0*h1)
	if math.Abs(got-want) > 1e-6 {
		t.Errorf("quadrature log evidence %.9f, closed form %.9f", got, want)
	}
}

// TestGLMGradients checks every family's compiled gradient against
// central finite differences.
func TestGLMGradients(t *testing.T) {
	n, p := 40, 5
	X, y, yb, yc := familyData(n, p, 2)
	spaces := map[string]func() (*ppl.SelectionSpace, error){
		"gaussian": func() (*ppl.SelectionSpace, error) { return Gaussian(X, y, nil) },
		"logistic": func() (*ppl.SelectionSpace, error) { return Logistic(X, yb, nil) },
		"poisson":  func() (*ppl.SelectionSpace, error) { return Poisson(X, yc, nil) },
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for name, mk := range spaces {
		sp, err := mk()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, idx := range [][]int{{}, {2}, {0, 1, 4}} {
			tm, _ := ppl.NewTerms(p, idx...)
			m, err := sp.Model(tm)
			if err != nil {
				t.Fatal(err)
			}
			u := make([]float64, m.Dim())
			for i := range u {
				u[i] = 0.5 * rng.NormFloat64()
			}
			g := make([]float64, len(u))
			if _, err := m.LogDensityGrad(u, g); err != nil {
				t.Fatal(err)
			}
			f := func(x []float64) float64 { v, _ := m.LogDensity(x); return v }
			want := fd.Gradient(nil, f, u, &fd.Settings{Formula: fd.Central, Step: 1e-5})
			for i := range g {
				if math.Abs(g[i]-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
					t.Errorf("%s terms %v: ∂/∂u%d = %.8g, finite differences %.8g", name, idx, i, g[i], want[i])
				}
			}
		}
	}
}

func TestGLMBadInput(t *testing.T) {
	X, y := synth(20, 3, 1)
	if _, err := Gaussian(mat.NewDense(20, 1, nil), y, nil); !errors.Is(err, ErrData) || !strings.Contains(err.Error(), "constant") {
		t.Errorf("constant predictor: %v", err)
	}
	if _, err := Gaussian(X, y[:5], nil); !errors.Is(err, ErrData) {
		t.Errorf("short y: %v", err)
	}
	if _, err := Logistic(X, y, nil); !errors.Is(err, ErrData) || !strings.Contains(err.Error(), "binary") {
		t.Errorf("non-binary y: %v", err)
	}
	if _, err := Poisson(X, y, nil); !errors.Is(err, ErrData) || !strings.Contains(err.Error(), "count") {
		t.Errorf("non-count y: %v", err)
	}
	if _, err := Gaussian(X, y, &Settings{Prior: NormalInverseGamma{G: -1}}); err == nil || !strings.Contains(err.Error(), "G") {
		t.Errorf("negative G: %v", err)
	}
	if _, err := Gaussian(X, y, &Settings{Prior: HyperG{A: 2}}); err == nil || !strings.Contains(err.Error(), "a > 2") {
		t.Errorf("hyper-g a = 2: %v", err)
	}
	if _, err := Gaussian(X, y, &Settings{Raw: true}); err == nil || !strings.Contains(err.Error(), "Raw") {
		t.Errorf("g-prior with Raw: %v", err)
	}
	if _, err := Gaussian(X, make([]float64, 20), nil); !errors.Is(err, ErrData) || !strings.Contains(err.Error(), "constant") {
		t.Errorf("constant response: %v", err)
	}
	yb := make([]float64, 20)
	if _, err := Logistic(X, yb, nil); !errors.Is(err, ErrData) || !strings.Contains(err.Error(), "both outcomes") {
		t.Errorf("all-zero logistic response: %v", err)
	}
	if _, err := Poisson(X, yb, nil); !errors.Is(err, ErrData) || !strings.Contains(err.Error(), "positive count") {
		t.Errorf("all-zero counts: %v", err)
	}
	if _, err := Gaussian(X, y, &Settings{Names: []string{"a"}}); err == nil {
		t.Error("wrong number of names: no error")
	}
	nig, _ := NewEvidence(X, y, nil)
	wrong, _ := ppl.NewTerms(4)
	if _, err := nig.LogEvidence(wrong); err == nil {
		t.Error("terms over the wrong p: no error")
	}
}

// TestGLMEnumerateSmall checks Enumerate's PIPs against direct sums.
func TestGLMEnumerateSmall(t *testing.T) {
	X, y := synth(25, 4, 9)
	nig, _ := NewEvidence(X, y, nil)
	ex, err := nig.Enumerate(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	var lp []float64
	var ts []ppl.Terms
	for m := range 16 {
		tm := maskTerms(4, m)
		le, _ := nig.LogEvidence(tm)
		lp = append(lp, ppl.BetaBinomial{A: 1, B: 1}.LogModelPrior(tm)+le)
		ts = append(ts, tm)
	}
	var z float64
	for _, v := range lp {
		z += math.Exp(v)
	}
	for j := range 4 {
		var pip float64
		for m, v := range lp {
			if ts[m].Has(j) {
				pip += math.Exp(v) / z
			}
		}
		if math.Abs(pip-ex.PIP[j]) > 1e-12 {
			t.Errorf("PIP %d: %v, want %v", j, ex.PIP[j], pip)
		}
	}
	if len(ex.Top) != 3 || ex.Top[0].P < ex.Top[1].P {
		t.Errorf("top models %v", ex.Top)
	}
}
