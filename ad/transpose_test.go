package ad

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
)

func withoutTransposeFolding() Option { return func(c *config) { c.noFold = true } }

// transposeGraph has a product with a transposed operand (X·Wᵀ), a
// transpose read only as the transpose of a product ((X·Wᵀ)ᵀ), a
// transpose that another op reads too (Wᵀ, squared) and, in the gradient,
// the transposes gorgonia builds around the products' derivatives.
func transposeGraph(g *G.ExprGraph) (*G.Node, []*G.Node) {
	w := mat(g, "W", 3, 4)
	v := mat(g, "V", 5, 3)
	x := constMatrix(g, "X", 11, 5, 4)
	wt := G.Must(G.Transpose(w))
	y := G.Must(G.Mul(x, wt))                     // 5×3
	z := G.Must(G.Transpose(y))                   // 3×5, the only reader of y
	u := G.Must(G.Mul(z, G.Must(G.Tanh(v))))      // 3×3
	q := G.Must(G.Mul(G.Must(G.Transpose(v)), v)) // 3×3
	return sumAll(weighted(g, u, 12), weighted(g, G.Must(G.Square(wt)), 13), weighted(g, q, 14)), []*G.Node{w, v}
}

// TestTransposeFolding checks the graph against the tape and finite
// differences, and that folding removes instructions without changing a
// bit of the value or the gradient.
func TestTransposeFolding(t *testing.T) {
	checkAgainstReferences(t, transposeGraph, normals, noBug)
	p := compileFunc(t, transposeGraph)
	q := compileFunc(t, transposeGraph, withoutTransposeFolding())
	if len(p.code.full) >= len(q.code.full) {
		t.Errorf("%d instructions with folding, %d without", len(p.code.full), len(q.code.full))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3 {
		x := normals(rng, p.Dim())
		gp, gq := make([]float64, p.Dim()), make([]float64, p.Dim())
		vp, err := p.LogDensityGrad(x, gp)
		if err != nil {
			t.Fatal(err)
		}
		vq, err := q.LogDensityGrad(x, gq)
		if err != nil {
			t.Fatal(err)
		}
		if math.Float64bits(vp) != math.Float64bits(vq) {
			t.Errorf("value %v folded, %v not", vp, vq)
		}
		for i := range gp {
			if math.Float64bits(gp[i]) != math.Float64bits(gq[i]) {
				t.Errorf("grad[%d] %v folded, %v not", i, gp[i], gq[i])
			}
		}
	}
}

// TestTransposeFoldingRoots keeps the transposes that an entry point
// reads: here the output node's argument and a WithOutputs node.
func TestTransposeFoldingRoots(t *testing.T) {
	g := G.NewGraph()
	w := mat(g, "W", 2, 3)
	x := constMatrix(g, "X", 5, 4, 3)
	y := G.Must(G.Mul(x, G.Must(G.Transpose(w)))) // 4×2
	yt := G.Must(G.Transpose(y))                  // a WithOutputs node
	out := weighted(g, yt, 6)
	p, err := Compile(g, out, []*G.Node{w}, WithOutputs(yt))
	if err != nil {
		t.Fatal(err)
	}
	wv := []float64{1, 2, 3, -1, 0.5, 0.25}
	dst := make([]float64, 8)
	if err := p.Outputs(wv, dst); err != nil {
		t.Fatal(err)
	}
	xv, _ := nodeValue(x)
	for i := 0; i < 2; i++ {
		for j := 0; j < 4; j++ {
			var want float64
			for k := 0; k < 3; k++ {
				want += xv[j*3+k] * wv[i*3+k]
			}
			if !closeTo(dst[i*4+j], want, 1e-14, 1e-14) {
				t.Errorf("yt[%d,%d] = %v, want %v", i, j, dst[i*4+j], want)
			}
		}
	}
}
