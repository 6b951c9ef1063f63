package ppl

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad/ops"
)

// MvNormal is the multivariate normal distribution with mean Mu (a vector,
// or a scalar for a constant mean) and either covariance Sigma or its lower
// Cholesky factor L (set exactly one). Sigma and L are mat.Matrix
// constants or matrix nodes; with constants the factorisation happens once
// in Go. The observation is a vector or a matrix whose rows are
// observations.
//
// For a data matrix with more rows than columns, LogProb uses sufficient
// statistics: Σᵢ (yᵢ−μ)ᵀΣ⁻¹(yᵢ−μ) = tr(Σ⁻¹S) + m(ȳ−μ)ᵀΣ⁻¹(ȳ−μ) with the
// centred scatter S folded in Go, so each evaluation costs O(n³) whatever
// the number of rows m.
type MvNormal struct {
	Mu    Operand
	Sigma Operand
	L     Operand
}

// mvnFactor is a resolved MvNormal: its mean and its Cholesky factor,
// either a Go constant (lInv holds L⁻¹ row-major) or a graph node.
type mvnFactor struct {
	n          int
	mu         operand
	lInv       []float64
	lNode      *gorgonia.Node
	halfLogDet operand // Σ log L_ii = ½ log det Σ
}

func (d MvNormal) factor(e *expr, n int) (*mvnFactor, error) {
	return newMvFactor(e, "MvNormal", d.Mu, d.Sigma, d.L, n)
}

// newMvFactor resolves the location mu and the scale matrix sigma or its
// Cholesky factor l of the multivariate distribution dist in n dimensions.
func newMvFactor(e *expr, dist string, muOp, sigma, lOp Operand, n int) (*mvnFactor, error) {
	if (sigma == nil) == (lOp == nil) {
		return nil, fmt.Errorf("ppl: %s: set exactly one of Sigma and L", dist)
	}
	mu, err := resolve(dist+".Mu", muOp)
	if err != nil {
		return nil, err
	}
	if !mu.isScalar() && !mu.shape.Eq(tensor.Shape{n}) {
		return nil, fmt.Errorf("ppl: %s: Mu has shape %v, want (%d)", dist, mu.shape, n)
	}
	which, cov := "L", lOp
	if sigma != nil {
		which, cov = "Sigma", sigma
	}
	c, err := resolve(dist+"."+which, cov)
	if err != nil {
		return nil, err
	}
	if !c.shape.Eq(tensor.Shape{n, n}) {
		return nil, fmt.Errorf("ppl: %s: %s has shape %v, want (%d, %d)", dist, which, c.shape, n, n)
	}
	f := &mvnFactor{n: n, mu: mu}
	if c.isConst() {
		l, err := constFactor(dist, which, c.val, n)
		if err != nil {
			return nil, err
		}
		var inv mat.TriDense
		if err := inv.InverseTri(l); err != nil {
			return nil, fmt.Errorf("ppl: %s: %w", dist, err)
		}
		hl := 0.0
		for i := range n {
			hl += math.Log(l.At(i, i))
		}
		f.lInv, f.halfLogDet = denseRows(&inv), cst(hl)
		return f, nil
	}
	l := c.node
	if which == "Sigma" {
		l = e.un(ops.Cholesky, l)
	}
	eye := make([]float64, n*n)
	for i := range n {
		eye[i*n+i] = 1
	}
	diag := e.sumAlong(e.mul(l, constNode(eye, tensor.Shape{n, n})), 1)
	f.lNode, f.halfLogDet = l, onNode(e.sum(e.log(diag)))
	return f, e.err
}

// quadVec returns dᵀΣ⁻¹d = ‖L⁻¹d‖² for a residual vector node d.
func (f *mvnFactor) quadVec(e *expr, d *gorgonia.Node) operand {
	var z *gorgonia.Node
	if f.lNode == nil {
		z = e.matmul(constNode(f.lInv, tensor.Shape{f.n, f.n}), d)
	} else {
		z = e.bin(solveLower, f.lNode, d)
	}
	return onNode(e.sum(e.square(z)))
}

// quadRows returns the vector of dᵢᵀΣ⁻¹dᵢ over the rows dᵢ of the m×n
// residual node d.
func (f *mvnFactor) quadRows(e *expr, d *gorgonia.Node) operand {
	if f.lNode == nil {
		lInvT := constNode(denseRows(mat.NewDense(f.n, f.n, f.lInv).T()), tensor.Shape{f.n, f.n})
		return onNode(e.sumAlong(e.square(e.matmul(d, lInvT)), 1))
	}
	z := e.bin(solveLower, f.lNode, e.un(transpose, d)) // n×m
	return onNode(e.sumAlong(e.square(z), 0))
}

// quadConstRows returns Σⱼ rⱼᵀΣ⁻¹rⱼ over the rows of a constant k×n matrix.
func (f *mvnFactor) quadConstRows(e *expr, r []float64, k int) operand {
	if f.lNode == nil {
		lInv := mat.NewDense(f.n, f.n, f.lInv)
		var z mat.Dense
		z.Mul(mat.NewDense(k, f.n, r), lInv.T())
		ss := 0.0
		for _, v := range z.RawMatrix().Data {
			ss += v * v
		}
		return cst(ss)
	}
	// L⁻¹Rᵀ with Rᵀ constant: one triangular solve with k right-hand sides.
	rt := denseRows(mat.NewDense(k, f.n, r).T())
	z := e.bin(solveLower, f.lNode, constNode(rt, tensor.Shape{f.n, k}))
	return onNode(e.sum(e.square(z)))
}

// LogProb returns the summed log-density of the observations in x.
func (d MvNormal) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	if x != nil && (isData(x) || isConstantOp(x)) {
		if s := nodeShape(x); len(s) == 2 && s[0] > s[1] {
			return d.sufficientLogProb(x)
		}
	}
	return total(d.LogProbs(x))
}

// sufficientLogProb is LogProb for a constant m×n data matrix, m > n.
func (d MvNormal) sufficientLogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	s := nodeShape(x)
	m, n := s[0], s[1]
	y := mat.NewDense(m, n, append([]float64(nil), x.Value().Data().([]float64)...))
	e := &expr{}
	f, err := d.factor(e, n)
	if err != nil {
		return nil, err
	}
	// Centre the data and factor the scatter S = Σᵢ(yᵢ−ȳ)(yᵢ−ȳ)ᵀ as
	// Σⱼ λⱼvⱼvⱼᵀ: the rows √λⱼ vⱼᵀ then stand in for the m residuals.
	mean := make([]float64, n)
	for i := range m {
		for j := range n {
			mean[j] += y.At(i, j) / float64(m)
		}
	}
	for i := range m {
		for j := range n {
			y.Set(i, j, y.At(i, j)-mean[j])
		}
	}
	var sc mat.SymDense
	sc.SymOuterK(1, y.T())
	var eig mat.EigenSym
	if !eig.Factorize(&sc, true) {
		return nil, errors.New("ppl: MvNormal: eigendecomposition of the data scatter failed")
	}
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	var rows []float64
	k := 0
	for j, lam := range eig.Values(nil) {
		if lam <= 0 {
			continue
		}
		sl := math.Sqrt(lam)
		for i := range n {
			rows = append(rows, sl*vecs.At(i, j))
		}
		k++
	}
	quad := cst(0)
	if k > 0 {
		quad = f.quadConstRows(e, rows, k)
	}
	// The mean part m(ȳ−μ)ᵀΣ⁻¹(ȳ−μ) as one residual √m(ȳ−μ).
	sm := math.Sqrt(float64(m))
	r := e.Scale(sm, e.Sub(operand{val: mean, shape: tensor.Shape{n}}, f.mu))
	if r.isConst() {
		quad = e.Add(quad, f.quadConstRows(e, r.val, 1))
	} else {
		quad = e.Add(quad, f.quadVec(e, r.node))
	}
	norm := e.Scale(float64(m), e.Add(f.halfLogDet, cst(float64(n)*logSqrt2Pi)))
	return e.result(e.Sub(e.Scale(-0.5, quad), norm))
}

// LogProbs returns the log-density of each observation (a scalar for a
// vector x, one per row for a matrix x).
func (d MvNormal) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	if x == nil {
		return nil, errors.New("ppl: MvNormal: nil observation")
	}
	xs := nodeShape(x)
	if len(xs) != 1 && len(xs) != 2 {
		return nil, fmt.Errorf("ppl: MvNormal: observation has shape %v, want a vector or a matrix", xs)
	}
	n := xs[len(xs)-1]
	e := &expr{}
	f, err := d.factor(e, n)
	if err != nil {
		return nil, err
	}
	quad := f.quadratic(e, x, xs)
	lp := e.Sub(e.Scale(-0.5, quad), e.Add(f.halfLogDet, cst(float64(n)*logSqrt2Pi)))
	return e.result(lp)
}

// quadratic returns (x − μ)ᵀΣ⁻¹(x − μ) for a vector x, or the vector of
// them over the rows of a matrix x of shape xs.
func (f *mvnFactor) quadratic(e *expr, x *gorgonia.Node, xs tensor.Shape) operand {
	mu, n := f.mu, f.n
	// Residuals d = x − μ, broadcasting μ over rows.
	resid := x
	switch {
	case mu.isConstEq(0):
	case mu.isScalar() || len(xs) == 1:
		resid = e.sub(x, e.node(mu))
	case mu.isConst():
		tiled := make([]float64, 0, xs[0]*n)
		for range xs[0] {
			tiled = append(tiled, mu.val...)
		}
		resid = e.sub(x, constNode(tiled, xs))
	default:
		resid = e.bin(func(a, b *gorgonia.Node) (*gorgonia.Node, error) {
			return gorgonia.BroadcastSub(a, b, nil, []byte{0})
		}, x, mu.node)
	}
	if len(xs) == 1 {
		return f.quadVec(e, resid)
	}
	return f.quadRows(e, resid)
}

func solveLower(l, b *gorgonia.Node) (*gorgonia.Node, error) { return ops.SolveTriangular(l, b, true) }

func transpose(a *gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Transpose(a) }

// constFactor returns the lower Cholesky factor of a constant covariance,
// or checks a given constant factor.
func constFactor(dist, which string, v []float64, n int) (*mat.TriDense, error) {
	if which == "Sigma" {
		sym := mat.NewSymDense(n, nil)
		for i := range n {
			for j := i; j < n; j++ {
				if v[i*n+j] != v[j*n+i] {
					return nil, fmt.Errorf("ppl: %s: Sigma is not symmetric at (%d, %d)", dist, i, j)
				}
				sym.SetSym(i, j, v[i*n+j])
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(sym) {
			return nil, fmt.Errorf("ppl: %s: Sigma is not positive definite", dist)
		}
		var l mat.TriDense
		ch.LTo(&l)
		return &l, nil
	}
	l := mat.NewTriDense(n, mat.Lower, nil)
	for i := range n {
		for j := range n {
			switch {
			case j > i && v[i*n+j] != 0:
				return nil, fmt.Errorf("ppl: %s: L is not lower-triangular at (%d, %d)", dist, i, j)
			case j == i && !(v[i*n+j] > 0):
				return nil, fmt.Errorf("ppl: %s: L has a non-positive diagonal at %d", dist, i)
			case j <= i:
				l.SetTri(i, j, v[i*n+j])
			}
		}
	}
	return l, nil
}

// denseRows returns m's entries row-major.
func denseRows(m mat.Matrix) []float64 {
	r, c := m.Dims()
	v := make([]float64, 0, r*c)
	for i := range r {
		for j := range c {
			v = append(v, m.At(i, j))
		}
	}
	return v
}
