package ppl

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/internal/checks"
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

// checkLogDensity compares m's log-density at u (what names m: compiled,
// tape) with want to the relative tolerance tol and returns it.
func checkLogDensity(t *testing.T, what string, m Model, u []float64, want, tol float64) float64 {
	t.Helper()
	got, err := m.LogDensity(u)
	if err != nil {
		t.Fatal(err)
	}
	if !near(got, want, tol) {
		t.Errorf("%s log-density %.15g, want %.15g", what, got, want)
	}
	return got
}

// mustModel returns the model that build adds to a new Builder.
func mustModel(t testing.TB, build func(b *Builder)) *GraphModel {
	t.Helper()
	b := NewBuilder()
	build(b)
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// benchmarkGradient times the log-density gradient of the model that
// build adds to a new Builder, at the origin.
func benchmarkGradient(b *testing.B, build func(b *Builder)) {
	m := mustModel(b, build)
	u := make([]float64, m.Dim())
	g := make([]float64, m.Dim())
	b.ReportAllocs()
	for b.Loop() {
		_, _ = m.LogDensityGrad(u, g)
	}
}

// checkBuildFails checks that the model build adds to a new Builder does
// not build.
func checkBuildFails(t *testing.T, build func(b *Builder)) {
	t.Helper()
	b := NewBuilder()
	build(b)
	if _, err := b.Model(); err == nil {
		t.Fatal("no error")
	} else {
		t.Log(err)
	}
}

// checkGradient compares m's gradient at u with central finite differences.
func checkGradient(t *testing.T, m Model, u []float64, tol float64) {
	t.Helper()
	g := make([]float64, m.Dim())
	if _, err := m.LogDensityGrad(u, g); err != nil {
		t.Fatalf("LogDensityGrad: %v", err)
	}
	want := checks.CentralGradient(m.LogDensity, u, 1e-5)
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
