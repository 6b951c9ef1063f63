package ppl

import (
	"fmt"
	"math"
	"strings"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// constraint is the support of a declared parameter.
type constraint int

const (
	realLine constraint = iota
	lowerBounded
	upperBounded
	interval
	ordered
	positiveOrdered
	simplex
	choleskyFactorCov
	unitLowerTriangular
	choleskyFactorCorr
)

func (c constraint) String() string {
	switch c {
	case realLine:
		return "real"
	case lowerBounded:
		return "lower-bounded"
	case upperBounded:
		return "upper-bounded"
	case interval:
		return "interval"
	case ordered:
		return "ordered"
	case positiveOrdered:
		return "positive-ordered"
	case simplex:
		return "simplex"
	case choleskyFactorCov:
		return "Cholesky-factor (lower-triangular, positive diagonal)"
	case unitLowerTriangular:
		return "unit-lower-triangular"
	case choleskyFactorCorr:
		return "Cholesky-factor-of-correlation (lower-triangular, unit rows, positive diagonal)"
	}
	return "unknown"
}

// param is one declared parameter: its unconstrained input nodes, the
// constrained value computed from them, and its log-Jacobian term.
type param struct {
	name  string
	kind  constraint
	shape tensor.Shape // constrained shape; () for scalars
	wrt   []*gorgonia.Node
	usize int // total size of the wrt nodes
	value *gorgonia.Node
	logJ  *gorgonia.Node // nil when the transform is volume preserving

	lo, hi operand // bounds of lower/upper/interval parameters

	// Indices into the model's bound outputs of node-valued bounds, or −1.
	loOut, hiOut int
}

// size is the number of constrained scalars.
func (p *param) size() int {
	if len(p.shape) == 0 {
		return 1
	}
	return p.shape.TotalSize()
}

// paramPrefix starts the names of unconstrained input nodes. User names
// cannot contain '.', so no data node can carry it.
const paramPrefix = "ppl.u."

// isData reports whether n holds data: an input node with a value that is
// not one of the unconstrained parameter inputs.
func isData(n *gorgonia.Node) bool {
	return n.Op() == nil && n.Value() != nil && !strings.HasPrefix(n.Name(), paramPrefix)
}

// newInput creates an unconstrained input node of the given shape.
// It holds no value, which is what tells parameters from data (see resolve).
func newInput(g *gorgonia.ExprGraph, name string, s tensor.Shape) *gorgonia.Node {
	if len(s) == 0 {
		return gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName(name))
	}
	return gorgonia.NewTensor(g, tensor.Float64, len(s), gorgonia.WithName(name), gorgonia.WithShape(s...))
}

// build creates p's input nodes, value and log-Jacobian in g.
func (p *param) build(g *gorgonia.ExprGraph) error {
	e := &expr{}
	n := p.size()
	switch p.kind {
	case realLine:
		u := newInput(g, paramPrefix+p.name, p.shape)
		p.wrt, p.usize, p.value = []*gorgonia.Node{u}, n, u
	case lowerBounded, upperBounded, interval:
		u := newInput(g, paramPrefix+p.name, p.shape)
		p.wrt, p.usize = []*gorgonia.Node{u}, n
		p.value, p.logJ = p.buildBounded(e, u)
	case ordered:
		// x₁ = u₁, x_i = x_{i−1} + exp(u_i): the first coordinate is a
		// separate scalar input so that no slicing is needed.
		u1 := newInput(g, paramPrefix+p.name+".first", tensor.ScalarShape())
		ur := newInput(g, paramPrefix+p.name+".incr", tensor.Shape{n - 1})
		p.wrt, p.usize = []*gorgonia.Node{u1, ur}, n
		p.value = e.add(u1, e.matmul(constNode(cumsumMatrix(n, n-1, -1), tensor.Shape{n, n - 1}), e.exp(ur)))
		p.logJ = e.sum(ur)
	case positiveOrdered:
		u := newInput(g, paramPrefix+p.name, tensor.Shape{n})
		p.wrt, p.usize = []*gorgonia.Node{u}, n
		p.value = e.matmul(constNode(cumsumMatrix(n, n, 0), tensor.Shape{n, n}), e.exp(u))
		p.logJ = e.sum(u)
	case simplex:
		// Additive log-ratio: x = softmax(y, 0). Its Jacobian on the first
		// K−1 coordinates has determinant Π_{i=1}^{K} x_i (all K).
		k := n
		y := newInput(g, paramPrefix+p.name, tensor.Shape{k - 1})
		p.wrt, p.usize = []*gorgonia.Node{y}, k-1
		lse := e.softplus(e.logSumExp(y)) // log(1 + Σ exp y)
		head := e.matmul(constNode(embedMatrix(k), tensor.Shape{k, k - 1}), e.exp(e.sub(y, lse)))
		last := make([]float64, k)
		last[k-1] = 1
		p.value = e.add(head, e.mul(e.exp(e.neg(lse)), constNode(last, tensor.Shape{k})))
		p.logJ = e.sub(e.sum(y), e.scale(lse, float64(k)))
	case choleskyFactorCov, unitLowerTriangular:
		rows, cols := p.shape[0], p.shape[1]
		diag, off := triangularLayout(rows, cols)
		var acc *gorgonia.Node
		if p.kind == choleskyFactorCov {
			ud := newInput(g, paramPrefix+p.name+".logdiag", tensor.Shape{cols})
			p.wrt = append(p.wrt, ud)
			acc = e.matmul(constNode(scatterMatrix(rows*cols, diag), tensor.Shape{rows * cols, len(diag)}), e.exp(ud))
			p.logJ = e.sum(ud)
		} else {
			ones := make([]float64, rows*cols)
			for _, i := range diag {
				ones[i] = 1
			}
			acc = constNode(ones, tensor.Shape{rows * cols})
		}
		if len(off) > 0 {
			uo := newInput(g, paramPrefix+p.name+".lower", tensor.Shape{len(off)})
			p.wrt = append(p.wrt, uo)
			acc = e.add(acc, e.matmul(constNode(scatterMatrix(rows*cols, off), tensor.Shape{rows * cols, len(off)}), uo))
		}
		for _, w := range p.wrt {
			p.usize += w.Shape().TotalSize()
		}
		if e.err == nil && len(p.wrt) == 0 {
			return fmt.Errorf("ppl: parameter %q: a 1×1 unit-lower-triangular matrix has no free entries", p.name)
		}
		p.value = e.reshape(acc, tensor.Shape{rows, cols})
	case choleskyFactorCorr:
		p.buildCholeskyCorr(g, e)
	default:
		return fmt.Errorf("ppl: parameter %q: unknown constraint", p.name)
	}
	if e.err != nil {
		return fmt.Errorf("ppl: parameter %q: %w", p.name, e.err)
	}
	return nil
}

// buildBounded is the lower (x = lo + exp u), upper (x = hi − exp u) and
// logit-interval (x = lo + (hi − lo)·σ(u)) transforms.
func (p *param) buildBounded(e *expr, u *gorgonia.Node) (value, logJ *gorgonia.Node) {
	switch p.kind {
	case lowerBounded:
		ex := e.exp(u)
		if p.lo.isConst() && p.lo.isScalar() && p.lo.val[0] == 0 {
			return ex, e.sum(u)
		}
		return e.add(e.node(p.lo), ex), e.sum(u)
	case upperBounded:
		return e.sub(e.node(p.hi), e.exp(u)), e.sum(u)
	}
	// σ(u) = exp(−softplus(−u)) and log σ(u) + log σ(−u) = −2·softplus(−u) − u,
	// both exact in the tails.
	s := e.softplus(e.neg(u))
	width := e.Sub(p.hi, p.lo)
	v := e.Add(p.lo, e.Mul(width, onNode(e.exp(e.neg(s)))))
	logWidth := e.Log(width)
	if logWidth.isScalar() && p.size() > 1 {
		logWidth = e.Scale(float64(p.size()), logWidth)
	}
	lj := e.Add(onNode(e.sum(e.sub(e.scale(s, -2), u))), e.sumOperand(logWidth))
	return v.node, lj.node
}

// cumsumMatrix returns the rows×cols matrix M with M[i][j] = 1 when
// j ≤ i+shift, so that M·v is a cumulative sum (shift −1 leaves row 0 empty).
func cumsumMatrix(rows, cols, shift int) []float64 {
	m := make([]float64, rows*cols)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols && j <= i+shift; j++ {
			m[i*cols+j] = 1
		}
	}
	return m
}

// embedMatrix returns the k×(k−1) matrix [I; 0].
func embedMatrix(k int) []float64 {
	m := make([]float64, k*(k-1))
	for i := 0; i < k-1; i++ {
		m[i*(k-1)+i] = 1
	}
	return m
}

// scatterMatrix returns the n×len(pos) matrix placing entry j of a vector at
// flat position pos[j].
func scatterMatrix(n int, pos []int) []float64 {
	m := make([]float64, n*len(pos))
	for j, p := range pos {
		m[p*len(pos)+j] = 1
	}
	return m
}

// triangularLayout returns the row-major flat positions of the diagonal and
// of the strictly-lower entries of a rows×cols lower-triangular matrix.
func triangularLayout(rows, cols int) (diag, off []int) {
	for i := 0; i < rows; i++ {
		for j := 0; j < cols && j <= i; j++ {
			if i == j {
				diag = append(diag, i*cols+j)
			} else {
				off = append(off, i*cols+j)
			}
		}
	}
	return diag, off
}

// boundAt returns the i-th bound value, broadcasting scalars.
func boundAt(v []float64, i int) float64 {
	if len(v) == 1 {
		return v[0]
	}
	return v[i]
}

// unconstrain inverts p's transform: x holds p's constrained values
// (row-major), lo and hi the bound values, and u receives p.usize values.
func (p *param) unconstrain(x, lo, hi, u []float64) error {
	bad := func(i int, why string) error {
		return fmt.Errorf("ppl: parameter %q: value %v at %s violates its %v constraint: %s", p.name, x[i], flatName(p.name, p.shape, i), p.kind, why)
	}
	for i, xi := range x {
		if math.IsNaN(xi) || math.IsInf(xi, 0) {
			return bad(i, "not finite")
		}
	}
	switch p.kind {
	case realLine:
		copy(u, x)
	case lowerBounded:
		for i, xi := range x {
			l := boundAt(lo, i)
			if !(xi > l) {
				return bad(i, fmt.Sprintf("must exceed %v", l))
			}
			u[i] = math.Log(xi - l)
		}
	case upperBounded:
		for i, xi := range x {
			h := boundAt(hi, i)
			if !(xi < h) {
				return bad(i, fmt.Sprintf("must be below %v", h))
			}
			u[i] = math.Log(h - xi)
		}
	case interval:
		for i, xi := range x {
			l, h := boundAt(lo, i), boundAt(hi, i)
			if !(xi > l && xi < h) {
				return bad(i, fmt.Sprintf("must lie in (%v, %v)", l, h))
			}
			u[i] = math.Log(xi-l) - math.Log(h-xi)
		}
	case ordered:
		u[0] = x[0]
		for i := 1; i < len(x); i++ {
			if !(x[i] > x[i-1]) {
				return bad(i, "must be strictly increasing")
			}
			u[i] = math.Log(x[i] - x[i-1])
		}
	case positiveOrdered:
		prev := 0.0
		for i, xi := range x {
			if !(xi > prev) {
				return bad(i, "must be positive and strictly increasing")
			}
			u[i] = math.Log(xi - prev)
			prev = xi
		}
	case simplex:
		sum := 0.0
		for i, xi := range x {
			if !(xi > 0) {
				return bad(i, "must be positive")
			}
			sum += xi
		}
		if math.Abs(sum-1) > 1e-8*float64(len(x)) {
			return fmt.Errorf("ppl: parameter %q: simplex sums to %v, not 1", p.name, sum)
		}
		last := math.Log(x[len(x)-1])
		for i := range len(x) - 1 {
			u[i] = math.Log(x[i]) - last
		}
	case choleskyFactorCorr:
		return p.unconstrainCholeskyCorr(x, u, bad)
	case choleskyFactorCov, unitLowerTriangular:
		rows, cols := p.shape[0], p.shape[1]
		k := 0
		if p.kind == choleskyFactorCov {
			for i := 0; i < cols; i++ {
				d := x[i*cols+i]
				if !(d > 0) {
					return bad(i*cols+i, "diagonal must be positive")
				}
				u[k] = math.Log(d)
				k++
			}
		}
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				xi := x[i*cols+j]
				switch {
				case j > i:
					if math.Abs(xi) > 1e-12 {
						return bad(i*cols+j, "must be zero above the diagonal")
					}
				case j == i && p.kind == unitLowerTriangular:
					if math.Abs(xi-1) > 1e-12 {
						return bad(i*cols+j, "diagonal must be one")
					}
				case j < i:
					u[k] = xi
					k++
				}
			}
		}
	default:
		return fmt.Errorf("ppl: parameter %q: unknown constraint", p.name)
	}
	return nil
}
