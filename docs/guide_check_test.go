package docs_test

import (
	"bytes"
	"context"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/ppl/draws"
)

// The guide's data: a quadratic trend that the data support about as much
// as a straight line (exact π(quadratic | y) ≈ 0.48).
func guideData() (x, y []float64) { return syntheticData(40, 0.35, 2) }

// exactQuadraticProb is π(quadratic | y) under equal prior probabilities.
func exactQuadraticProb(t *testing.T, x, y []float64) float64 {
	t.Helper()
	l1, err := logEvidence(x, y, 1)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := logEvidence(x, y, 2)
	if err != nil {
		t.Fatal(err)
	}
	return 1 / (1 + math.Exp(l1-l2))
}

func TestLogEvidenceByQuadrature(t *testing.T) {
	// logEvidence is the yardstick of TestGuide, so its algebra is checked
	// by another route: p(y) = ∫ N(y; 0, σ²C) InverseGamma(σ²; a, b) dσ²
	// with C = I + τ²XXᵀ, by Gauss–Legendre quadrature over log σ².
	x, y := guideData()
	for degree := 1; degree <= 2; degree++ {
		want, err := logEvidence(x, y, degree)
		if err != nil {
			t.Fatal(err)
		}
		n, p := len(x), degree+1
		X := mat.NewDense(n, p, nil)
		for i, xi := range x {
			for j, v := 0, 1.0; j < p; j, v = j+1, v*xi {
				X.Set(i, j, v)
			}
		}
		var c mat.SymDense
		c.SymOuterK(priorTau*priorTau, X)
		for i := 0; i < n; i++ {
			c.SetSym(i, i, c.At(i, i)+1)
		}
		var chol mat.Cholesky
		if !chol.Factorize(&c) {
			t.Fatal("C is not positive definite")
		}
		var sol mat.VecDense
		yv := mat.NewVecDense(n, y)
		if err := chol.SolveVecTo(&sol, yv); err != nil {
			t.Fatal(err)
		}
		q, logDetC := mat.Dot(yv, &sol), chol.LogDet()
		ig := distuv.InverseGamma{Alpha: priorShape, Beta: priorScale}
		// Integrand in s = log σ² (Jacobian σ²), scaled by exp(−want) so
		// that it is of order one.
		f := func(s float64) float64 {
			v := math.Exp(s)
			ll := -0.5*float64(n)*math.Log(2*math.Pi*v) - 0.5*logDetC - q/(2*v)
			return math.Exp(ll + ig.LogProb(v) + s - want)
		}
		got := math.Log(quad.Fixed(f, -10, 10, 2000, quad.Legendre{}, 0)) + want
		if math.Abs(got-want) > 1e-8 {
			t.Errorf("degree %d: closed-form log evidence %.10f, quadrature %.10f", degree, want, got)
		}
	}
}

func TestGuide(t *testing.T) {
	ctx := context.Background()
	x, y := guideData()

	// What the guide says about the compiled model.
	m, err := polynomialRegression(x, y, 2)
	if err != nil {
		t.Fatal(err)
	}
	if fb := m.Fallbacks(); len(fb) != 0 {
		t.Errorf("the guide's model runs ops through gorgonia: %v", fb)
	}
	if got, want := m.ParamNames(), []string{"beta.1", "beta.2", "beta.3", "sigma2"}; !slices.Equal(got, want) || m.Dim() != 4 {
		t.Errorf("quadratic model: names %v, dimension %d; the guide says %v and 4", got, m.Dim(), want)
	}

	// Part 1: NUTS on one model, against the conjugate posterior means.
	var out bytes.Buffer
	d, err := fitQuadratic(ctx, &out, x, y)
	if err != nil {
		t.Fatalf("fitQuadratic: %v\n%s", err, out.String())
	}
	t.Logf("fitQuadratic output:\n%s", out.String())
	sum, err := draws.Summarize(d)
	if err != nil {
		t.Fatal(err)
	}
	beta, sigma2 := exactPosteriorMean(x, y, 2)
	want := map[string]float64{"beta.1": beta[0], "beta.2": beta[1], "beta.3": beta[2], "sigma2": sigma2}
	for _, s := range sum.Stats {
		w, ok := want[s.Name]
		if !ok {
			continue
		}
		if math.Abs(s.Mean-w) > 4*s.MCSE {
			t.Errorf("posterior mean of %s: %.4f ± %.4f (MCSE), exact %.4f", s.Name, s.Mean, s.MCSE, w)
		}
		delete(want, s.Name)
	}
	if len(want) != 0 {
		t.Errorf("summary lacks %v", want)
	}

	// Part 2: TRJ between the two models, against the exact model
	// probability.
	truth := exactQuadraticProb(t, x, y)
	out.Reset()
	cmp, err := compareModels(ctx, &out, x, y)
	if err != nil {
		t.Fatalf("compareModels: %v\n%s", err, out.String())
	}
	t.Logf("compareModels output (exact %.4f):\n%s", truth, out.String())
	c := cmp.Chain[1]
	if !c.Mixed || math.Abs(c.P-truth) > 4*c.MCSE {
		t.Errorf("TRJ π(quadratic) = %.4f ± %.4f, exact %.4f", c.P, c.MCSE, truth)
	}
	// The bridge estimate, against its jackknife standard error.
	if b, se := cmp.Bridge.Normalized[1], cmp.Bridge.NormalizedSE[1]; math.Abs(b-truth) > 4*se {
		t.Errorf("bridge π(quadratic) = %.4f ± %.4f, exact %.4f", b, se, truth)
	}
}

// exactSubsetProbs are the posterior probabilities of the subset models in
// selectPredictors' order, under equal prior probabilities.
func exactSubsetProbs(t *testing.T, x [][]float64, y []float64) []float64 {
	p := len(x[0])
	var logZ []float64
	for mask := 0; mask < 1<<p; mask++ {
		var cols []int
		for j := range p {
			if mask>>j&1 == 1 {
				cols = append(cols, j)
			}
		}
		X := mat.NewDense(len(y), len(cols)+1, nil)
		for i, row := range x {
			X.Set(i, 0, 1)
			for c, j := range cols {
				X.Set(i, c+1, row[j])
			}
		}
		lz, err := logEvidenceOf(X, y)
		if err != nil {
			t.Fatal(err)
		}
		logZ = append(logZ, lz)
	}
	top := floats.Max(logZ)
	probs := make([]float64, len(logZ))
	for k, l := range logZ {
		probs[k] = math.Exp(l - top)
	}
	floats.Scale(1/floats.Sum(probs), probs)
	return probs
}

func TestGuideSelection(t *testing.T) {
	if raceDetector && testing.Short() {
		// 8 models with SMC pilots, then CTRJ: 27 s alone, 10 minutes
		// under the race detector, which the root package's tests of the
		// same stages already run.
		t.Skip("skipped with -race -short (run without -race)")
	}
	x, y := selectionData()
	exact := exactSubsetProbs(t, x, y)
	var out, saved bytes.Buffer
	trjRes, ctrjRes, err := selectPredictors(context.Background(), &out, &saved, x, y)
	if err != nil {
		t.Fatalf("selectPredictors: %v\n%s", err, out.String())
	}
	t.Logf("selectPredictors output (exact %.4f):\n%s", exact, out.String())
	for k, p := range exact {
		for _, res := range []*trj.Result{trjRes, ctrjRes} {
			// The score interval at 4 standard errors, not P ± 4·MCSE:
			// the models without x₁ (p = 0.0001 to 0.001) get from a few
			// visits to a few tens, and with one visit of six expected P is
			// 5 of its own MCSEs from p (TestIntervalRareModel).
			c := res.Chain[k]
			if lo, hi := c.Interval(4); !(lo <= p && p <= hi) {
				t.Errorf("%s, model %s: chains %.4f ± %.4f (score interval [%.4f, %.4f]), exact %.4f",
					res.Algorithm, res.Labels[k], c.P, c.MCSE, lo, hi, p)
			}
		}
		res := trjRes
		if b, se := res.Bridge.Normalized[k], res.Bridge.NormalizedSE[k]; math.Abs(b-p) > 4*se {
			t.Errorf("model %s: bridge %.4f ± %.4f, exact %.4f", res.Labels[k], b, se, p)
		}
		if e := res.Evidence; math.Abs(e.P[k]-p) > 4*e.SE[k] {
			t.Errorf("model %s: evidence %.4f ± %.4f, exact %.4f", res.Labels[k], e.P[k], e.SE[k], p)
		}
	}
	if saved.Len() == 0 {
		t.Error("no transports saved")
	}
}

func selectionData() ([][]float64, []float64) { return predictorData(50, 3) }
