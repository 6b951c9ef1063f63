package ops

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
)

// PermuteColumns returns y with y[r, i] = x[r, perm[i]] for a matrix x of
// shape (B, n); perm must be a permutation of 0..n−1. A flow uses it between
// autoregressive layers. Its gradient is the inverse permutation.
func PermuteColumns(x *gorgonia.Node, perm []int) (*gorgonia.Node, error) {
	if err := checkNodes("PermuteColumns", x); err != nil {
		return nil, err
	}
	s := x.Shape()
	if len(s) != 2 || s[1] != len(perm) {
		return nil, fmt.Errorf("ops: PermuteColumns: input of shape %v for a permutation of %d", s, len(perm))
	}
	seen := make([]bool, len(perm))
	for i, p := range perm {
		if p < 0 || p >= len(perm) || seen[p] {
			return nil, fmt.Errorf("ops: PermuteColumns: %v is not a permutation (entry %d)", perm, i)
		}
		seen[p] = true
	}
	return gorgonia.ApplyOp(newPermuteOp(perm), x)
}

type permuteOp struct {
	matOp
	perm []int
	hash uint64
}

func newPermuteOp(perm []int) permuteOp {
	h := fnv.New64a()
	for _, p := range perm {
		fmt.Fprint(h, p, ",")
	}
	return permuteOp{perm: append([]int(nil), perm...), hash: h.Sum64()}
}

func (op permuteOp) Arity() int    { return 1 }
func (op permuteOp) Type() hm.Type { return hm.NewFnType(tensorType(2), tensorType(2)) }
func (op permuteOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOf(in)
	if err != nil {
		return nil, err
	}
	if len(s) != 1 || len(s[0]) != 2 || s[0][1] != len(op.perm) {
		return nil, fmt.Errorf("ops: %v: input shapes %v", op, s)
	}
	return s[0].Clone(), nil
}
func (op permuteOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op permuteOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op permuteOp) Hashcode() uint32                               { return hashOf(op) }
func (op permuteOp) String() string {
	return fmt.Sprintf("PermuteColumns{%d,%x}", len(op.perm), op.hash)
}
func (op permuteOp) DiffWRT(int) []bool { return []bool{true} }
func (op permuteOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	inv := make([]int, len(op.perm))
	for i, p := range op.perm {
		inv[p] = i
	}
	g, err := gorgonia.ApplyOp(newPermuteOp(inv), grad)
	return gorgonia.Nodes{g}, err
}

// Lower implements ad.Lowerer.
func (op permuteOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 1 || len(in[0]) != 2 || in[0][1] != len(op.perm) {
		return nil, fmt.Errorf("ops: %v: input shapes %v", op, in)
	}
	return permuteKernel{perm: op.perm, rows: in[0][0]}, nil
}

type permuteKernel struct {
	perm []int
	rows int
}

// WritesFullOutput implements ad.FullWriter: Eval writes every element of out.
func (k permuteKernel) WritesFullOutput() bool { return true }

func (k permuteKernel) Eval(out []float64, in [][]float64) error {
	n := len(k.perm)
	x := in[0]
	if len(x) != k.rows*n || len(out) != len(x) {
		return errBufferSize
	}
	for r := 0; r < k.rows; r++ {
		o, xr := out[r*n:(r+1)*n], x[r*n:(r+1)*n]
		for i, p := range k.perm {
			o[i] = xr[p]
		}
	}
	return nil
}
