package ad

import (
	"errors"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestCompileOutputs(t *testing.T) {
	g := G.NewGraph()
	x := vec(g, "x", 3)
	d := dataNode(g, "d", []float64{1, 2, 3}, 3)
	y := G.Must(G.Add(G.Must(G.Exp(x)), d))
	s := G.Must(G.Sum(y))
	p, err := CompileOutputs(g, []*G.Node{x}, []*G.Node{y, s})
	if err != nil {
		t.Fatal(err)
	}
	if p.Dim() != 3 {
		t.Errorf("Dim = %d, want 3", p.Dim())
	}
	dst := make([]float64, 4)
	if err := p.Outputs([]float64{0, 0, 0}, dst); err != nil {
		t.Fatal(err)
	}
	want := []float64{2, 3, 4, 9}
	for i := range want {
		if dst[i] != want[i] {
			t.Errorf("outputs = %v, want %v", dst, want)
			break
		}
	}
	if allocs := testing.AllocsPerRun(10, func() { _ = p.Outputs([]float64{0, 0, 0}, dst) }); allocs != 0 {
		t.Errorf("Outputs allocates %v times", allocs)
	}
	if _, err := p.LogDensity([]float64{0, 0, 0}); !errors.Is(err, errNoOutput) {
		t.Errorf("LogDensity of a forward-only program: %v", err)
	}
	if _, err := p.LogDensityGrad([]float64{0, 0, 0}, make([]float64, 3)); err == nil {
		t.Error("LogDensityGrad of a forward-only program succeeded")
	}
	if _, err := CompileOutputs(g, []*G.Node{x}, nil); err == nil {
		t.Error("no outputs accepted")
	}
}

func TestWithSharedData(t *testing.T) {
	g := G.NewGraph()
	x := vec(g, "x", 2)
	backing := []float64{1, 2, 3, 4}
	w := dataNode(g, "w", backing, 2, 2)
	y := G.Must(G.Mul(w, x))
	rs := G.Must(G.Reshape(w, tensor.Shape{4})) // a view of shared data
	p, err := CompileOutputs(g, []*G.Node{x}, []*G.Node{y, rs}, WithSharedData(w))
	if err != nil {
		t.Fatal(err)
	}
	q := p.Clone()
	dst := make([]float64, 6)
	if err := p.Outputs([]float64{1, 1}, dst); err != nil {
		t.Fatal(err)
	}
	if dst[0] != 3 || dst[1] != 7 || dst[5] != 4 {
		t.Errorf("outputs %v, want [3 7 1 2 3 4]", dst)
	}
	backing[0] = 10 // seen by the program and its clone without Bind
	for _, pr := range []*Program{p, q} {
		if err := pr.Outputs([]float64{1, 1}, dst); err != nil {
			t.Fatal(err)
		}
		if dst[0] != 12 || dst[2] != 10 {
			t.Errorf("after changing the shared array: %v, want [12 7 10 2 3 4]", dst)
		}
	}
	if err := p.Bind(w, []float64{0, 0, 0, 0}); err == nil {
		t.Error("Bind of a shared node succeeded")
	}
}
