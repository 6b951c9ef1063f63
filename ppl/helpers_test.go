package ppl

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
)

// buildBoth builds the same model twice: compiled with ad and run on
// gorgonia's TapeMachine, an independent evaluator.
func buildBoth(t *testing.T, build func(b *Builder)) (compiled, tape *GraphModel) {
	t.Helper()
	b1 := NewBuilder()
	build(b1)
	compiled, err := b1.Model()
	if err != nil {
		t.Fatalf("Model: %v", err)
	}
	if fb := compiled.ev.(program).Fallbacks(); len(fb) > 0 {
		t.Errorf("ops running through gorgonia's slow path: %v", fb)
	}
	b2 := NewBuilder()
	build(b2)
	tape, err = b2.model(newTapeEvaluator)
	if err != nil {
		t.Fatalf("tape model: %v", err)
	}
	return compiled, tape
}

// close reports |a − b| ≤ tol·max(1, |b|).
func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

// checkGradient compares m's gradient at u with central finite differences.
func checkGradient(t *testing.T, m Model, u []float64, tol float64) {
	t.Helper()
	g := make([]float64, m.Dim())
	if _, err := m.LogDensityGrad(u, g); err != nil {
		t.Fatalf("LogDensityGrad: %v", err)
	}
	f := func(x []float64) float64 {
		v, err := m.LogDensity(x)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	want := fd.Gradient(nil, f, u, &fd.Settings{Formula: fd.Central, Step: 1e-5})
	for i := range g {
		if !near(g[i], want[i], tol) {
			t.Errorf("gradient[%d] = %.10g, finite differences %.10g", i, g[i], want[i])
		}
	}
}

// logAbsDet returns log|det J| of the square matrix J.
func logAbsDet(t *testing.T, j *mat.Dense) float64 {
	t.Helper()
	var lu mat.LU
	lu.Factorize(j)
	ld, sign := lu.LogDet()
	if sign == 0 {
		t.Fatalf("singular Jacobian")
	}
	return ld
}
