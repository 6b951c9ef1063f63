package ad

import (
	"fmt"
	"hash"
	"math/rand/v2"
	"testing"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// symPartOp is (A+Aᵀ)/2 of a square matrix, with a kernel that says its
// output is symmetric; it is its own gradient.
type symPartOp struct{}

func (symPartOp) Arity() int { return 1 }
func (symPartOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}
func (symPartOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (op symPartOp) Do(vals ...G.Value) (G.Value, error) {
	n := vals[0].Shape()[0]
	d, err := valueData(vals[0], n*n)
	if err != nil {
		return nil, err
	}
	out := make([]float64, n*n)
	if err := (symPartKernel{n}).Eval(out, [][]float64{d}); err != nil {
		return nil, err
	}
	return tensor.New(tensor.WithShape(n, n), tensor.WithBacking(out)), nil
}
func (symPartOp) ReturnsPtr() bool         { return false }
func (symPartOp) CallsExtern() bool        { return false }
func (symPartOp) OverwritesInput() int     { return -1 }
func (op symPartOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.String()) }
func (op symPartOp) Hashcode() uint32      { return stringHash(op) }
func (symPartOp) String() string           { return "testSymPart" }
func (symPartOp) DiffWRT(int) []bool       { return []bool{true} }
func (op symPartOp) SymDiff(_ G.Nodes, _, grad *G.Node) (G.Nodes, error) {
	d, err := G.ApplyOp(op, grad)
	return G.Nodes{d}, err
}
func (symPartOp) Lower(in []tensor.Shape) (Kernel, error) {
	if len(in) != 1 || len(in[0]) != 2 || in[0][0] != in[0][1] {
		return nil, fmt.Errorf("want a square matrix, got %v", in)
	}
	return symPartKernel{in[0][0]}, nil
}

type symPartKernel struct{ n int }

func (k symPartKernel) Eval(out []float64, in [][]float64) error {
	a, n := in[0], k.n
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := 0.5 * (a[i*n+j] + a[j*n+i])
			out[i*n+j], out[j*n+i] = v, v
		}
	}
	return nil
}

func (symPartKernel) SymmetricOutput() bool { return true }

// TestSymmetricProducts checks mergeSymmetricProducts: the gradient of B
// in f(sym(B·Bᵀ)) is Ḡ·B + Ḡᵀ·B with Ḡ a symmetric kernel's output, which
// becomes the one product 2·Ḡ·B with the same bits as the two (compared
// with the program compiled without the rewrite), and a product whose
// matrix is not known to be symmetric keeps its two terms.
func TestSymmetricProducts(t *testing.T) {
	build := func(g *G.ExprGraph) (*G.Node, []*G.Node) {
		b, v := mat(g, "b", 4, 2), mat(g, "v", 4, 2)
		c := constMatrix(g, "c", 3, 4, 4)
		s := G.Must(G.ApplyOp(symPartOp{}, G.Must(G.Mul(b, G.Must(G.Transpose(b))))))
		// v·vᵀ's gradient has the non-symmetric weights c in it.
		w := G.Must(G.HadamardProd(c, G.Must(G.Mul(v, G.Must(G.Transpose(v))))))
		f := G.Must(G.Add(G.Must(G.HadamardProd(c, G.Must(G.Tanh(s)))), w))
		return G.Must(G.Sum(G.Must(G.Square(f)))), []*G.Node{b, v}
	}
	merged, plain := compileFunc(t, build), compileFunc(t, build, func(c *config) { c.noAccum = true })
	twice, products := 0, 0
	for _, ins := range merged.code.full {
		if ins.kind == kGemm {
			products++
			if ins.scale == 2 {
				twice++
			}
		}
	}
	// B·Bᵀ, v·vᵀ, 2·Ḡ·B and v's two terms.
	if twice != 1 || products != 5 {
		t.Errorf("%d products, %d of them doubled; want 5 and 1", products, twice)
	}
	rng := rand.New(rand.NewPCG(8, 9))
	for trial := 0; trial < 3; trial++ {
		checkSameNumbers(t, merged, "merged", plain, "not merged", normals(rng, merged.Dim()))
	}
	checkAgainstReferences(t, build, normals, noBug)
}
