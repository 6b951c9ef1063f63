package ad

import (
	"errors"
	"fmt"
	"hash"
	"math"
	"testing"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestOutputsAffineKinds checks CompileOutputs' programs of elementwise arithmetic,
// matrix–vector products and triangular solves (an affine layer's kinds)
// against the same arithmetic in Go, with x and dst separate or
// overlapping.
func TestOutputsAffineKinds(t *testing.T) {
	g := G.NewGraph()
	x := vec(g, "x", 3)
	mu := dataNode(g, "mu", []float64{1, -2, 0.5}, 3)
	wv := []float64{1, 2, 3, -1, 0.5, 4}
	w := dataNode(g, "w", wv, 2, 3)
	s := G.NewScalar(g, tensor.Float64, G.WithName("s"), G.WithValue(2.5))
	d := G.Must(G.Sub(x, mu))
	y := G.Must(G.Add(G.Must(G.Mul(w, d)), s))      // (2)
	u := G.Must(G.HadamardDiv(d, G.Must(G.Neg(x)))) // (3), a second output reading d
	p, err := CompileOutputs(g, []*G.Node{x}, []*G.Node{y, u, s}, WithSharedData(w))
	if err != nil {
		t.Fatal(err)
	}
	in := []float64{0.3, -1.7, 2}
	dv := []float64{in[0] - 1, in[1] + 2, in[2] - 0.5}
	want := []float64{
		wv[0]*dv[0] + wv[1]*dv[1] + wv[2]*dv[2] + 2.5, wv[3]*dv[0] + wv[4]*dv[1] + wv[5]*dv[2] + 2.5,
		dv[0] / -in[0], dv[1] / -in[1], dv[2] / -in[2], 2.5,
	}
	got := make([]float64, 6)
	if err := p.Outputs(in, got); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		// BLAS may sum the products in another order.
		if math.Abs(got[i]-want[i]) > 1e-15*(1+math.Abs(want[i])) {
			t.Errorf("outputs %v, want %v", got, want)
			break
		}
	}
	if allocs := testing.AllocsPerRun(20, func() { _ = p.Outputs(in, got) }); allocs != 0 {
		t.Errorf("Outputs allocates %v times", allocs)
	}
	// Overlapping x and dst: the values of separate slices.
	buf := make([]float64, 6)
	copy(buf, in)
	if err := p.Outputs(buf[:3], buf); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(buf) != fmt.Sprint(got) {
		t.Errorf("overlapping outputs %v, want %v", buf, got)
	}
	// A constant lower-triangular matrix times a vector.
	g3 := G.NewGraph()
	x3 := G.NewVector(g3, tensor.Float64, G.WithShape(3), G.WithName("x"))
	c3 := G.NewConstant(tensor.New(tensor.WithShape(3, 3), tensor.WithBacking([]float64{2, 0, 0, 1, 3, 0, 4, 0, 5})))
	p3, err := CompileOutputs(g3, []*G.Node{x3}, []*G.Node{G.Must(G.Mul(c3, x3))})
	if err != nil {
		t.Fatal(err)
	}
	y3 := make([]float64, 3)
	if err := p3.Outputs([]float64{1, 2, 3}, y3); err != nil || y3[0] != 2 || y3[1] != 7 || y3[2] != 19 {
		t.Errorf("constant product %v, want [2 7 19] (%v)", y3, err)
	}
	// An affine layer: a difference into a solve, or a product plus a
	// vector.
	lv, mv := []float64{2, 0, 0, 1, 3, 0, 4, -1, 5}, []float64{1, -2, 0.5}
	for _, solve := range []bool{true, false} {
		ga := G.NewGraph()
		xa := vec(ga, "x", 3)
		la := dataNode(ga, "L", lv, 3, 3)
		ma := dataNode(ga, "mu", mv, 3)
		var ya *G.Node
		if solve {
			ya = G.Must(solveTriangularNode(la, G.Must(G.Sub(xa, ma))))
		} else {
			ya = G.Must(G.Add(G.Must(G.Mul(la, xa)), ma))
		}
		pa, err := CompileOutputs(ga, []*G.Node{xa}, []*G.Node{ya}, WithSharedData(la, ma))
		if err != nil {
			t.Fatal(err)
		}
		in := []float64{0.3, -1.7, 2}
		want := make([]float64, 3)
		for i := range want {
			if solve {
				v := in[i] - mv[i]
				for j := 0; j < i; j++ {
					v -= lv[i*3+j] * want[j]
				}
				want[i] = v / lv[i*3+i]
			} else {
				want[i] = lv[i*3]*in[0] + lv[i*3+1]*in[1] + lv[i*3+2]*in[2] + mv[i]
			}
		}
		got := make([]float64, 3)
		if err := pa.Outputs(in, got); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-15*(1+math.Abs(want[i])) {
				t.Errorf("solve %v: outputs %v, want %v", solve, got, want)
				break
			}
		}
	}
}

func TestSolveTriangular(t *testing.T) {
	// T = [[2 0 0] [1 4 0] [-1 3 5]] (lower); the upper triangle holds junk.
	tm := []float64{2, 9, 9, 1, 4, 9, -1, 3, 5}
	for _, m := range []int{1, 2} {
		for _, trans := range []bool{false, true} {
			b := make([]float64, 3*m)
			for i := range b {
				b[i] = float64(i + 1)
			}
			x := make([]float64, 3*m)
			k := TriangularSolve{N: 3, M: m, Lower: true, Trans: trans}
			if err := k.Eval(x, [][]float64{tm, b}); err != nil {
				t.Fatal(err)
			}
			// Multiply back.
			for c := 0; c < m; c++ {
				for i := 0; i < 3; i++ {
					s := 0.0
					for j := 0; j < 3; j++ {
						tij := 0.0
						if !trans && j <= i {
							tij = tm[i*3+j]
						} else if trans && i <= j {
							tij = tm[j*3+i]
						}
						s += tij * x[j*m+c]
					}
					if math.Abs(s-b[i*m+c]) > 1e-14 {
						t.Errorf("m=%d trans=%t: (T x)[%d,%d] = %v, want %v", m, trans, i, c, s, b[i*m+c])
					}
				}
			}
		}
	}
	if err := (TriangularSolve{N: 2, M: 1, Lower: true}).Eval(make([]float64, 2), [][]float64{{1, 0, 0, 0}, {1, 1}}); err == nil {
		t.Error("singular matrix solved")
	}
}

// trsvTestOp is x = T⁻¹b for a lower-triangular T (n×n) and b (n), lowered
// to the TriangularSolve kernel, as ops.SolveTriangular is; forward only.
type trsvTestOp struct{}

func (trsvTestOp) Arity() int { return 2 }
func (trsvTestOp) Type() hm.Type {
	m, v := G.TensorType{Dims: 2, Of: hm.TypeVariable('a')}, G.TensorType{Dims: 1, Of: hm.TypeVariable('a')}
	return hm.NewFnType(m, v, v)
}
func (trsvTestOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[1].(tensor.Shape).Clone(), nil
}
func (trsvTestOp) Do(...G.Value) (G.Value, error) { return nil, errors.New("trsvTestOp: lowered only") }
func (trsvTestOp) ReturnsPtr() bool               { return false }
func (trsvTestOp) CallsExtern() bool              { return false }
func (trsvTestOp) OverwritesInput() int           { return -1 }
func (op trsvTestOp) WriteHash(h hash.Hash)       { fmt.Fprint(h, op.String()) }
func (op trsvTestOp) Hashcode() uint32            { return stringHash(op) }
func (trsvTestOp) String() string                 { return "testTrsv" }
func (trsvTestOp) Lower(in []tensor.Shape) (Kernel, error) {
	return TriangularSolve{N: in[0][0], M: 1, Lower: true}, nil
}

func solveTriangularNode(t, b *G.Node) (*G.Node, error) { return G.ApplyOp(trsvTestOp{}, t, b) }

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
