package ops_test

import (
	"fmt"
	"log"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/ad/ops"
)

// A multivariate normal log-density in the covariance Σ, compiled with ad:
// log N(y | 0, Σ) = −½(n log 2π + log det Σ + ‖L⁻¹y‖²) with Σ = LLᵀ.
// Cholesky(Σ) is computed once, shared by the solve and LogDetSPD. The
// gradient is ½(Σ⁻¹yyᵀΣ⁻¹ − Σ⁻¹).
func ExampleLogDetSPD() {
	g := gorgonia.NewGraph()
	sigma := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 2), gorgonia.WithName("sigma"))
	y := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("y"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, -1}))))

	l := gorgonia.Must(ops.Cholesky(sigma))
	z := gorgonia.Must(ops.SolveTriangular(l, y, true))
	quad := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.Square(z))))
	logDet := gorgonia.Must(ops.LogDetSPD(sigma))
	sum := gorgonia.Must(gorgonia.Add(gorgonia.Must(gorgonia.Add(quad, logDet)), gorgonia.NewConstant(3.6757541328186907))) // 2 log 2π
	logp := gorgonia.Must(gorgonia.Mul(gorgonia.NewConstant(-0.5), sum))

	prog, err := ad.Compile(g, logp, []*gorgonia.Node{sigma})
	if err != nil {
		log.Fatal(err)
	}
	grad := make([]float64, 4)
	v, err := prog.LogDensityGrad([]float64{2, 0.5, 0.5, 1}, grad)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("log p = %.4f\n", v)
	fmt.Printf("d log p / d Σ = %.4f\n", grad)
	// Output:
	// log p = -3.2605
	// d log p / d Σ = [0.0816 -0.4694 -0.4694 0.4490]
}

// gorgonia's own LogSumExp returns 1.50 for [1 2 3]; this one is stable and
// correct.
func ExampleLogSumExp() {
	g := gorgonia.NewGraph()
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 2, 3}))))
	lse := gorgonia.Must(ops.LogSumExp(x, 0))
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.4f\n", lse.Value().Data())
	// Output:
	// 3.4076
}

// A spline with two bins shared by all elements, applied forwards and then
// inverted: the inverse recovers x and its log-derivative is the negative of
// the forward one.
func ExampleRQSpline() {
	g := gorgonia.NewGraph()
	vec := func(name string, v ...float64) *gorgonia.Node {
		return gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(len(v)), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(v))))
	}
	x := vec("x", 0.2, 0.5, 0.9)
	w, h, d := vec("w", 0, 1), vec("h", 1, 0), vec("d", 0, 0.5, -0.5)
	y, ldf, err := ops.RQSpline(x, w, h, d, false)
	if err != nil {
		log.Fatal(err)
	}
	back, ldi, err := ops.RQSpline(y, w, h, d, true)
	if err != nil {
		log.Fatal(err)
	}
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("y = %.4f\n", y.Value().Data())
	fmt.Printf("x = %.4f\n", back.Value().Data())
	fmt.Printf("forward log-derivative %.4f, inverse %.4f\n", ldf.Value().Data(), ldi.Value().Data())
	// Output:
	// y = [0.5963 0.8581 0.9625]
	// x = [0.2000 0.5000 0.9000]
	// forward log-derivative [1.0981 -1.1082 -1.1893], inverse [-1.0981 1.1082 1.1893]
}

// Lgamma's gradient is the digamma function, itself differentiable: here
// gorgonia.Grad runs twice, giving ψ(x) and ψ'(x) at x = 1 (−γ and π²/6).
func ExampleLgamma() {
	g := gorgonia.NewGraph()
	x := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("x"), gorgonia.WithValue(1.0))
	y := gorgonia.Must(ops.Lgamma(x))
	dy, err := gorgonia.Grad(y, x)
	if err != nil {
		log.Fatal(err)
	}
	d2y, err := gorgonia.Grad(dy[0], x)
	if err != nil {
		log.Fatal(err)
	}
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("lgamma(1) = %.4f, digamma(1) = %.4f, trigamma(1) = %.4f\n", y.Value().Data(), dy[0].Value().Data(), d2y[0].Value().Data())
	// Output:
	// lgamma(1) = 0.0000, digamma(1) = -0.5772, trigamma(1) = 1.6449
}

// A logistic regression y_i ~ Bernoulli(σ(x_iᵀβ)) with a standard normal
// prior on β. BernoulliLogitGLM is one node whose native kernel computes the
// log-likelihood and its gradient Xᵀ(y − σ(Xβ)) in one pass; X and y are
// data.
func ExampleBernoulliLogitGLM() {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(3, 2), gorgonia.WithName("X"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(3, 2), tensor.WithBacking([]float64{1, 0, 0, 1, 1, 1}))))
	y := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("y"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 0, 1}))))
	beta := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("beta"))

	loglik := gorgonia.Must(ops.BernoulliLogitGLM(x, beta, y))
	prior := gorgonia.Must(gorgonia.Mul(gorgonia.NewConstant(-0.5), gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.Square(beta))))))
	logp := gorgonia.Must(gorgonia.Add(loglik, prior))

	prog, err := ad.Compile(g, logp, []*gorgonia.Node{beta})
	if err != nil {
		log.Fatal(err)
	}
	grad := make([]float64, 2)
	v, err := prog.LogDensityGrad([]float64{0.5, -0.5}, grad)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("log p = %.4f\n", v)
	fmt.Printf("gradient = %.4f\n", grad)
	// Output:
	// log p = -1.8913
	// gradient = [0.3775 0.6225]
}

// ExampleNormalIDGLM evaluates the log-likelihood of a linear regression
// with unknown noise scale at one point, with β and log σ as the
// parameters, allowing two goroutines per evaluation (the value and
// gradient are the same for any number; this small data set uses one).
func ExampleNormalIDGLM() {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(4, 2), gorgonia.WithName("X"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(4, 2), tensor.WithBacking([]float64{1, 0, 1, 1, 1, 2, 1, 3}))))
	y := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(4), gorgonia.WithName("y"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{0.9, 2.1, 2.9, 4.2}))))
	theta := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("theta"))
	beta := gorgonia.Must(gorgonia.Slice(theta, gorgonia.S(0, 2)))
	sigma := gorgonia.Must(gorgonia.Exp(gorgonia.Must(gorgonia.Slice(theta, gorgonia.S(2)))))

	loglik := gorgonia.Must(ops.NormalIDGLM(x, beta, y, sigma))
	prog, err := ad.Compile(g, loglik, []*gorgonia.Node{theta})
	if err != nil {
		log.Fatal(err)
	}
	if err := prog.SetWorkers(2); err != nil {
		log.Fatal(err)
	}
	grad := make([]float64, 3)
	v, err := prog.LogDensityGrad([]float64{1, 1, math.Log(0.5)}, grad)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("log-likelihood = %.4f\n", v)
	fmt.Printf("gradient = %.4f\n", grad)
	// Output:
	// log-likelihood = -1.0432
	// gradient = [0.4000 2.0000 -3.7200]
}
