package ad

import (
	"errors"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestCompileOutputs(t *testing.T) {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("x"))
	d := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("d"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 2, 3}))))
	y := G.Must(G.Add(G.Must(G.Exp(x)), d))
	s := G.Must(G.Sum(y))
	p, err := CompileOutputs(g, []*G.Node{x}, y, s)
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
	if _, err := CompileOutputs(g, []*G.Node{x}); err == nil {
		t.Error("no outputs accepted")
	}
}
