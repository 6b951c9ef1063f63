package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/ad/ops"
)

// gradImpl evaluates a log-density at x, writes its gradient into grad and
// returns the value. Each benchmark model offers several implementations of
// the same function under names such as "compiled", "tape" and "hand".
type gradImpl = func(x, grad []float64) float64

// gradSetup builds a model's implementations and a point to evaluate them
// at. It runs once per benchmark or test, outside the timed region.
type gradSetup func(tb testing.TB) (x []float64, impls map[string]gradImpl)

// gradModels is the registry behind BenchmarkGradient and
// TestGradientImplsAgree. Model files register themselves from init (see
// grad_factor3_test.go); it is written only during package initialisation.
var gradModels = map[string]gradSetup{
	"gauss21":  gauss21Setup,
	"logistic": logisticSetup,
}

// registerGradModel adds a model to BenchmarkGradient; call it from init.
func registerGradModel(name string, setup gradSetup) {
	if _, dup := gradModels[name]; dup {
		panic("bench: duplicate gradient model " + name)
	}
	gradModels[name] = setup
}

// BenchmarkGradient times value-and-gradient evaluations:
// BenchmarkGradient/<model>/<impl>. Run with -benchmem. Besides ns/op it
// reports cpu-ns/op, the process's CPU time per evaluation, the figure to
// compare on a loaded machine.
func BenchmarkGradient(b *testing.B) {
	for _, name := range sortedKeys(gradModels) {
		b.Run(name, func(b *testing.B) {
			x, impls := gradModels[name](b)
			benchGradient(b, x, impls)
		})
	}
}

// benchGradient runs one sub-benchmark per implementation, after checking
// that all implementations agree at x.
func benchGradient(b *testing.B, x []float64, impls map[string]gradImpl) {
	if err := checkImplsAgree(x, impls); err != nil {
		b.Fatal(err)
	}
	for _, name := range sortedKeys(impls) {
		f := impls[name]
		b.Run(name, func(b *testing.B) {
			grad := make([]float64, len(x))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				f(x, grad)
			}
			// CPU time does not count the waits for a core that inflate
			// ns/op on a loaded machine.
			b.ReportMetric(1e9*(cpuSeconds()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestGradientImplsAgree checks every registered model's implementations
// against each other, so that the benchmarks compare like with like.
func TestGradientImplsAgree(t *testing.T) {
	for _, name := range sortedKeys(gradModels) {
		x, impls := gradModels[name](t)
		if err := checkImplsAgree(x, impls); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// checkImplsAgree compares values and gradients to a relative 1e-9: the
// implementations differ only in the order of floating-point operations.
func checkImplsAgree(x []float64, impls map[string]gradImpl) error {
	var refName string
	var refV float64
	var refG []float64
	for _, name := range sortedKeys(impls) {
		g := make([]float64, len(x))
		v := impls[name](x, g)
		if refG == nil {
			refName, refV, refG = name, v, g
			continue
		}
		if !near(v, refV) {
			return fmt.Errorf("%s value %v, %s value %v", name, v, refName, refV)
		}
		for i := range g {
			if !near(g[i], refG[i]) {
				return fmt.Errorf("%s grad[%d] %v, %s grad[%d] %v", name, i, g[i], refName, i, refG[i])
			}
		}
	}
	return nil
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*(1+math.Max(math.Abs(a), math.Abs(b)))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// compiledImpl compiles a graph with ad and wraps Program.LogDensityGrad.
func compiledImpl(tb testing.TB, g *G.ExprGraph, out *G.Node, wrt []*G.Node) gradImpl {
	p, err := ad.Compile(g, out, wrt)
	if err != nil {
		tb.Fatal(err)
	}
	if fb := p.Fallbacks(); len(fb) > 0 {
		tb.Logf("compiled program has fallbacks: %v", fb)
	}
	return panicOnError(p.LogDensityGrad)
}

// panicOnError makes a gradImpl of a log-density that can fail; the
// benchmarks evaluate it only at points where it does not.
func panicOnError(f func(x, grad []float64) (float64, error)) gradImpl {
	return func(x, grad []float64) float64 {
		v, err := f(x, grad)
		if err != nil {
			panic(err)
		}
		return v
	}
}

// tapeImpl evaluates a graph with gorgonia's TapeMachine: copy x into the
// wrt nodes' existing values, run, read the value and the gradient nodes,
// reset. The wrt nodes must already hold float64 values of their shapes.
func tapeImpl(tb testing.TB, g *G.ExprGraph, out *G.Node, wrt []*G.Node) gradImpl {
	grads, err := G.Grad(out, wrt...)
	if err != nil {
		tb.Fatal(err)
	}
	m := G.NewTapeMachine(g)
	tb.Cleanup(func() { m.Close() })
	return func(x, grad []float64) float64 {
		for _, n := range wrt {
			k := copy(n.Value().Data().([]float64), x)
			x = x[k:]
		}
		if err := m.RunAll(); err != nil {
			panic(err)
		}
		g := grad
		for _, gn := range grads {
			k := copy(g, gn.Value().Data().([]float64))
			g = g[k:]
		}
		v := out.Value().Data().(float64)
		m.Reset()
		return v
	}
}

// gauss21 is the log-density of a 21-dimensional standard normal.
const gaussDim = 21

var logSqrt2Pi = 0.5 * math.Log(2*math.Pi)

func gauss21Graph() (*G.ExprGraph, *G.Node, []*G.Node) {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(gaussDim), G.WithName("x"), G.WithInit(G.Zeroes()))
	sq := G.Must(G.Sum(G.Must(G.Square(x))))
	out := G.Must(G.Sub(G.Must(G.Mul(G.NewConstant(-0.5), sq)), G.NewConstant(gaussDim*logSqrt2Pi)))
	return g, out, []*G.Node{x}
}

func gauss21Hand(x, grad []float64) float64 {
	s := 0.0
	for i, v := range x {
		s += v * v
		grad[i] = -v
	}
	return -0.5*s - gaussDim*logSqrt2Pi
}

func gauss21Setup(tb testing.TB) ([]float64, map[string]gradImpl) {
	rng := rand.New(rand.NewPCG(21, 1))
	x := make([]float64, gaussDim)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	g1, out1, wrt1 := gauss21Graph()
	g2, out2, wrt2 := gauss21Graph()
	return x, map[string]gradImpl{
		"compiled": compiledImpl(tb, g1, out1, wrt1),
		"tape":     tapeImpl(tb, g2, out2, wrt2),
		"hand":     gauss21Hand,
	}
}

// logistic is a Bernoulli-logit regression without intercept: n
// observations, d coefficients, a standard normal prior on the coefficients,
// synthetic data from a fixed seed.
const (
	logisticN = 1000
	logisticD = 25
)

// logisticData is a design matrix with outcomes 0 or 1.
type logisticData struct{ regData }

func newLogisticData(n, d int, seed uint64) *logisticData {
	rng := rand.New(rand.NewPCG(seed, 99))
	x, y := drawRegression(rng, n, d, func(eta float64) float64 {
		if rng.Float64() < 1/(1+math.Exp(-eta)) {
			return 1
		}
		return 0
	})
	return &logisticData{regData{n: n, d: d, x: x, y: y}}
}

func (ld *logisticData) graph() (*G.ExprGraph, *G.Node, []*G.Node) {
	g := G.NewGraph()
	X, y := ld.nodes(g)
	beta := G.NewVector(g, tensor.Float64, G.WithShape(ld.d), G.WithName("beta"), G.WithInit(G.Zeroes()))
	eta := G.Must(G.Mul(X, beta))
	ll := G.Must(G.Sum(G.Must(G.Sub(G.Must(G.HadamardProd(y, eta)), G.Must(G.Softplus(eta))))))
	prior := G.Must(G.Mul(G.NewConstant(-0.5), G.Must(G.Sum(G.Must(G.Square(beta))))))
	return g, G.Must(G.Add(ll, prior)), []*G.Node{beta}
}

// graphGLM is the same model with the log-likelihood as one fused
// ops.BernoulliLogitGLM node, the analogue of Stan's bernoulli_logit_glm.
func (ld *logisticData) graphGLM() (*G.ExprGraph, *G.Node, []*G.Node) {
	g := G.NewGraph()
	X, y := ld.nodes(g)
	beta := G.NewVector(g, tensor.Float64, G.WithShape(ld.d), G.WithName("beta"), G.WithInit(G.Zeroes()))
	ll := G.Must(ops.BernoulliLogitGLM(X, beta, y))
	prior := G.Must(G.Mul(G.NewConstant(-0.5), G.Must(G.Sum(G.Must(G.Square(beta))))))
	return g, G.Must(G.Add(ll, prior)), []*G.Node{beta}
}

// handImpl is the log-density written directly: one BLAS matrix-vector
// product each way and one exp per observation shared by the log-likelihood
// and its derivative. It owns its scratch, like a Program.
func (ld *logisticData) handImpl() gradImpl {
	eta := make([]float64, ld.n)
	xm := blas64.General{Rows: ld.n, Cols: ld.d, Stride: ld.d, Data: ld.x}
	return func(beta, grad []float64) float64 {
		blas64.Gemv(blas.NoTrans, 1, xm, blas64.Vector{N: ld.d, Inc: 1, Data: beta}, 0, blas64.Vector{N: ld.n, Inc: 1, Data: eta})
		lp := 0.0
		for i, e := range eta {
			// log(1+e^η) and σ(η) from one exp, stable for either sign of η.
			var sp, sig float64
			if e > 0 {
				t := math.Exp(-e)
				sp = e + math.Log1p(t)
				sig = 1 / (1 + t)
			} else {
				t := math.Exp(e)
				sp = math.Log1p(t)
				sig = t / (1 + t)
			}
			lp += ld.y[i]*e - sp
			eta[i] = ld.y[i] - sig // residual, reused in place
		}
		return withNormalPrior(lp, beta, grad, xm, eta)
	}
}

// withNormalPrior finishes a hand-written GLM log-density: it adds the
// N(0, I) prior of the parameters theta to the log-likelihood lp and sets
// grad to the prior's gradient −θ, adds Xᵀr (the likelihood's gradient in
// the coefficients, the first columns of theta, given the residuals r of
// the n×d design xm) and returns the log-density.
func withNormalPrior(lp float64, theta, grad []float64, xm blas64.General, r []float64) float64 {
	for j, b := range theta {
		lp -= 0.5 * b * b
		grad[j] = -b
	}
	blas64.Gemv(blas.Trans, 1, xm, blas64.Vector{N: xm.Rows, Inc: 1, Data: r}, 1, blas64.Vector{N: xm.Cols, Inc: 1, Data: grad[:xm.Cols]})
	return lp
}

func logisticSetup(tb testing.TB) ([]float64, map[string]gradImpl) {
	ld := newLogisticData(logisticN, logisticD, 2024)
	x := startPoint(25, logisticD)
	g1, out1, wrt1 := ld.graph()
	g2, out2, wrt2 := ld.graph()
	g3, out3, wrt3 := ld.graphGLM()
	return x, map[string]gradImpl{
		"compiled":     compiledImpl(tb, g1, out1, wrt1),
		"compiled-glm": compiledImpl(tb, g3, out3, wrt3),
		"tape":         tapeImpl(tb, g2, out2, wrt2),
		"hand":         ld.handImpl(),
	}
}
