package ad

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// selMatrix returns an r×c 0/1 matrix with a one at (i, at[i]) for each
// at[i] ≥ 0, row-major.
func selMatrix(r, c int, at []int) []float64 {
	m := make([]float64, r*c)
	for i, j := range at {
		if j >= 0 {
			m[i*c+j] = 1
		}
	}
	return m
}

func dataMatrix(g *G.ExprGraph, name string, r, c int, v []float64) *G.Node {
	t := tensor.New(tensor.WithShape(r, c), tensor.WithBacking(append([]float64(nil), v...)))
	return G.NewMatrix(g, tensor.Float64, G.WithShape(r, c), G.WithName(name), G.WithValue(t))
}

// pickGraph scatters x (4) into 6 places by a data selection matrix (two
// rows zero) and gathers 5 of those by a constant one, as ppl's Diag and
// DiagMatrix do; the gradient multiplies by both transposes, selections
// too since no column has two ones.
func pickGraph(g *G.ExprGraph) (*G.Node, []*G.Node) {
	x := vec(g, "x", 4)
	s := dataMatrix(g, "S", 6, 4, selMatrix(6, 4, []int{2, -1, 0, 3, -1, 1}))
	c := G.NewConstant(tensor.New(tensor.WithShape(5, 6), tensor.WithBacking(selMatrix(5, 6, []int{5, 0, 3, -1, 2}))))
	y := G.Must(G.Mul(s, x))
	z := G.Must(G.Mul(c, G.Must(G.Tanh(y))))
	return G.Must(G.Add(weighted(g, G.Must(G.Square(y)), 3), weighted(g, G.Must(G.Exp(z)), 4))), []*G.Node{x}
}

func countPicks(p *Program) int {
	n := 0
	for _, ins := range p.code.full {
		if ins.pick != nil {
			n++
		}
	}
	return n
}

// TestSelectionPicks checks products by selection matrices, which run as
// copies, against the tape and finite differences, and that all four
// products (two forward, two in the gradient) became copies.
func TestSelectionPicks(t *testing.T) {
	checkAgainstReferences(t, pickGraph, normals, noBug)
	if n := countPicks(compileFunc(t, pickGraph)); n != 4 {
		t.Errorf("%d products by selection matrices run as copies, want 4", n)
	}
	// A matrix with a 2, or two ones in a row, is not a selection.
	for _, m := range [][]float64{selMatrix(2, 2, []int{0, 1}), {1, 1, 0, 1}} {
		m[0] *= 2
		p := compileFunc(t, func(g *G.ExprGraph) (*G.Node, []*G.Node) {
			x := vec(g, "x", 2)
			return G.Must(G.Sum(G.Must(G.Mul(dataMatrix(g, "A", 2, 2, m), x)))), []*G.Node{x}
		})
		if n := countPicks(p); n != 0 {
			t.Errorf("%v: %d copies, want 0", m, n)
		}
	}
}

// TestSelectionPickBind binds a data selection matrix to a matrix that is
// not one: the program, and clones made afterwards, must give the bits of a
// program compiled with that matrix.
func TestSelectionPickBind(t *testing.T) {
	dense := make([]float64, 24)
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range dense {
		dense[i] = rng.NormFloat64()
	}
	g := G.NewGraph()
	out, wrt := pickGraph(g)
	p, err := Compile(g, out, wrt)
	if err != nil {
		t.Fatal(err)
	}
	var s *G.Node
	for _, n := range g.AllNodes() {
		if n.Name() == "S" {
			s = n
		}
	}
	before := p.Clone()
	if err := p.Bind(s, selMatrix(6, 4, []int{2, -1, 0, 3, -1, 1})); err != nil || p.dense {
		t.Fatalf("Bind of the same selection: %v, dense %v", err, p.dense)
	}
	if err := p.Bind(s, dense); err != nil {
		t.Fatal(err)
	}
	after := p.Clone()
	g2 := G.NewGraph()
	out2, wrt2 := pickGraph(g2)
	for _, n := range g2.AllNodes() {
		if n.Name() == "S" {
			if err := G.Let(n, tensor.New(tensor.WithShape(6, 4), tensor.WithBacking(append([]float64(nil), dense...)))); err != nil {
				t.Fatal(err)
			}
		}
	}
	ref, err := Compile(g2, out2, wrt2)
	if err != nil {
		t.Fatal(err)
	}
	x := normals(rng, 4)
	want, wg := make([]float64, 4), make([]float64, 4)
	wv, err := ref.LogDensityGrad(x, wg)
	if err != nil {
		t.Fatal(err)
	}
	copy(want, wg)
	for name, q := range map[string]*Program{"bound": p, "clone after Bind": after} {
		gr := make([]float64, 4)
		v, err := q.LogDensityGrad(x, gr)
		if err != nil || v != wv {
			t.Errorf("%s: %v, %v; want %v", name, v, err, wv)
		}
		for i := range gr {
			if gr[i] != want[i] {
				t.Errorf("%s: grad[%d] %v, want %v", name, i, gr[i], want[i])
			}
		}
	}
	if v, err := before.LogDensity(x); err != nil || v == wv {
		t.Errorf("clone made before Bind: %v, %v; must keep the selection", v, err)
	}
}
