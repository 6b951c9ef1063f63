package ad

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// tinyCases are gradient programs that fuse into one loop and a few
// scalar operations (a Gaussian's log-density); each is checked against
// LogDensityGradInPlace bit for bit, against the unfused program and
// against finite differences.
var tinyCases = []struct {
	name  string
	build graphFunc
}{
	{"gauss", fuseCases[0].build},
	// An offset that is data (a Bind-able scalar), read at every call.
	{"gauss-data-offset", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := vec(g, "x", 10)
		off := G.NewScalar(g, tensor.Float64, G.WithName("off"), G.WithValue(2.5))
		ss := G.Must(G.Sum(G.Must(G.Square(x))))
		return G.Must(G.Add(G.Must(G.Mul(G.NewConstant(-0.5), ss)), off)), []*G.Node{x}
	}},
	// A scale that is not a power of two.
	{"gauss-scale", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := vec(g, "x", 7)
		ss := G.Must(G.Sum(G.Must(G.Square(x))))
		return G.Must(G.Mul(G.NewConstant(-0.3), ss)), []*G.Node{x}
	}},
	// Two square loops.
	{"two-vectors", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x, y := vec(g, "x", 5), vec(g, "y", 3)
		sx := G.Must(G.Mul(G.NewConstant(-0.5), G.Must(G.Sum(G.Must(G.Square(x))))))
		sy := G.Must(G.Mul(G.NewConstant(-2.0), G.Must(G.Sum(G.Must(G.Square(y))))))
		return G.Must(G.Add(sx, sy)), []*G.Node{x, y}
	}},
	// A constant so large that the gradient overflows before the square.
	{"gauss-huge-scale", func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		x := vec(g, "x", 5)
		ss := G.Must(G.Sum(G.Must(G.Square(x))))
		return G.Must(G.Add(G.Must(G.Mul(G.NewConstant(-1e80), ss)), G.NewConstant(3.0))), []*G.Node{x}
	}},
}

func TestTinyMatchesBuffered(t *testing.T) {
	for _, c := range tinyCases {
		t.Run(c.name, func(t *testing.T) {
			p, plain := compileFunc(t, c.build), compileFunc(t, c.build, withoutFusion())
			rng := rand.New(rand.NewPCG(7, 8))
			dim := p.Dim()
			g1, g2, g3 := make([]float64, dim), make([]float64, dim), make([]float64, dim)
			for trial := 0; trial < 6; trial++ {
				x := normals(rng, dim)
				if trial == 5 { // subnormal and tiny values, where rounding differs first
					for i := range x {
						x[i] = math.Ldexp(x[i], -1060+i%40)
					}
				}
				v1, err1 := p.LogDensityGrad(x, g1)
				v2, err2 := p.LogDensityGradInPlace(x, g2)
				v3, err3 := plain.LogDensityGrad(x, g3)
				if err1 != nil || err2 != nil || err3 != nil {
					t.Fatalf("errors: LogDensityGrad %v, in place %v, unfused %v", err1, err2, err3)
				}
				if math.Float64bits(v1) != math.Float64bits(v2) || !closeTo(v1, v3, 1e-13, 1e-13) {
					t.Errorf("value: LogDensityGrad %v, in place %v, unfused %v", v1, v2, v3)
				}
				for i := range g1 {
					if math.Float64bits(g1[i]) != math.Float64bits(g2[i]) || !closeTo(g1[i], g3[i], 1e-13, 1e-13) {
						t.Errorf("grad[%d]: LogDensityGrad %v, in place %v, unfused %v", i, g1[i], g2[i], g3[i])
					}
				}
				fd := fdGrad(p, x)
				for i := range fd {
					if !closeTo(g1[i], fd[i], 1e-6, 1e-5) {
						t.Errorf("grad[%d] = %v, finite differences %v", i, g1[i], fd[i])
					}
				}
			}
			if n := testing.AllocsPerRun(100, func() { p.LogDensityGrad(g3, g1) }); n != 0 {
				t.Errorf("%v allocations per call", n)
			}
		})
	}
}

// TestTinyBind checks that a tiny program reads data at each call.
func TestTinyBind(t *testing.T) {
	g := G.NewGraph()
	out, wrt := tinyCases[1].build(g)
	p, err := Compile(g, out, wrt)
	if err != nil {
		t.Fatal(err)
	}
	var off *G.Node
	for _, n := range g.AllNodes() {
		if n.Name() == "off" {
			off = n
		}
	}
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	grad := make([]float64, len(x))
	v0, _ := p.LogDensityGrad(x, grad)
	if err := p.Bind(off, []float64{5}); err != nil {
		t.Fatal(err)
	}
	v1, _ := p.LogDensityGrad(x, grad)
	if v0 != -190 || v1 != -187.5 || grad[9] != -10 {
		t.Errorf("before Bind %v, after %v (grad[9] %v); want -190, -187.5, -10", v0, v1, grad[9])
	}
}

// TestTinyNonFinite checks the fused programs' errors against the unfused
// ones': NaN and ±Inf in each coordinate, and values so large that only
// the square overflows or only the gradient does (the huge scale).
func TestTinyNonFinite(t *testing.T) {
	for _, c := range tinyCases {
		t.Run(c.name, func(t *testing.T) {
			p, plain := compileFunc(t, c.build), compileFunc(t, c.build, withoutFusion())
			checkFusedFailsAlike(t, p, plain, []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e200, -1e160, 1e300}, nil)
		})
	}
}
