package ad_test

import (
	"fmt"
	"log"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
)

// A normal log-density with unknown mean μ and log standard deviation τ for
// three observations y: Σ −(y−μ)²/(2σ²) − n·log σ, with σ = exp(τ).
func Example() {
	g := G.NewGraph()
	y := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("y"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1.2, 0.7, 2.1}))))
	mu := G.NewScalar(g, tensor.Float64, G.WithName("mu"))
	tau := G.NewScalar(g, tensor.Float64, G.WithName("tau"))

	sigma := G.Must(G.Exp(tau))
	z := G.Must(G.Div(G.Must(G.Sub(y, mu)), sigma))
	quad := G.Must(G.Mul(G.NewConstant(-0.5), G.Must(G.Sum(G.Must(G.Square(z))))))
	logp := G.Must(G.Sub(quad, G.Must(G.Mul(G.NewConstant(3.0), tau))))

	prog, err := ad.Compile(g, logp, []*G.Node{mu, tau})
	if err != nil {
		log.Fatal(err)
	}
	x := []float64{1, 0} // μ = 1, τ = 0
	grad := make([]float64, prog.Dim())
	v, err := prog.LogDensityGrad(x, grad)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("log p = %.4f\n", v)
	fmt.Printf("∂/∂μ = %.4f, ∂/∂τ = %.4f\n", grad[0], grad[1])
	fmt.Println("fallbacks:", len(prog.Fallbacks()))

	// Replace the data without recompiling.
	if err := prog.Bind(y, []float64{1, 2, 3}); err != nil {
		log.Fatal(err)
	}
	v, _ = prog.LogDensity(x)
	fmt.Printf("log p with y = (1, 2, 3): %.4f\n", v)
	// Output:
	// log p = -0.6700
	// ∂/∂μ = 1.0000, ∂/∂τ = -1.6600
	// fallbacks: 0
	// log p with y = (1, 2, 3): -2.5000
}
