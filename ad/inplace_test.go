package ad

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestLogDensityGradInPlace checks that the in-place entry point agrees with
// LogDensityGrad on a program with two parameter blocks, a matrix product
// and a reshape, when the caller's slices change between calls and when
// copying calls are interleaved; and that it does not allocate.
func TestLogDensityGradInPlace(t *testing.T) {
	g := G.NewGraph()
	a := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 4), G.WithName("a"))
	b := vec(g, "b", 4)
	d := dataNode(g, "d", []float64{1, -2, 0.5, 3, 1, -1}, 2, 3)
	h := G.Must(G.Tanh(G.Must(G.Mul(d, a))))
	v := G.Must(G.Sum(G.Must(G.Square(G.Must(G.Mul(h, b))))))
	v = G.Must(G.Add(v, G.Must(G.Sum(G.Must(G.Reshape(a, tensor.Shape{12}))))))
	p, err := Compile(g, v, []*G.Node{a, b})
	if err != nil {
		t.Fatal(err)
	}
	q := p.Clone()
	rng := rand.New(rand.NewPCG(1, 1))
	for trial := 0; trial < 4; trial++ {
		x := make([]float64, p.Dim())
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		want := make([]float64, p.Dim())
		wv := mustGrad(t, q, x, want)
		got := make([]float64, p.Dim())
		for i := range got {
			got[i] = 99 // must be overwritten
		}
		gv, err := p.LogDensityGradInPlace(x, got)
		if err != nil {
			t.Fatal(err)
		}
		if gv != wv {
			t.Errorf("trial %d: value %v, LogDensityGrad %v", trial, gv, wv)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("trial %d: gradient[%d] = %v, LogDensityGrad %v", trial, i, got[i], want[i])
			}
		}
		if trial == 2 { // a copying call in between must not see stale bindings
			lv, err := p.LogDensity(x)
			if err != nil || lv != wv {
				t.Errorf("LogDensity after an in-place call: %v, %v; want %v", lv, err, wv)
			}
		}
	}
	if !p.inplace.ok {
		t.Error("the program fell back to copying")
	}
	x := make([]float64, p.Dim())
	gr := make([]float64, p.Dim())
	if n := testing.AllocsPerRun(20, func() { p.LogDensityGradInPlace(x, gr) }); n != 0 {
		t.Errorf("%v allocations per call", n)
	}
	if _, err := p.LogDensityGradInPlace(x[:3], gr); err == nil {
		t.Error("short input accepted")
	}
}
