package ppl

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Matrix helpers for writing priors on structured parameters (e.g. separate
// priors on the diagonal and the lower triangle of factor loadings) and
// covariances such as BBᵀ + diag(λ). They gather or scatter with constant
// 0/1 matrices, which the compiler runs as one small matrix-vector product.

// Diag returns the diagonal of the matrix m as a vector of length
// min(rows, cols).
func Diag(m *gorgonia.Node) (*gorgonia.Node, error) {
	r, c, err := matrixDims("Diag", m)
	if err != nil {
		return nil, err
	}
	var pos []int
	for i := 0; i < min(r, c); i++ {
		pos = append(pos, i*c+i)
	}
	return gather(m, pos)
}

// StrictlyLower returns the entries of the matrix m below its diagonal,
// row by row, as a vector (the free entries of a unit-lower-triangular
// matrix, or the off-diagonal loadings of a factor model).
func StrictlyLower(m *gorgonia.Node) (*gorgonia.Node, error) {
	r, c, err := matrixDims("StrictlyLower", m)
	if err != nil {
		return nil, err
	}
	_, off := triangularLayout(r, c)
	if len(off) == 0 {
		return nil, fmt.Errorf("ppl: StrictlyLower: a %d×%d matrix has no entries below the diagonal", r, c)
	}
	return gather(m, off)
}

// DiagMatrix returns the n×n diagonal matrix with the vector v (length n)
// on its diagonal.
func DiagMatrix(v *gorgonia.Node) (*gorgonia.Node, error) {
	if v == nil {
		return nil, fmt.Errorf("ppl: DiagMatrix: nil node")
	}
	s := nodeShape(v)
	if len(s) != 1 {
		return nil, fmt.Errorf("ppl: DiagMatrix: shape %v, want a vector", s)
	}
	n := s[0]
	pos := make([]int, n)
	for i := range pos {
		pos[i] = i*n + i
	}
	e := &expr{}
	flat := e.matmul(constNode(scatterMatrix(n*n, pos), tensor.Shape{n * n, n}), v)
	out := e.reshape(flat, tensor.Shape{n, n})
	return out, e.err
}

func matrixDims(what string, m *gorgonia.Node) (int, int, error) {
	if m == nil {
		return 0, 0, fmt.Errorf("ppl: %s: nil node", what)
	}
	s := nodeShape(m)
	if len(s) != 2 {
		return 0, 0, fmt.Errorf("ppl: %s: shape %v, want a matrix", what, s)
	}
	return s[0], s[1], nil
}

// gather returns the entries of m at the row-major flat positions pos.
func gather(m *gorgonia.Node, pos []int) (*gorgonia.Node, error) {
	s := m.Shape()
	n := s.TotalSize()
	sel := make([]float64, len(pos)*n)
	for j, p := range pos {
		sel[j*n+p] = 1
	}
	e := &expr{}
	flat := e.reshape(m, tensor.Shape{n})
	out := e.matmul(constNode(sel, tensor.Shape{len(pos), n}), flat)
	return out, e.err
}
