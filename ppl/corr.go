package ppl

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The Cholesky factor of a K×K correlation matrix is lower-triangular with
// unit rows and a positive diagonal. Stan's transform maps each of the
// K(K−1)/2 coordinates y, row by row, to a canonical partial correlation
// z = tanh(y) ∈ (−1, 1), and row i of the factor to
//
//	L_ij = z_ij·√(1 − Σ_{l<j} L_il²) = z_ij·Π_{l<j} √(1 − z_il²),  L_ii = Π_{l<i} √(1 − z_il²).
//
// With v = ½ log(1 − z²) = y + log 2 − softplus(2y), finite for every y,
// the products are exponentials of row-wise cumulative sums of v, which
// are constant matrices times v. The log-Jacobian is Σ log(1 − z²) (the
// tanh) plus Σ_{j<i} Σ_{l<j} v_il (each L_ij's factor), that is
// Σ v_il·(i + 1 − l) with rows and columns numbered from zero.

// corrLayout returns the row and column of each coordinate of a K×K
// Cholesky factor of a correlation matrix, row by row.
func corrLayout(k int) (row, col []int) {
	for i := 1; i < k; i++ {
		for l := 0; l < i; l++ {
			row, col = append(row, i), append(col, l)
		}
	}
	return row, col
}

// buildCholeskyCorr builds p's input, value and log-Jacobian.
func (p *param) buildCholeskyCorr(g *gorgonia.ExprGraph, e *expr) {
	k := p.shape[0]
	row, col := corrLayout(k)
	m := len(row)
	y := newInput(g, paramPrefix+p.name, tensor.Shape{m})
	p.wrt, p.usize = []*gorgonia.Node{y}, m
	z := e.un(gorgonia.Tanh, y)
	v := e.sub(e.add(y, e.c(math.Ln2)), e.softplus(e.scale(y, 2)))
	// before[a][b] = 1 when coordinate b is earlier in coordinate a's row;
	// diag[i][b] = 1 when coordinate b is in row i.
	before := make([]float64, m*m)
	diag := make([]float64, k*m)
	coef := make([]float64, m)
	for a := range m {
		for b := range m {
			if row[b] == row[a] && col[b] < col[a] {
				before[a*m+b] = 1
			}
		}
		diag[row[a]*m+a] = 1
		coef[a] = float64(row[a] + 1 - col[a])
	}
	off := e.mul(z, e.exp(e.matmul(constNode(before, tensor.Shape{m, m}), v)))
	dg := e.exp(e.matmul(constNode(diag, tensor.Shape{k, m}), v))
	offPos, diagPos := make([]int, m), make([]int, k)
	for a := range m {
		offPos[a] = row[a]*k + col[a]
	}
	for i := range k {
		diagPos[i] = i*k + i
	}
	flat := e.add(e.matmul(constNode(scatterMatrix(k*k, offPos), tensor.Shape{k * k, m}), off),
		e.matmul(constNode(scatterMatrix(k*k, diagPos), tensor.Shape{k * k, k}), dg))
	p.value = e.reshape(flat, tensor.Shape{k, k})
	p.logJ = e.sum(e.mul(constNode(coef, tensor.Shape{m}), v))
}

// unconstrainCholeskyCorr inverts the transform: z_il = L_il / √(1 − Σ_{j<l} L_ij²).
func (p *param) unconstrainCholeskyCorr(x, u []float64, bad func(int, string) error) error {
	k := p.shape[0]
	a := 0
	for i := range k {
		ss := 0.0
		for j := range k {
			xij := x[i*k+j]
			switch {
			case j > i:
				if math.Abs(xij) > 1e-12 {
					return bad(i*k+j, "must be zero above the diagonal")
				}
			case j == i:
				if !(xij > 0) {
					return bad(i*k+j, "diagonal must be positive")
				}
				if math.Abs(ss+xij*xij-1) > 1e-8 {
					return bad(i*k+j, fmt.Sprintf("row %d has squared norm %v, not 1", i+1, ss+xij*xij))
				}
			default:
				z := xij / math.Sqrt(1-ss)
				if !(math.Abs(z) < 1) {
					return bad(i*k+j, "the row's entries must have squared norm below 1 before the diagonal")
				}
				u[a] = math.Atanh(z)
				a++
				ss += xij * xij
			}
		}
	}
	return nil
}

// CholeskyFactorCorr declares the K×K (K ≥ 2) lower Cholesky factor L of a
// correlation matrix LLᵀ: lower-triangular, rows of unit length, positive
// diagonal (Stan's cholesky_factor_corr), with K(K−1)/2 unconstrained
// coordinates. LKJCholesky is its usual prior.
func (b *Builder) CholeskyFactorCorr(name string, k int) *gorgonia.Node {
	if k < 2 {
		b.setErr(fmt.Errorf("ppl: Cholesky-factor-of-correlation parameter %q needs K ≥ 2, got %d", name, k))
		return b.placeholder(nil)
	}
	return b.declare(&param{name: name, kind: choleskyFactorCorr, shape: tensor.Shape{k, k}})
}

// LKJCholesky is the LKJ distribution of a correlation matrix with shape
// Eta > 0, put on its lower Cholesky factor L (Stan's lkj_corr_cholesky):
// the correlation matrix LLᵀ has density proportional to det(LLᵀ)^{η−1},
// and L the density
//
//	Π_{k=2}^{K} L_kk^{K−k+2η−2} / c_K(η),
//	c_K(η) = Π_{k=1}^{K−1} 2^{(2η−2+K−k)(K−k)} B(η + (K−k−1)/2, η + (K−k−1)/2)^{K−k}
//
// (Lewandowski, Kurowicka and Joe 2009). η = 1 is uniform over correlation
// matrices; larger η concentrates on the identity. The observation is a
// CholeskyFactorCorr parameter or such a constant matrix.
type LKJCholesky struct{ Eta Operand }

// LogProb returns the log-density of L.
func (d LKJCholesky) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) { return d.LogProbs(x) }

// LogProbs returns the log-density of L, a scalar.
func (d LKJCholesky) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	const dist = "LKJCholesky"
	xo, err := observation(dist, x, func(s tensor.Shape) bool {
		return len(s) == 2 && s[0] == s[1] && s[0] >= 2
	}, "a K×K matrix, K ≥ 2")
	if err != nil {
		return nil, err
	}
	s := xo.shape
	k := s[0]
	eta, err := positiveScalar(dist, "Eta", d.Eta)
	if err != nil {
		return nil, err
	}
	if xo.isConst() {
		p := &param{name: "observation", kind: choleskyFactorCorr, shape: s}
		if err := p.unconstrainCholeskyCorr(xo.val, make([]float64, k*(k-1)/2), func(i int, why string) error {
			return fmt.Errorf("ppl: %s: observation entry %s is %v: %s", dist, flatName("L", s, i), xo.val[i], why)
		}); err != nil {
			return nil, err
		}
	}
	e := &expr{}
	// log L_kk for k = 2…K (numbered from one), and their exponents.
	pos := make([]int, k-1)
	base := make([]float64, k-1)
	for i := 1; i < k; i++ {
		pos[i-1] = i*k + i
		base[i-1] = float64(k - i - 1 - 2) // K − k − 2 with k = i + 1
	}
	var logDiag operand
	if xo.isConst() {
		v := make([]float64, k-1)
		for j, q := range pos {
			v[j] = math.Log(xo.val[q])
		}
		logDiag = operand{val: v, shape: tensor.Shape{k - 1}}
	} else {
		dg, err := gather(xo.node, pos)
		if err != nil {
			return nil, err
		}
		logDiag = e.Log(onNode(dg))
	}
	expo := e.Add(operand{val: base, shape: tensor.Shape{k - 1}}, e.Scale(2, eta))
	kern := e.sumOperand(e.Mul(expo, logDiag))
	return e.finiteResult(dist, e.Sub(kern, e.lkjLogNorm(eta, k)))
}

// lkjLogNorm returns log c_K(η).
func (e *expr) lkjLogNorm(eta operand, k int) operand {
	out := cst(0)
	for i := 1; i < k; i++ {
		km := float64(k - i)
		// (2η − 2 + K − k)(K − k) log 2
		pow := e.Scale(km*math.Ln2, e.Add(e.Scale(2, eta), cst(km-2)))
		// (K − k)·log B(a, a) = (K − k)(2 log Γ(a) − log Γ(2a)), a = η + (K−k−1)/2
		a := e.Add(eta, cst((km-1)/2))
		lb := e.Sub(e.Scale(2, e.Lgamma(a)), e.Lgamma(e.Scale(2, a)))
		out = e.Add(out, e.Add(pow, e.Scale(km, lb)))
	}
	return out
}
