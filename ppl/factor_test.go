package ppl

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
	"gorgonia.org/gorgonia"
)

// factorModel is the Bayesian factor analysis model of the paper's §4.3
// with k factors: y_i ~ N(0, BBᵀ + diag λ), B p×k lower-triangular with
// positive diagonal, β_jj ~ N⁺(0, 1), β_ij ~ N(0, 1) below the diagonal,
// λ_j ~ InvGamma(1.1, 0.05).
func factorModel(y *mat.Dense, k int) func(b *Builder) {
	return func(b *Builder) {
		_, p := y.Dims()
		B := b.CholeskyFactorCov("B", p, k)
		lambda := b.Positive("lambda", p)
		b.Sample(HalfNormal{Sigma: 1}, b.Check(Diag(B)))
		b.Sample(Normal{Mu: 0, Sigma: 1}, b.Check(StrictlyLower(B)))
		b.Sample(InverseGamma{Shape: 1.1, Scale: 0.05}, lambda)
		bbt := b.Check(gorgonia.Mul(B, b.Check(gorgonia.Transpose(B))))
		sigma := b.Check(gorgonia.Add(bbt, b.Check(DiagMatrix(lambda))))
		b.Sample(MvNormal{Mu: 0, Sigma: sigma}, b.DataMatrix("y", y))
	}
}

// factorRef is the same log-density on the unconstrained scale, written
// with gonum: u = (log diag B, lower B row-major, log λ).
func factorRef(y *mat.Dense, k int, u []float64) float64 {
	n, p := y.Dims()
	B := mat.NewDense(p, k, nil)
	lp := 0.0
	for j := 0; j < k; j++ {
		B.Set(j, j, math.Exp(u[j]))
		lp += u[j] + math.Ln2 + distuv.UnitNormal.LogProb(B.At(j, j))
	}
	idx := k
	for i := 0; i < p; i++ {
		for j := 0; j < min(i, k); j++ {
			B.Set(i, j, u[idx])
			lp += distuv.UnitNormal.LogProb(u[idx])
			idx++
		}
	}
	sigma := mat.NewSymDense(p, nil)
	var bbt mat.Dense
	bbt.Mul(B, B.T())
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			sigma.SetSym(i, j, bbt.At(i, j))
		}
		lam := math.Exp(u[idx+i])
		lp += u[idx+i] + distuv.InverseGamma{Alpha: 1.1, Beta: 0.05}.LogProb(lam)
		sigma.SetSym(i, i, sigma.At(i, i)+lam)
	}
	ref := mvnRef{make([]float64, p), new(mat.Cholesky)}
	if !ref.ch.Factorize(sigma) {
		return math.NaN()
	}
	for i := 0; i < n; i++ {
		lp += ref.LogProb(y.RawRowView(i))
	}
	return lp
}

func TestFactorAnalysisModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const n, p, k = 30, 6, 2
	y := mat.NewDense(n, p, nil)
	for i := 0; i < n; i++ {
		f := []float64{rng.NormFloat64(), rng.NormFloat64()}
		for j := 0; j < p; j++ {
			y.Set(i, j, 0.8*f[0]+0.3*float64(j%3)*f[1]+0.5*rng.NormFloat64())
		}
	}
	m, tape := buildBoth(t, factorModel(y, k))
	if want := p*(k+1) - k*(k-1)/2; m.Dim() != want {
		t.Fatalf("Dim %d, want %d", m.Dim(), want)
	}
	u := make([]float64, m.Dim())
	for trial := 0; trial < 3; trial++ {
		if err := m.Init(rng, u); err != nil {
			t.Fatal(err)
		}
		got := checkLogDensity(t, "compiled", m, u, factorRef(y, k, u), 1e-11)
		checkLogDensity(t, "tape", tape, u, got, 1e-11)
		checkGradient(t, m, u, 1e-6)
	}
}

func TestMatrixHelpers(t *testing.T) {
	m, _ := buildBoth(t, func(b *Builder) {
		a := b.Real("A", 3, 2)
		b.Report("d", b.Check(Diag(a)))
		b.Report("l", b.Check(StrictlyLower(a)))
		b.Report("D", b.Check(DiagMatrix(b.Check(Diag(a)))))
	})
	u := []float64{1, 2, 3, 4, 5, 6}
	x := make([]float64, len(m.ParamNames()))
	if err := m.Constrain(u, x); err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 2, 3, 4, 5, 6, 1, 4, 3, 5, 6, 1, 0, 0, 4}
	for i := range want {
		if x[i] != want[i] {
			t.Fatalf("outputs %v, want %v", x, want)
		}
	}
	b := NewBuilder()
	v := b.Real("v", 3)
	if _, err := Diag(v); err == nil {
		t.Error("Diag of a vector accepted")
	}
	if _, err := StrictlyLower(b.Real("s", 1, 1)); err == nil {
		t.Error("StrictlyLower of 1×1 accepted")
	}
	if _, err := DiagMatrix(b.Real("M", 2, 2)); err == nil {
		t.Error("DiagMatrix of a matrix accepted")
	}
}

func BenchmarkFactorAnalysis(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n, p, k = 143, 6, 3
	y := mat.NewDense(n, p, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			y.Set(i, j, rng.NormFloat64())
		}
	}
	benchmarkGradient(b, factorModel(y, k))
}
