package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestLogSumExpValues(t *testing.T) {
	// The case gorgonia.LogSumExp gets wrong.
	got, err := tapeValue(tensor.Shape{3}, []float64{1, 2, 3}, func(x *gorgonia.Node) (*gorgonia.Node, error) {
		return LogSumExp(x, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Log(math.Exp(1) + math.Exp(2) + math.Exp(3)); !closeTo(got[0], want, 1e-15) {
		t.Errorf("LogSumExp([1 2 3]) = %v, want %v", got[0], want)
	}

	rng := rand.New(rand.NewPCG(9, 10))
	const r, c = 3, 4
	x := randVec(rng, r*c, 3)
	x[5] += 1000 // overflow for the naive formula
	for _, axis := range []int{AllAxes, 0, 1} {
		op := logSumExpOp{axis: axis, dims: 2}
		got, err := runKernel(t, op, []tensor.Shape{{r, c}}, x)
		if err != nil {
			t.Fatal(err)
		}
		viaDo, err := tapeValue(tensor.Shape{r, c}, x, func(n *gorgonia.Node) (*gorgonia.Node, error) { return LogSumExp(n, axis) })
		if err != nil {
			t.Fatal(err)
		}
		var want []float64
		switch axis {
		case AllAxes:
			want = []float64{floats.LogSumExp(x)}
		case 0:
			for j := 0; j < c; j++ {
				col := []float64{x[j], x[c+j], x[2*c+j]}
				want = append(want, floats.LogSumExp(col))
			}
		case 1:
			for i := 0; i < r; i++ {
				want = append(want, floats.LogSumExp(x[i*c:i*c+c]))
			}
		}
		if len(got) != len(want) {
			t.Fatalf("axis %d: %d outputs, want %d", axis, len(got), len(want))
		}
		for i := range want {
			if !closeTo(got[i], want[i], 1e-14) || got[i] != viaDo[i] {
				t.Errorf("axis %d: out[%d] = %v (Do %v), gonum %v", axis, i, got[i], viaDo[i], want[i])
			}
		}
	}
	// All −Inf gives −Inf and a zero gradient, not NaN.
	ninf := math.Inf(-1)
	got, err = runKernel(t, logSumExpOp{axis: AllAxes, dims: 1}, []tensor.Shape{{2}}, []float64{ninf, ninf})
	if err != nil || !math.IsInf(got[0], -1) {
		t.Errorf("LogSumExp(-Inf, -Inf) = %v, %v", got, err)
	}
	gr, err := runKernel(t, logSumExpGradOp{fwd: logSumExpOp{axis: AllAxes, dims: 1}}, []tensor.Shape{{2}, {}, {}}, []float64{ninf, ninf}, got, []float64{1})
	if err != nil || gr[0] != 0 || gr[1] != 0 {
		t.Errorf("gradient at all -Inf = %v, %v", gr, err)
	}
}

func TestLogSumExpGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	v := randVec(rng, 5, 2)
	checkGrad(t, "LogSumExp/vector", tensor.Shape{5}, v, func(x *gorgonia.Node) (*gorgonia.Node, error) {
		return LogSumExp(x, 0)
	}, 1e-7)
	m := randVec(rng, 12, 2)
	for _, axis := range []int{AllAxes, 0, 1} {
		checkGrad(t, "LogSumExp/matrix", tensor.Shape{3, 4}, m, weighted(func(x *gorgonia.Node) (*gorgonia.Node, error) { return LogSumExp(x, axis) }, 5), 1e-7)
	}
}

func TestLogSumExpErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	v := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3))
	m := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 3))
	if _, err := LogSumExp(v, 1); err == nil {
		t.Error("LogSumExp(vector, axis 1): no error")
	}
	if _, err := LogSumExp(m, 2); err == nil {
		t.Error("LogSumExp(matrix, axis 2): no error")
	}
	if _, err := LogSumExp(gorgonia.NewScalar(g, tensor.Float64), AllAxes); err == nil {
		t.Error("LogSumExp(scalar): no error")
	}
}
