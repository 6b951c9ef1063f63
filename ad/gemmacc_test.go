package ad

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestAccumulatedProducts checks the products added into sums (see
// accumulateProducts): a matrix used in two products, whose gradient is a
// sum of two products, and a sum of two products in the forward pass. The
// sums go, and values and gradients keep their bits (compared with the
// program compiled without the rewrite) through every entry point.
func TestAccumulatedProducts(t *testing.T) {
	build := func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		w, v := mat(g, "w", 3, 4), mat(g, "v", 3, 5)
		x, z := constMatrix(g, "x", 1, 4, 2), constMatrix(g, "z", 2, 4, 2)
		u := constMatrix(g, "u", 3, 5, 2)
		// w·x + w·z: dW = ḡ·xᵀ + ḡ·zᵀ, and the forward sum of two products.
		a := G.Must(G.Add(G.Must(G.Mul(w, x)), G.Must(G.Mul(w, z))))
		b := G.Must(G.Tanh(G.Must(G.Add(a, G.Must(G.Mul(v, u))))))
		return G.Must(G.Sum(G.Must(G.Square(b)))), []*G.Node{w, v}
	}
	fused, plain := compileFunc(t, build), compileFunc(t, build, func(c *config) { c.noAccum = true })
	acc := 0
	for _, ins := range fused.code.full {
		if ins.kind == kGemm && ins.acc {
			acc++
		}
	}
	if acc < 2 {
		t.Errorf("%d accumulated products in the gradient program, want at least 2", acc)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 3; trial++ {
		x := normals(rng, fused.Dim())
		checkSameNumbers(t, fused, "fused", plain, "not accumulated", x)
		g1, g2 := make([]float64, len(x)), make([]float64, len(x))
		v1, err1 := fused.LogDensityGradInPlace(x, g1)
		v2, err2 := plain.LogDensityGrad(x, g2)
		v3, err3 := fused.LogDensity(x)
		if err1 != nil || err2 != nil || err3 != nil || v1 != v2 || v3 != v2 {
			t.Fatalf("in place %v (%v), LogDensity %v (%v), not accumulated %v (%v)", v1, err1, v3, err3, v2, err2)
		}
		for i := range g1 {
			if g1[i] != g2[i] {
				t.Errorf("in place grad[%d] %v, not accumulated %v", i, g1[i], g2[i])
			}
		}
	}
	checkFusedFailsAlike(t, fused, plain, []float64{1e308, -1e308}, nil)
	checkAgainstReferences(t, build, normals, noBug)
}

// TestAccumulatedProductReshaped checks a product added to a reshape of
// another instruction's result (a covariance B·Bᵀ plus a diagonal built
// as a vector and reshaped): the addend's writer writes the sum's buffer
// through the view, and the numbers keep their bits.
func TestAccumulatedProductReshaped(t *testing.T) {
	build := func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		w, v := mat(g, "w", 3, 2), vec(g, "v", 4)
		m := constMatrix(g, "m", 4, 9, 4)
		d := G.Must(G.Reshape(G.Must(G.Mul(m, v)), tensor.Shape{3, 3}))
		s := G.Must(G.Add(G.Must(G.Mul(w, G.Must(G.Transpose(w)))), d))
		return G.Must(G.Sum(G.Must(G.Square(G.Must(G.Tanh(s)))))), []*G.Node{w, v}
	}
	fused, plain := compileFunc(t, build), compileFunc(t, build, func(c *config) { c.noAccum = true })
	acc := 0
	for _, ins := range fused.code.value {
		if ins.kind == kGemm && ins.acc {
			acc++
		}
	}
	if acc != 1 {
		t.Errorf("%d accumulated products in the value program, want 1", acc)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 3; trial++ {
		checkSameNumbers(t, fused, "fused", plain, "not accumulated", normals(rng, fused.Dim()))
	}
	checkAgainstReferences(t, build, normals, noBug)
}
