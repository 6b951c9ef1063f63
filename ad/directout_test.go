package ad

import (
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"sync"
	"testing"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// buffered returns a clone of p that evaluates Outputs on its buffers.
func buffered(p *Program) *Program {
	q := p.Clone()
	c := *q.code
	c.directOut = nil
	q.code = &c
	return q
}

func TestOutputsDirect(t *testing.T) {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("x"))
	mu := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("mu"),
		G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, -2, 0.5}))))
	w := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("w"),
		G.WithValue(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 2, 3, -1, 0.5, 4}))))
	s := G.NewScalar(g, tensor.Float64, G.WithName("s"), G.WithValue(2.5))
	d := G.Must(G.Sub(x, mu))
	y := G.Must(G.Add(G.Must(G.Mul(w, d)), s))      // (2)
	u := G.Must(G.HadamardDiv(d, G.Must(G.Neg(x)))) // (3), a second output reading d
	p, err := CompileOutputs(g, []*G.Node{x}, []*G.Node{y, u, s}, WithSharedData(w))
	if err != nil {
		t.Fatal(err)
	}
	if p.code.directOut == nil {
		t.Fatal("no direct plan")
	}
	q := buffered(p)
	in := []float64{0.3, -1.7, 2}
	got, want := make([]float64, 6), make([]float64, 6)
	if err := p.Outputs(in, got); err != nil {
		t.Fatal(err)
	}
	if err := q.Outputs(in, want); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		// Matrix–vector products may round differently from BLAS's.
		if math.Abs(got[i]-want[i]) > 1e-15*(1+math.Abs(want[i])) {
			t.Errorf("direct outputs %v, buffered %v", got, want)
			break
		}
	}
	if allocs := testing.AllocsPerRun(20, func() { _ = p.Outputs(in, got) }); allocs != 0 {
		t.Errorf("direct Outputs allocates %v times", allocs)
	}
	// Overlapping x and dst run directly on a copy of x: the values of
	// separate slices, without allocating.
	buf := make([]float64, 6)
	copy(buf, in)
	if err := p.Outputs(buf[:3], buf); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(buf) != fmt.Sprint(got) {
		t.Errorf("overlapping outputs %v, want %v", buf, got)
	}
	if allocs := testing.AllocsPerRun(20, func() { copy(buf, in); _ = p.Outputs(buf[:3], buf) }); allocs != 0 {
		t.Errorf("overlapping direct Outputs allocates %v times", allocs)
	}
	// Concurrent calls on one Program, in place among them, need no clones.
	var wg sync.WaitGroup
	bad := make([]bool, 4)
	for k := range bad {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := make([]float64, 6)
			for range 500 {
				if err := p.Outputs(in, dst); err != nil || dst[5] != 2.5 || dst[0] != got[0] {
					bad[k] = true
					return
				}
				copy(dst, in) // in place too
				if err := p.Outputs(dst[:3], dst); err != nil || dst[5] != 2.5 || dst[0] != got[0] {
					bad[k] = true
					return
				}
			}
		}()
	}
	wg.Wait()
	for k, b := range bad {
		if b {
			t.Errorf("goroutine %d: concurrent direct Outputs failed", k)
		}
	}
	// A constant matrix's trailing zeros are skipped.
	g3 := G.NewGraph()
	x3 := G.NewVector(g3, tensor.Float64, G.WithShape(3), G.WithName("x"))
	c3 := G.NewConstant(tensor.New(tensor.WithShape(3, 3), tensor.WithBacking([]float64{2, 0, 0, 1, 3, 0, 4, 0, 5})))
	p3, err := CompileOutputs(g3, []*G.Node{x3}, []*G.Node{G.Must(G.Mul(c3, x3))})
	if err != nil {
		t.Fatal(err)
	}
	if d := p3.code.directOut; d == nil || len(d.ops) != 1 || fmt.Sprint(d.ops[0].ext) != "[1 2 3]" {
		t.Fatalf("constant lower-triangular product: plan %+v", d)
	}
	y3 := make([]float64, 3)
	if err := p3.Outputs([]float64{1, 2, 3}, y3); err != nil || y3[0] != 2 || y3[1] != 7 || y3[2] != 19 {
		t.Errorf("constant product %v, want [2 7 19] (%v)", y3, err)
	}
	// An affine layer, a difference into a solve or a product plus a
	// vector, is one op evaluated without the general loop, with the
	// buffered path's values.
	for _, solve := range []bool{true, false} {
		ga := G.NewGraph()
		xa := G.NewVector(ga, tensor.Float64, G.WithShape(3), G.WithName("x"))
		la := G.NewMatrix(ga, tensor.Float64, G.WithShape(3, 3), G.WithName("L"),
			G.WithValue(tensor.New(tensor.WithShape(3, 3), tensor.WithBacking([]float64{2, 0, 0, 1, 3, 0, 4, -1, 5}))))
		ma := G.NewVector(ga, tensor.Float64, G.WithShape(3), G.WithName("mu"),
			G.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, -2, 0.5}))))
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
		if d := pa.code.directOut; d == nil || !d.one || !pa.DirectOutputs() {
			t.Fatalf("solve %v: affine layer not planned as one op: %+v", solve, d)
		}
		in := []float64{0.3, -1.7, 2}
		got, want := make([]float64, 3), make([]float64, 3)
		if err := pa.Outputs(in, got); err != nil {
			t.Fatal(err)
		}
		if err := buffered(pa).Outputs(in, want); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-15*(1+math.Abs(want[i])) {
				t.Errorf("solve %v: one-op outputs %v, buffered %v", solve, got, want)
				break
			}
		}
	}
	// A unary op the direct path does not run keeps the buffers.
	g2 := G.NewGraph()
	x2 := G.NewVector(g2, tensor.Float64, G.WithShape(3), G.WithName("x"))
	p2, err := CompileOutputs(g2, []*G.Node{x2}, []*G.Node{G.Must(G.Exp(x2))})
	if err != nil {
		t.Fatal(err)
	}
	if p2.code.directOut != nil {
		t.Error("exp planned for the direct path")
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
func (op trsvTestOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}
func (trsvTestOp) String() string { return "testTrsv" }
func (trsvTestOp) Lower(in []tensor.Shape) (Kernel, error) {
	return TriangularSolve{N: in[0][0], M: 1, Lower: true}, nil
}

func solveTriangularNode(t, b *G.Node) (*G.Node, error) { return G.ApplyOp(trsvTestOp{}, t, b) }
