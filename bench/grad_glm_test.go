package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/kernels"
)

// The Poisson-log and normal-identity regressions of BenchmarkGradient, the
// same size as logistic (n = 1000, d = 25, synthetic data from fixed seeds,
// standard normal priors), each as a fused GLM op ("compiled-glm"), as
// gorgonia primitives ("compiled") and as hand-written Go ("hand": one BLAS
// matrix-vector product each way and one exp per observation).
func init() {
	registerGradModel("poisson", poissonSetup)
	registerGradModel("normal", normalSetup)
}

// regData is a design matrix with outcomes.
type regData struct {
	n, d int
	x, y []float64
}

// newRegData draws X ~ N(0, 1) and y from the Poisson-log (poisson true)
// or normal-identity (σ = 1.5) model at β ~ N(0, 1/d).
func newRegData(n, d int, poisson bool, seed uint64) *regData {
	rng := rand.New(rand.NewPCG(seed, 7))
	x, y := drawRegression(rng, n, d, func(eta float64) float64 {
		if !poisson {
			return eta + 1.5*rng.NormFloat64()
		}
		l, k, p := math.Exp(-math.Exp(eta)), 0.0, rng.Float64()
		for p > l {
			k++
			p *= rng.Float64()
		}
		return k
	})
	return &regData{n: n, d: d, x: x, y: y}
}

// drawRegression draws β ~ N(0, 1/d), then for each of n rows a design row
// X_i ~ N(0, I) and its outcome draw(X_i·β), all from rng in that order.
func drawRegression(rng *rand.Rand, n, d int, draw func(eta float64) float64) (x, y []float64) {
	beta := make([]float64, d)
	for j := range beta {
		beta[j] = rng.NormFloat64() / math.Sqrt(float64(d))
	}
	x, y = make([]float64, n*d), make([]float64, n)
	for i := 0; i < n; i++ {
		eta := 0.0
		for j := 0; j < d; j++ {
			v := rng.NormFloat64()
			x[i*d+j] = v
			eta += v * beta[j]
		}
		y[i] = draw(eta)
	}
	return x, y
}

func (r *regData) nodes(g *G.ExprGraph) (x, y *G.Node) {
	x = G.NewMatrix(g, tensor.Float64, G.WithShape(r.n, r.d), G.WithName("X"),
		G.WithValue(tensor.New(tensor.WithShape(r.n, r.d), tensor.WithBacking(append([]float64(nil), r.x...)))))
	y = G.NewVector(g, tensor.Float64, G.WithShape(r.n), G.WithName("y"),
		G.WithValue(tensor.New(tensor.WithShape(r.n), tensor.WithBacking(append([]float64(nil), r.y...)))))
	return x, y
}

// halfSquares is −½Σv².
func halfSquares(v *G.Node) *G.Node {
	return G.Must(G.Mul(G.NewConstant(-0.5), G.Must(G.Sum(G.Must(G.Square(v))))))
}

// logFactorials is Σ log(y_i!).
func (r *regData) logFactorials() float64 {
	var c float64
	for _, v := range r.y {
		lg, _ := math.Lgamma(v + 1)
		c += lg
	}
	return c
}

// poissonGraph is the Poisson-log regression with a N(0, 1) prior on β,
// through ops.PoissonLogGLM (fused) or primitives.
func (r *regData) poissonGraph(fused bool) (*G.ExprGraph, *G.Node, []*G.Node) {
	g := G.NewGraph()
	x, y := r.nodes(g)
	beta := G.NewVector(g, tensor.Float64, G.WithShape(r.d), G.WithName("beta"), G.WithInit(G.Zeroes()))
	var ll *G.Node
	if fused {
		ll = G.Must(ops.PoissonLogGLM(x, beta, y))
	} else {
		eta := G.Must(G.Mul(x, beta))
		ll = G.Must(G.Sum(G.Must(G.Sub(G.Must(G.HadamardProd(y, eta)), G.Must(G.Exp(eta))))))
		ll = G.Must(G.Sub(ll, G.NewConstant(r.logFactorials())))
	}
	return g, G.Must(G.Add(ll, halfSquares(beta))), []*G.Node{beta}
}

func (r *regData) poissonHand() gradImpl {
	eta := make([]float64, r.n)
	xm := blas64.General{Rows: r.n, Cols: r.d, Stride: r.d, Data: r.x}
	c := r.logFactorials()
	return func(beta, grad []float64) float64 {
		blas64.Gemv(blas.NoTrans, 1, xm, blas64.Vector{N: r.d, Inc: 1, Data: beta}, 0, blas64.Vector{N: r.n, Inc: 1, Data: eta})
		lp := -c
		for i, e := range eta {
			mu := math.Exp(e)
			lp += r.y[i]*e - mu
			eta[i] = r.y[i] - mu
		}
		return withNormalPrior(lp, beta, grad, xm, eta)
	}
}

func poissonSetup(tb testing.TB) ([]float64, map[string]gradImpl) {
	r := newRegData(logisticN, logisticD, true, 2025)
	return startPoint(26, r.d), glmImpls(tb, r.poissonGraph, r.poissonHand())
}

// startPoint is n draws of N(0, 1/25) from the stream (seed, 1).
func startPoint(seed uint64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64() / 5
	}
	return x
}

// glmImpls is a regression compiled from primitives and with its fused
// GLM op, beside its hand-written log-density.
func glmImpls(tb testing.TB, graph func(fused bool) (*G.ExprGraph, *G.Node, []*G.Node), hand gradImpl) map[string]gradImpl {
	g1, out1, wrt1 := graph(false)
	g2, out2, wrt2 := graph(true)
	return map[string]gradImpl{
		"compiled":     compiledImpl(tb, g1, out1, wrt1),
		"compiled-glm": compiledImpl(tb, g2, out2, wrt2),
		"hand":         hand,
	}
}

// normalGraph is the normal-identity regression on θ = (β, log σ) with
// N(0, 1) priors on both, the Jacobian of σ = e^τ included, through
// ops.NormalIDGLM (fused) or primitives.
func (r *regData) normalGraph(fused bool) (*G.ExprGraph, *G.Node, []*G.Node) {
	g := G.NewGraph()
	x, y := r.nodes(g)
	theta := G.NewVector(g, tensor.Float64, G.WithShape(r.d+1), G.WithName("theta"), G.WithInit(G.Zeroes()))
	beta := G.Must(G.Slice(theta, G.S(0, r.d)))
	tau := G.Must(G.Slice(theta, G.S(r.d)))
	sigma := G.Must(G.Exp(tau))
	var ll *G.Node
	if fused {
		ll = G.Must(ops.NormalIDGLM(x, beta, y, sigma))
	} else {
		res := G.Must(G.Sub(y, G.Must(G.Mul(x, beta))))
		ss := G.Must(G.Sum(G.Must(G.Square(res))))
		ll = G.Must(G.Mul(G.Must(G.Mul(G.NewConstant(-0.5), ss)), G.Must(G.Exp(G.Must(G.Mul(G.NewConstant(-2.0), tau))))))
		ll = G.Must(G.Sub(ll, G.Must(G.Mul(G.NewConstant(float64(r.n)), tau))))
		ll = G.Must(G.Sub(ll, G.NewConstant(0.5*float64(r.n)*math.Log(2*math.Pi))))
	}
	lp := G.Must(G.Add(ll, halfSquares(theta)))
	return g, G.Must(G.Add(lp, tau)), []*G.Node{theta}
}

func (r *regData) normalHand() gradImpl {
	res := make([]float64, r.n)
	xm := blas64.General{Rows: r.n, Cols: r.d, Stride: r.d, Data: r.x}
	nf := float64(r.n)
	return func(theta, grad []float64) float64 {
		beta, tau := theta[:r.d], theta[r.d]
		inv := math.Exp(-2 * tau)
		blas64.Gemv(blas.NoTrans, 1, xm, blas64.Vector{N: r.d, Inc: 1, Data: beta}, 0, blas64.Vector{N: r.n, Inc: 1, Data: res})
		var ss float64
		for i, e := range res {
			v := r.y[i] - e
			ss += v * v
			res[i] = v * inv
		}
		lp := -0.5*ss*inv - nf*tau - 0.5*nf*math.Log(2*math.Pi) + tau
		lp = withNormalPrior(lp, theta, grad, xm, res)
		grad[r.d] += ss*inv - nf + 1
		return lp
	}
}

func normalSetup(tb testing.TB) ([]float64, map[string]gradImpl) {
	r := newRegData(logisticN, logisticD, false, 2026)
	x := startPoint(27, r.d+1)
	x[r.d] = math.Log(1.5)
	return x, glmImpls(tb, r.normalGraph, r.normalHand())
}

// BenchmarkGLMWorkers times one gradient of a logistic regression on
// 100,000 rows and 100 covariates, the fused ops.BernoulliLogitGLM with 1
// and 2 workers (ad.Program.SetWorkers): one chain on several cores.
// Compare ns/op (wall time) on idle cores; cpu-ns/op is the CPU time of
// all workers together.
//
// The kernel reads the 80 MB design matrix from memory once per gradient,
// so its speed-up is bounded by the machine's: stream/workers=w sums the
// same matrix on w goroutines (contiguous shares, gonum's assembly Sum, a
// goroutine started per operation as the kernel does), a pure read of X at
// the memory system's rate. Its ns/op ratio between 1 and 2 workers is the
// speed-up a memory-bound kernel can reach on the machine.
func BenchmarkGLMWorkers(b *testing.B) {
	ld := newLogisticData(100000, 100, 2027)
	p := ld.compileGLM(b)
	beta := make([]float64, ld.d)
	rng := rand.New(rand.NewPCG(28, 1))
	for i := range beta {
		beta[i] = rng.NormFloat64() / 10
	}
	grad := make([]float64, ld.d)
	for _, w := range []int{1, 2} {
		b.Run(map[int]string{1: "workers=1", 2: "workers=2"}[w], func(b *testing.B) {
			q := p.Clone()
			if err := q.SetWorkers(w); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				if _, err := q.LogDensityGrad(beta, grad); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(1e9*(cpuSeconds()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
	b.Run("paired", func(b *testing.B) {
		q1, q2 := p.Clone(), p.Clone()
		if err := q2.SetWorkers(2); err != nil {
			b.Fatal(err)
		}
		var t1, t2 time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for _, q := range []*ad.Program{q1, q2} {
				t0 := time.Now()
				if _, err := q.LogDensityGrad(beta, grad); err != nil {
					b.Fatal(err)
				}
				if q == q1 {
					t1 += time.Since(t0)
				} else {
					t2 += time.Since(t0)
				}
			}
		}
		b.ReportMetric(float64(t1.Nanoseconds())/float64(b.N), "w1-ns/grad")
		b.ReportMetric(float64(t2.Nanoseconds())/float64(b.N), "w2-ns/grad")
		b.ReportMetric(float64(t1)/float64(t2), "speedup")
	})
	for _, w := range []int{1, 2} {
		b.Run(map[int]string{1: "stream/workers=1", 2: "stream/workers=2"}[w], func(b *testing.B) {
			part := make([]float64, w)
			share := (len(ld.x) + w - 1) / w
			sum := func(k int) { part[k] = floats.Sum(ld.x[k*share : min((k+1)*share, len(ld.x))]) }
			b.SetBytes(int64(8 * len(ld.x)))
			b.ResetTimer()
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				var wg sync.WaitGroup
				for k := 1; k < w; k++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						sum(k)
					}()
				}
				sum(0)
				wg.Wait()
			}
			b.ReportMetric(1e9*(cpuSeconds()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestGLMWorkersDraws runs the same NUTS chain (warm-up included) on a
// logistic regression large enough to be split into several chunks of rows,
// with 1 and with 2 workers per gradient: the draws must be identical.
func TestGLMWorkersDraws(t *testing.T) {
	ld := newLogisticData(6000, 5, 2029)
	p := ld.compileGLM(t)
	var draws [][]float64
	for _, w := range []int{1, 2} {
		q := p.Clone()
		if err := q.SetWorkers(w); err != nil {
			t.Fatal(err)
		}
		res, err := kernels.Sample(context.Background(), func(int) (kernels.Target, error) { return q, nil },
			&kernels.SampleSettings{Chains: 1, Warmup: 100, Draws: 100, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		draws = append(draws, res.Chains[0].Draws)
	}
	if len(draws[0]) != 100*ld.d {
		t.Fatalf("%d draw values, want %d", len(draws[0]), 100*ld.d)
	}
	if draws[0][0] == draws[0][len(draws[0])-ld.d] {
		t.Fatal("the chain did not move")
	}
	for i, v := range draws[0] {
		if draws[1][i] != v {
			t.Fatalf("2 workers: draw value %d = %v, 1 worker %v", i, draws[1][i], v)
		}
	}
}

// compileGLM compiles the fused-GLM form of the logistic regression.
func (ld *logisticData) compileGLM(tb testing.TB) *ad.Program {
	g, out, wrt := ld.graphGLM()
	p, err := ad.Compile(g, out, wrt)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
