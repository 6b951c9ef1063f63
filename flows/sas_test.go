package flows

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/checks"
)

// sas is the paper's sinh-arcsinh target (§4.2): θ = S(L z), z ~ N(0, I),
// S(x)_i = sinh((asinh(x_i) + ε_i)/δ_i).
type sas struct {
	eps, delta []float64
	cov        *mat.SymDense
	chol       mat.Cholesky
}

func newSAS(eps, delta []float64, cov []float64) *sas {
	n := len(eps)
	s := &sas{eps: eps, delta: delta, cov: mat.NewSymDense(n, cov)}
	if !s.chol.Factorize(s.cov) {
		panic("sas: covariance not positive definite")
	}
	return s
}

func sas1() *sas { return newSAS([]float64{-2}, []float64{1}, []float64{1}) }
func sas2() *sas {
	return newSAS([]float64{1.5, -2}, []float64{1, 1.5}, []float64{1, 0.99, 0.99, 1})
}

func (s *sas) draw(rng *rand.Rand, rows int) [][]float64 {
	n := len(s.eps)
	var l mat.TriDense
	s.chol.LTo(&l)
	out := make([][]float64, rows)
	z := make([]float64, n)
	for r := range out {
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		th := make([]float64, n)
		for i := 0; i < n; i++ {
			x := 0.0
			for j := 0; j <= i; j++ {
				x += l.At(i, j) * z[j]
			}
			th[i] = math.Sinh((math.Asinh(x) + s.eps[i]) / s.delta[i])
		}
		out[r] = th
	}
	return out
}

// logPDF is the exact density: x_i = sinh(δ_i asinh θ_i − ε_i) is normal.
func (s *sas) logPDF(th []float64) float64 {
	n := len(th)
	x := make([]float64, n)
	ld := 0.0
	for i, t := range th {
		a := s.delta[i]*math.Asinh(t) - s.eps[i]
		x[i] = math.Sinh(a)
		ld += math.Log(s.delta[i]*math.Cosh(a)) - 0.5*math.Log1p(t*t)
	}
	var sol mat.VecDense
	xv := mat.NewVecDense(n, x)
	if err := s.chol.SolveVecTo(&sol, xv); err != nil {
		panic(err)
	}
	quad := mat.Dot(xv, &sol)
	return -0.5*quad - 0.5*s.chol.LogDet() - float64(n)*halfLog2Pi + ld
}

// ksStatistic is the two-sample Kolmogorov–Smirnov distance.
func ksStatistic(a, b []float64) float64 {
	a = append([]float64(nil), a...)
	b = append([]float64(nil), b...)
	sort.Float64s(a)
	sort.Float64s(b)
	var i, j int
	d := 0.0
	for i < len(a) && j < len(b) {
		v := math.Min(a[i], b[j])
		for i < len(a) && a[i] <= v {
			i++
		}
		for j < len(b) && b[j] <= v {
			j++
		}
		d = math.Max(d, math.Abs(float64(i)/float64(len(a))-float64(j)/float64(len(b))))
	}
	return d
}

// energyDistance is the two-sample energy statistic 2E|X−Y| − E|X−X'| − E|Y−Y'|.
func energyDistance(x, y [][]float64) float64 {
	mean := func(a, b [][]float64) float64 {
		s := 0.0
		for _, u := range a {
			for _, v := range b {
				d := 0.0
				for i := range u {
					d += (u[i] - v[i]) * (u[i] - v[i])
				}
				s += math.Sqrt(d)
			}
		}
		return s / float64(len(a)*len(b))
	}
	return 2*mean(x, y) - mean(x, x) - mean(y, y)
}

// energyPermutationP is the permutation p-value of the energy statistic.
func energyPermutationP(x, y [][]float64, perms int, rng *rand.Rand) float64 {
	obs := energyDistance(x, y)
	pool := append(append([][]float64(nil), x...), y...)
	ge := 1
	for p := 0; p < perms; p++ {
		rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		if energyDistance(pool[:len(x)], pool[len(x):]) >= obs {
			ge++
		}
	}
	return float64(ge) / float64(perms+1)
}

// TestFitSAS fits the paper's RQMA flow to exact draws of the two
// sinh-arcsinh targets and checks (a) the held-out mean log-likelihood is
// within 0.05 nats of the exact density's on the same points, and (b) the
// flow's pushforward of N(0, I) is indistinguishable from exact draws by
// per-coordinate Kolmogorov–Smirnov tests and an energy-distance
// permutation test.
func TestFitSAS(t *testing.T) {
	train := checks.Size(20000, 5000)
	for _, tc := range []struct {
		name string
		s    *sas
	}{{"k1", sas1()}, {"k2", sas2()}} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.name == "k2" {
				t.Skip("k2 trains for about 10 s; run without -short")
			}
			rng := rand.New(rand.NewPCG(2024, 1))
			x := tc.s.draw(rng, train)
			held := tc.s.draw(rng, 5000)
			// The paper's schedule (learning rate 3e-3) under-fits k2: held-out
			// gaps of 0.065 and 0.083 nats at seeds 1 and 2, against 0.023,
			// 0.033 and 0.032 at seeds 1–3 with 1e-2 (2·10⁴ draws each).
			opts := DefaultTrainOptions()
			opts.LearningRate = 1e-2
			opts.Seed = 1
			f, rep, err := FitRQMA(context.Background(), x, PaperRQMAConfig(), opts)
			if err != nil {
				t.Fatal(err)
			}
			// Held-out log-likelihood gap, with its Monte Carlo standard
			// error (the gap is a mean of per-point differences).
			diffs := make([]float64, len(held))
			for r, th := range held {
				lq, err := f.LogDensity(th)
				if err != nil {
					t.Fatal(err)
				}
				diffs[r] = tc.s.logPDF(th) - lq
			}
			gap, sd := stat.MeanStdDev(diffs, nil)
			se := sd / math.Sqrt(float64(len(diffs)))
			q, err := Assess(f, held, nil, func(th []float64) (float64, error) { return tc.s.logPDF(th), nil }, 4000, 1)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d iterations in %v, held-out KL estimate %.4f ± %.4f nats, IS ESS %.0f/%d",
				tc.name, rep.Iterations, rep.Elapsed, gap, se, q.ESS, q.Draws)
			// A KL divergence of a few hundredths of a nat leaves the importance
			// weights nearly uniform.
			if q.ESSFraction < 0.8 {
				t.Errorf("importance-sampling ESS fraction %.3f < 0.8", q.ESSFraction)
			}
			if gap > 0.05 {
				t.Errorf("held-out log-likelihood %.4f nats below the exact density (limit 0.05)", gap)
			}
			// Pushforward of the reference against exact draws.
			n := f.Dim()
			m := 2000
			push := make([][]float64, m)
			z := make([]float64, n)
			zr := rand.New(rand.NewPCG(99, 3))
			for r := range push {
				for i := range z {
					z[i] = zr.NormFloat64()
				}
				push[r] = make([]float64, n)
				if _, err := f.Inverse(z, push[r]); err != nil {
					t.Fatal(err)
				}
			}
			exact := tc.s.draw(rand.New(rand.NewPCG(98, 4)), m)
			// KS critical value at α = 0.001 per coordinate: c(α)·√(2/m).
			crit := math.Sqrt(-0.5*math.Log(0.001/2)) * math.Sqrt(2/float64(m))
			for i := 0; i < n; i++ {
				a, b := make([]float64, m), make([]float64, m)
				for r := range a {
					a[r], b[r] = push[r][i], exact[r][i]
				}
				if d := ksStatistic(a, b); d > crit {
					t.Errorf("coordinate %d: KS distance %.4f > %.4f", i, d, crit)
				}
			}
			p := energyPermutationP(push[:300], exact[:300], 199, rand.New(rand.NewPCG(5, 5)))
			t.Logf("%s: energy-distance permutation p = %.3f", tc.name, p)
			if p < 0.01 {
				t.Errorf("energy-distance permutation test rejects, p = %.4f", p)
			}
		})
	}
}
