package ppl

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
	"gorgonia.org/gorgonia"
)

type lpdf interface{ LogProb(float64) float64 }

// sumLogProb sums the reference log-densities of xs.
func sumLogProb(xs []float64, d func(i int) lpdf) float64 {
	s := 0.0
	for i, x := range xs {
		s += d(i).LogProb(x)
	}
	return s
}

func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// halfOf is a distribution folded at zero: twice the density on [0, ∞).
type halfOf struct{ d lpdf }

func (h halfOf) LogProb(x float64) float64 { return math.Ln2 + h.d.LogProb(x) }

func TestDistributionsAgainstGonum(t *testing.T) {
	pos := []float64{0.3, 1.2, 2.5, 0.05}
	reals := []float64{-1.3, 0.2, 2.5, 7}
	unit := []float64{0.1, 0.5, 0.93, 0.3}
	bits := []float64{1, 0, 0, 1}
	counts := []float64{0, 3, 7, 1}
	trials := []float64{5, 3, 10, 4}

	type tc struct {
		name  string
		build func(b *Builder)
		u     []float64
		want  float64
	}
	cases := []tc{
		{"Normal/node-params", func(b *Builder) {
			b.Sample(Normal{Mu: b.Real("mu"), Sigma: b.Real("s")}, b.Data("x", reals))
		}, []float64{0.3, 1.7}, sumLogProb(reals, func(int) lpdf { return distuv.Normal{Mu: 0.3, Sigma: 1.7} })},
		{"Normal/const-params", func(b *Builder) {
			b.Sample(Normal{Mu: 1.0, Sigma: 2}, b.Real("x", 4))
		}, reals, sumLogProb(reals, func(int) lpdf { return distuv.Normal{Mu: 1, Sigma: 2} })},
		{"Normal/vector-params", func(b *Builder) {
			b.Sample(Normal{Mu: b.Real("mu", 4), Sigma: []float64{1, 2, 3, 4}}, b.Data("x", reals))
		}, []float64{0, 1, -1, 2}, sumLogProb(reals, func(i int) lpdf {
			return distuv.Normal{Mu: []float64{0, 1, -1, 2}[i], Sigma: float64(i + 1)}
		})},
		{"HalfNormal", func(b *Builder) {
			b.Sample(HalfNormal{Sigma: b.Real("s")}, b.Data("x", pos))
		}, []float64{1.9}, sumLogProb(pos, func(int) lpdf { return halfOf{distuv.Normal{Sigma: 1.9}} })},
		{"LogNormal", func(b *Builder) {
			b.Sample(LogNormal{Mu: b.Real("mu"), Sigma: 0.7}, b.Data("x", pos))
		}, []float64{-0.4}, sumLogProb(pos, func(int) lpdf { return distuv.LogNormal{Mu: -0.4, Sigma: 0.7} })},
		{"StudentT/node-nu", func(b *Builder) {
			b.Sample(StudentT{Nu: b.Real("nu"), Mu: 0.5, Sigma: b.Real("s")}, b.Data("x", reals))
		}, []float64{3.7, 1.4}, sumLogProb(reals, func(int) lpdf { return distuv.StudentsT{Mu: 0.5, Sigma: 1.4, Nu: 3.7} })},
		{"StudentT/const-nu", func(b *Builder) {
			b.Sample(StudentT{Nu: 4, Mu: b.Real("mu"), Sigma: 2.0}, b.Data("x", reals))
		}, []float64{0.2}, sumLogProb(reals, func(int) lpdf { return distuv.StudentsT{Mu: 0.2, Sigma: 2, Nu: 4} })},
		{"Cauchy", func(b *Builder) {
			b.Sample(Cauchy{Mu: b.Real("mu"), Scale: b.Real("s")}, b.Data("x", reals))
		}, []float64{0.4, 2.2}, sumLogProb(reals, func(int) lpdf { return distuv.StudentsT{Mu: 0.4, Sigma: 2.2, Nu: 1} })},
		{"HalfCauchy", func(b *Builder) {
			b.Sample(HalfCauchy{Scale: 5}, b.Real("x", 4))
		}, pos, sumLogProb(pos, func(int) lpdf { return halfOf{distuv.StudentsT{Sigma: 5, Nu: 1}} })},
		{"Exponential", func(b *Builder) {
			b.Sample(Exponential{Rate: b.Real("r")}, b.Data("x", pos))
		}, []float64{1.3}, sumLogProb(pos, func(int) lpdf { return distuv.Exponential{Rate: 1.3} })},
		{"Gamma/node-shape", func(b *Builder) {
			b.Sample(Gamma{Shape: b.Real("a"), Rate: b.Real("r")}, b.Data("x", pos))
		}, []float64{2.3, 0.8}, sumLogProb(pos, func(int) lpdf { return distuv.Gamma{Alpha: 2.3, Beta: 0.8} })},
		{"Gamma/const-shape", func(b *Builder) {
			b.Sample(Gamma{Shape: 2.3, Rate: 0.8}, b.Real("x", 4))
		}, pos, sumLogProb(pos, func(int) lpdf { return distuv.Gamma{Alpha: 2.3, Beta: 0.8} })},
		{"InverseGamma", func(b *Builder) {
			b.Sample(InverseGamma{Shape: b.Real("a"), Scale: b.Real("s")}, b.Data("x", pos))
		}, []float64{1.1, 0.05}, sumLogProb(pos, func(int) lpdf { return distuv.InverseGamma{Alpha: 1.1, Beta: 0.05} })},
		{"Beta", func(b *Builder) {
			b.Sample(Beta{Alpha: b.Real("a"), Beta: b.Real("b")}, b.Data("x", unit))
		}, []float64{2.5, 0.7}, sumLogProb(unit, func(int) lpdf { return distuv.Beta{Alpha: 2.5, Beta: 0.7} })},
		{"Uniform", func(b *Builder) {
			b.Sample(Uniform{Min: b.Real("lo"), Max: 3.0}, b.Data("x", unit))
		}, []float64{-1}, sumLogProb(unit, func(int) lpdf { return distuv.Uniform{Min: -1, Max: 3} })},
		{"BernoulliLogit", func(b *Builder) {
			b.Sample(BernoulliLogit{Logit: b.Real("eta", 4)}, b.Data("y", bits))
		}, []float64{-0.3, 2, 40, -35}, sumLogProb(bits, func(i int) lpdf {
			return distuv.Bernoulli{P: logistic([]float64{-0.3, 2, 40, -35}[i])}
		})},
		{"BinomialLogit", func(b *Builder) {
			b.Sample(BinomialLogit{N: trials, Logit: b.Real("eta")}, b.Data("y", counts))
		}, []float64{0.4}, sumLogProb(counts, func(i int) lpdf { return distuv.Binomial{N: trials[i], P: logistic(0.4)} })},
		{"PoissonLog", func(b *Builder) {
			b.Sample(PoissonLog{LogRate: b.Real("eta", 4)}, b.Data("y", counts))
		}, []float64{0.1, 1, 2, -0.5}, sumLogProb(counts, func(i int) lpdf {
			return distuv.Poisson{Lambda: math.Exp([]float64{0.1, 1, 2, -0.5}[i])}
		})},
		{"Mixture/const-weights", func(b *Builder) {
			b.Sample(Mixture{Weights: []float64{0.3, 0.7}, Components: []Distribution{
				Normal{Mu: b.Real("m1"), Sigma: 1.0}, StudentT{Nu: 3, Mu: b.Real("m2"), Sigma: 2.0},
			}}, b.Data("x", reals))
		}, []float64{-1, 40}, sumLogProb(reals, func(int) lpdf {
			return mix{[]float64{0.3, 0.7}, []lpdf{distuv.Normal{Mu: -1, Sigma: 1}, distuv.StudentsT{Mu: 40, Sigma: 2, Nu: 3}}}
		})},
		{"Mixture/node-weights", func(b *Builder) {
			b.Sample(Mixture{Weights: b.Real("w", 3), Components: []Distribution{
				Normal{Mu: 0.0, Sigma: 1.0}, Normal{Mu: 3.0, Sigma: 1.0}, Cauchy{Mu: 0.0, Scale: 10.0},
			}}, b.Data("x", reals))
		}, []float64{0.2, 0.5, 0.3}, sumLogProb(reals, func(int) lpdf {
			return mix{[]float64{0.2, 0.5, 0.3}, []lpdf{distuv.Normal{Sigma: 1}, distuv.Normal{Mu: 3, Sigma: 1}, distuv.StudentsT{Sigma: 10, Nu: 1}}}
		})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, tape := buildBoth(t, c.build)
			checkLogDensity(t, "compiled", m, c.u, c.want, 1e-11)
			checkLogDensity(t, "tape", tape, c.u, c.want, 1e-11)
			checkGradient(t, m, c.u, 1e-6)
		})
	}
}

// mix is a reference mixture density.
type mix struct {
	w []float64
	d []lpdf
}

func (m mix) LogProb(x float64) float64 {
	s := 0.0
	for k, d := range m.d {
		s += m.w[k] * math.Exp(d.LogProb(x))
	}
	return math.Log(s)
}

func TestMixtureTailsStayFinite(t *testing.T) {
	// Far from both components exp(log-density) underflows; the
	// log-sum-exp keeps the value finite and exact.
	m, _ := buildBoth(t, func(b *Builder) {
		b.Sample(Mixture{Weights: []float64{0.5, 0.5}, Components: []Distribution{
			Normal{Mu: b.Real("m"), Sigma: 1.0}, Normal{Mu: 100.0, Sigma: 1.0},
		}}, b.Data("x", []float64{-60}))
	})
	want := math.Log(0.5) + distuv.Normal{Sigma: 1}.LogProb(-60) + math.Log1p(math.Exp(distuv.Normal{Mu: 100, Sigma: 1}.LogProb(-60)-distuv.Normal{Sigma: 1}.LogProb(-60)))
	checkLogDensity(t, "compiled", m, []float64{0}, want, 1e-12)
}

// mvnRef is the multivariate normal log-density written with gonum mat,
// the reference for MvNormal. (gonum's distmv needs golang.org/x/tools,
// which is not among the project's pinned modules.)
type mvnRef struct {
	mu []float64
	ch *mat.Cholesky
}

func (r mvnRef) LogProb(x []float64) float64 {
	n := len(x)
	d := mat.NewVecDense(n, nil)
	d.SubVec(mat.NewVecDense(n, x), mat.NewVecDense(n, r.mu))
	var z mat.VecDense
	if err := r.ch.SolveVecTo(&z, d); err != nil {
		panic(err)
	}
	return -0.5 * (float64(n)*math.Log(2*math.Pi) + r.ch.LogDet() + mat.Dot(d, &z))
}

func TestMvNormalAgainstGonum(t *testing.T) {
	mu := []float64{0.5, -1, 2}
	cov := mat.NewSymDense(3, []float64{
		2, 0.6, -0.3,
		0.6, 1.5, 0.4,
		-0.3, 0.4, 1,
	})
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		t.Fatal("not SPD")
	}
	var l mat.TriDense
	ch.LTo(&l)
	ref := mvnRef{mu, &ch}
	rows := mat.NewDense(4, 3, []float64{
		0.1, 0.2, 0.3,
		-1, 2, 0,
		3, -2, 1,
		0.5, -1, 2,
	})
	want := 0.0
	for i := range 4 {
		want += ref.LogProb(rows.RawRowView(i))
	}
	lflat := denseRows(&l)
	covFlat := denseRows(cov)
	cases := []struct {
		name  string
		build func(b *Builder)
		u     []float64
		want  float64
	}{
		{"const-cov/vector-x", func(b *Builder) {
			b.Sample(MvNormal{Mu: mu, Sigma: cov}, b.Real("x", 3))
		}, rows.RawRowView(1), ref.LogProb(rows.RawRowView(1))},
		{"const-L/matrix-x/node-mu", func(b *Builder) {
			b.Sample(MvNormal{Mu: b.Real("mu", 3), L: &l}, b.DataMatrix("y", rows))
		}, mu, want},
		{"node-cov/matrix-x", func(b *Builder) {
			b.Sample(MvNormal{Mu: mu, Sigma: b.Real("S", 3, 3)}, b.DataMatrix("y", rows))
		}, covFlat, want},
		{"node-L/vector-x", func(b *Builder) {
			b.Sample(MvNormal{Mu: b.Real("mu", 3), L: b.Real("L", 3, 3)}, b.Data("x", rows.RawRowView(2)))
		}, append(append([]float64(nil), mu...), lflat...), ref.LogProb(rows.RawRowView(2))},
		{"node-L/matrix-x/scalar-mu", func(b *Builder) {
			b.Sample(MvNormal{Mu: 0.0, L: b.CholeskyFactorCov("L", 3, 3)}, b.DataMatrix("y", rows))
			b.AddLogDensity(b.Check(gorgonia.Neg(b.Check(gorgonia.Sum(b.params[0].wrt[0]))))) // cancel the log-Jacobian
		}, nil, 0},
	}
	for _, c := range cases[:4] {
		t.Run(c.name, func(t *testing.T) {
			m, tape := buildBoth(t, c.build)
			checkLogDensity(t, "compiled", m, c.u, c.want, 1e-11)
			checkLogDensity(t, "tape", tape, c.u, c.want, 1e-11)
			checkGradient(t, m, c.u, 1e-6)
		})
	}
	t.Run(cases[4].name, func(t *testing.T) {
		m, _ := buildBoth(t, cases[4].build)
		u := make([]float64, m.Dim())
		if err := m.UnconstrainNamed(map[string][]float64{"L": lflat}, u); err != nil {
			t.Fatal(err)
		}
		ref0 := mvnRef{make([]float64, 3), &ch}
		w := 0.0
		for i := range 4 {
			w += ref0.LogProb(rows.RawRowView(i))
		}
		checkLogDensity(t, "compiled", m, u, w, 1e-11)
		checkGradient(t, m, u, 1e-6)
	})
}

func TestDistributionErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *Builder)
	}{
		{"shape-mismatch", func(b *Builder) { b.Sample(Normal{Mu: b.Real("mu", 3), Sigma: 1.0}, b.Data("x", []float64{1, 2})) }},
		{"bad-type", func(b *Builder) { b.Sample(Normal{Mu: "zero", Sigma: 1.0}, b.Real("x")) }},
		{"missing-param", func(b *Builder) { b.Sample(Normal{Mu: 0.0}, b.Real("x")) }},
		{"nan-param", func(b *Builder) { b.Sample(Normal{Mu: math.NaN(), Sigma: 1.0}, b.Real("x")) }},
		{"bernoulli-non-binary", func(b *Builder) {
			b.Sample(BernoulliLogit{Logit: b.Real("eta")}, b.Data("y", []float64{0, 2}))
		}},
		{"bernoulli-computed-obs", func(b *Builder) {
			b.Sample(BernoulliLogit{Logit: 0.0}, b.Check(gorgonia.Exp(b.Real("x"))))
		}},
		{"poisson-negative", func(b *Builder) {
			b.Sample(PoissonLog{LogRate: b.Real("eta")}, b.Data("y", []float64{-1}))
		}},
		{"binomial-too-many", func(b *Builder) {
			b.Sample(BinomialLogit{N: 3, Logit: b.Real("eta")}, b.Data("y", []float64{4}))
		}},
		{"mixture-one-component", func(b *Builder) {
			b.Sample(Mixture{Weights: []float64{1}, Components: []Distribution{Normal{Mu: 0.0, Sigma: 1.0}}}, b.Real("x"))
		}},
		{"mixture-weights", func(b *Builder) {
			b.Sample(Mixture{Weights: []float64{0.5, 0.6}, Components: []Distribution{Normal{Mu: 0.0, Sigma: 1.0}, Normal{Mu: 1.0, Sigma: 1.0}}}, b.Real("x"))
		}},
		{"mvnormal-both", func(b *Builder) {
			b.Sample(MvNormal{Mu: 0.0, Sigma: mat.NewDense(2, 2, []float64{1, 0, 0, 1}), L: mat.NewDense(2, 2, []float64{1, 0, 0, 1})}, b.Real("x", 2))
		}},
		{"mvnormal-not-spd", func(b *Builder) {
			b.Sample(MvNormal{Mu: 0.0, Sigma: mat.NewDense(2, 2, []float64{1, 2, 2, 1})}, b.Real("x", 2))
		}},
		{"mvnormal-shape", func(b *Builder) {
			b.Sample(MvNormal{Mu: 0.0, Sigma: mat.NewDense(2, 2, []float64{1, 0, 0, 1})}, b.Real("x", 3))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkBuildFails(t, c.build) })
	}
}

// TestMvNormalPointwiseMatchesSufficient checks that the per-row path
// (LogProbs, used by mixtures) and the sufficient-statistics path of
// LogProb agree, for constant and node covariances and means.
func TestMvNormalPointwiseMatchesSufficient(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	y := mat.NewDense(7, 3, nil)
	for i := range 7 {
		for j := range 3 {
			y.Set(i, j, rng.NormFloat64()+float64(j))
		}
	}
	cov := mat.NewSymDense(3, []float64{2, 0.6, -0.3, 0.6, 1.5, 0.4, -0.3, 0.4, 1})
	for _, c := range []struct {
		name string
		dist func(b *Builder) MvNormal
	}{
		{"const", func(b *Builder) MvNormal { return MvNormal{Mu: []float64{0, 1, 2}, Sigma: cov} }},
		{"node-mu", func(b *Builder) MvNormal { return MvNormal{Mu: b.Real("mu", 3), Sigma: cov} }},
		{"node-L", func(b *Builder) MvNormal { return MvNormal{Mu: 0.5, L: b.CholeskyFactorCov("L", 3, 3)} }},
		{"node-both", func(b *Builder) MvNormal {
			return MvNormal{Mu: b.Real("mu", 3), Sigma: b.Check(gorgonia.Add(b.Check(gorgonia.Mul(b.Real("A", 3, 3), b.Check(gorgonia.Transpose(b.Real("A2", 3, 3))))), b.Check(DiagMatrix(b.Positive("d", 3)))))}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var suff, point *GraphModel
			for i, pointwise := range []bool{false, true} {
				b := NewBuilder()
				b.Real("pad")
				d := c.dist(b)
				ys := b.DataMatrix("y", y)
				if pointwise {
					lps, err := d.LogProbs(ys)
					if err != nil {
						t.Fatal(err)
					}
					b.AddLogDensity(lps)
				} else {
					b.Sample(d, ys)
				}
				m, err := b.Model()
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					suff = m
				} else {
					point = m
				}
			}
			u := make([]float64, suff.Dim())
			for i := range u {
				u[i] = 0.3 * rng.NormFloat64()
			}
			a, err := suff.LogDensity(u)
			if err != nil {
				t.Fatal(err)
			}
			p, err := point.LogDensity(u)
			if err != nil {
				t.Fatal(err)
			}
			if !near(a, p, 1e-11) {
				t.Errorf("sufficient statistics %.15g, pointwise %.15g", a, p)
			}
			checkGradient(t, suff, u, 1e-6)
		})
	}
}

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
