package factor

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// lwDraws returns n draws of (β₀, β₁, Λ) with β ~ N(μ, B) and
// Λ ~ IG(a, b), Λ in coordinate 1 (stored as log Λ if logLambda).
func lwDraws(rng *rand.Rand, n int, logLambda bool) [][]float64 {
	ig := distuv.InverseGamma{Alpha: 6, Beta: 3, Src: rng}
	out := make([][]float64, n)
	for i := range out {
		z0, z1 := rng.NormFloat64(), rng.NormFloat64()
		l := ig.Rand()
		if logLambda {
			l = math.Log(l)
		}
		out[i] = []float64{1 + 2*z0, l, -1 + 0.5*z0 + 0.5*z1}
	}
	return out
}

func TestLopesWestProposal(t *testing.T) {
	for _, logLambda := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(31, 1))
		draws := lwDraws(rng, 20000, logLambda)
		q, err := NewLopesWestProposal(draws, []int{0, 2}, []int{1}, logLambda)
		if err != nil {
			t.Fatal(err)
		}
		// IG(6, 3) has mode 3/7. A kernel estimate of the mode from 2·10⁴
		// draws is within a few percent; its error has no simple standard
		// error, so this is a coarse check only.
		if mode := q.Scale()[0] / LopesWestShape; math.Abs(mode-3.0/7) > 0.05*3/7 {
			t.Errorf("logLambda=%v: estimated mode %v, want ≈ %v", logLambda, mode, 3.0/7)
		}
		mu := q.Mean()
		// The density must be N(μ̂, 2B̂) × IG(18, 18υ²) exactly: compare with
		// gonum's distributions using the fitted quantities.
		x := mat.NewDense(len(draws), 2, nil)
		for i, d := range draws {
			x.Set(i, 0, d[0])
			x.Set(i, 1, d[2])
		}
		var cov mat.SymDense
		stat.CovarianceMatrix(&cov, x, nil)
		cov.ScaleSym(2, &cov)
		var ch mat.Cholesky
		if !ch.Factorize(&cov) {
			t.Fatal("covariance not positive definite")
		}
		mvnLogProb := func(y []float64) float64 {
			d := mat.NewVecDense(2, []float64{y[0] - mu[0], y[1] - mu[1]})
			var w mat.VecDense
			if err := ch.SolveVecTo(&w, d); err != nil {
				t.Fatal(err)
			}
			return -0.5*mat.Dot(d, &w) - math.Log(2*math.Pi) - 0.5*ch.LogDet()
		}
		ig := distuv.InverseGamma{Alpha: LopesWestShape, Beta: q.Scale()[0]}
		theta := make([]float64, 3)
		var lam []float64
		for i := 0; i < 2000; i++ {
			if err := q.Sample(rng, theta); err != nil {
				t.Fatal(err)
			}
			got, err := q.LogDensity(theta)
			if err != nil {
				t.Fatal(err)
			}
			l := theta[1]
			want := mvnLogProb([]float64{theta[0], theta[2]})
			if logLambda {
				want += ig.LogProb(math.Exp(l)) + l
				l = math.Exp(l)
			} else {
				want += ig.LogProb(l)
			}
			lam = append(lam, l)
			if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
				t.Fatalf("logLambda=%v: log q = %v, gonum %v", logLambda, got, want)
			}
		}
		m, sd := stat.MeanStdDev(lam, nil)
		if se := sd / math.Sqrt(float64(len(lam))); math.Abs(m-ig.Mean()) > 4*se {
			t.Errorf("logLambda=%v: mean sampled variance %v, IG mean %v ± 4·%v", logLambda, m, ig.Mean(), se)
		}
	}
	if _, err := NewLopesWestProposal([][]float64{{1, 2}}, []int{0}, []int{1}, false); err == nil {
		t.Error("a single draw accepted")
	}
	if _, err := NewLopesWestProposal([][]float64{{1, 2}, {2, -1}}, []int{0}, []int{1}, false); err == nil {
		t.Error("negative variance accepted")
	}
	if _, err := NewLopesWestProposal([][]float64{{1, 2}, {2, 1}}, []int{0}, []int{0}, false); err == nil {
		t.Error("repeated coordinate accepted")
	}
}
