package bench

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad/ops"
)

// Prior of the factor-analysis model (paper §4.3, after Lopes & West 2004):
// Λ_ii ~ InvGamma(factorIGShape, factorIGScale).
const (
	factorIGShape = 1.1
	factorIGScale = 0.05
)

// factorGraph is the unnormalised log-posterior of the factor-analysis model
// y_i ~ N(0, BBᵀ+Λ) with k factors, as a gorgonia graph on the unconstrained
// scale.
//
// B is p×k lower triangular with a positive diagonal and Λ is diagonal and
// positive. The parameters are three vector nodes, in the order of wrt:
// the entries of B strictly below the diagonal (row-major, p·k − k(k+1)/2 of
// them), the logs of B's k diagonal entries and the logs of Λ's p diagonal
// entries; log-Jacobians are included. Priors: β_ij ~ N(0, 1) below the
// diagonal, β_jj ~ N⁺(0, 1), Λ_ii ~ InvGamma(1.1, 0.05). All normalising
// constants are included, so logp is the log of the exact unnormalised
// posterior density (prior × likelihood × Jacobian).
//
// The likelihood uses the sufficient statistic S = YᵀY:
// −n/2·(p log 2π + log det Σ) − ½ tr(Σ⁻¹S), with tr(Σ⁻¹S) = ‖L⁻¹R‖²_F for
// Σ = LLᵀ and S = RRᵀ, so the data enter only through the constant p×p R.
type factorGraph struct {
	g    *gorgonia.ExprGraph
	logp *gorgonia.Node
	wrt  []*gorgonia.Node
	p, k int
}

// factorLowerCount is the number of entries of a p×k lower-triangular matrix
// strictly below the diagonal.
func factorLowerCount(p, k int) int { return p*k - k*(k+1)/2 }

// factorDim is the dimension of the k-factor model with p observed variables.
func factorDim(p, k int) int { return factorLowerCount(p, k) + k + p }

// newFactorGraph builds the k-factor model's log-posterior for the data y
// (n rows × p columns).
func newFactorGraph(y mat.Matrix, k int) (fg *factorGraph, err error) {
	if y == nil {
		return nil, errors.New("factor model: nil data")
	}
	n, p := y.Dims()
	if n < 1 || p < 2 || k < 1 || k > p {
		return nil, fmt.Errorf("factor model: %d factors for %d×%d data, want p ≥ 2 and 1 ≤ k ≤ p", k, n, p)
	}
	var s mat.SymDense
	s.SymOuterK(1, y.T())
	var chs mat.Cholesky
	if !chs.Factorize(&s) {
		return nil, errors.New("factor model: YᵀY is not positive definite (collinear columns or too few rows)")
	}
	var r mat.TriDense
	chs.LTo(&r)

	nLow := factorLowerCount(p, k)
	// Selection matrices scatter (lower entries, diagonal) into B (p×k) and
	// the diagonal of Λ into Λ (p×p), flattened row-major. gorgonia cannot
	// concatenate single elements (slicing one out of a vector yields a
	// scalar), and at these sizes the products cost less than the dozens of
	// slice nodes a scatter would need.
	selB := mat.NewDense(p*k, nLow+k, nil)
	selLam := mat.NewDense(p*p, p, nil)
	idx := 0
	for i := 0; i < p; i++ {
		for j := 0; j < min(i, k); j++ {
			selB.Set(i*k+j, idx, 1)
			idx++
		}
		if i < k {
			selB.Set(i*k+i, nLow+i, 1)
		}
		selLam.Set(i*p+i, i, 1)
	}

	var b graphBuilder
	// gorgonia's constructors panic when handed the nil node that follows
	// a failed step; report the first error instead.
	defer func() {
		if r := recover(); r != nil {
			fg, err = nil, fmt.Errorf("factor model: building graph: %v (first error: %v)", r, b.err)
		}
	}()
	g := gorgonia.NewGraph()
	data := func(name string, m *mat.Dense) *gorgonia.Node {
		rr, cc := m.Dims()
		v := tensor.New(tensor.WithShape(rr, cc), tensor.WithBacking(append([]float64(nil), m.RawMatrix().Data...)))
		return gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(rr, cc), gorgonia.WithName(name), gorgonia.WithValue(v))
	}
	scalar := func(v float64) *gorgonia.Node { return gorgonia.NewConstant(v) }

	bLow := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(nLow), gorgonia.WithName("beta_lower"))
	bDiagLog := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(k), gorgonia.WithName("log_beta_diag"))
	lamLog := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(p), gorgonia.WithName("log_lambda"))

	bDiag := b.do(gorgonia.Exp(bDiagLog))
	lam := b.do(gorgonia.Exp(lamLog))
	bFlat := b.do(gorgonia.Mul(data("sel_b", selB), b.do(gorgonia.Concat(0, bLow, bDiag))))
	bm := b.do(gorgonia.Reshape(bFlat, tensor.Shape{p, k}))
	bbt := b.do(gorgonia.Mul(bm, b.do(gorgonia.Transpose(bm))))
	lamM := b.do(gorgonia.Reshape(b.do(gorgonia.Mul(data("sel_lambda", selLam), lam)), tensor.Shape{p, p}))
	sigma := b.do(gorgonia.Add(bbt, lamM))

	l := b.do(ops.Cholesky(sigma))
	rNode := data("chol_yty", mat.DenseCopyOf(&r))
	z := b.do(ops.SolveTriangular(l, rNode, true))
	quad := b.do(gorgonia.Sum(b.do(gorgonia.Square(z))))
	logDet := b.do(ops.LogDetSPD(sigma))
	// −n/2·log det Σ − ½ tr(Σ⁻¹S)
	lik := b.do(gorgonia.Add(
		b.do(gorgonia.Mul(scalar(-0.5*float64(n)), logDet)),
		b.do(gorgonia.Mul(scalar(-0.5), quad))))

	// Priors with Jacobians, up to the constant below:
	// −½Σβ_ij² − ½Σβ_jj² + Σ log β_jj − αΣ log Λ_ii − βΣ 1/Λ_ii.
	prior := b.do(gorgonia.Add(
		b.do(gorgonia.Mul(scalar(-0.5), b.do(gorgonia.Sum(b.do(gorgonia.Square(bDiag)))))),
		b.do(gorgonia.Sum(bDiagLog))))
	prior = b.do(gorgonia.Add(prior,
		b.do(gorgonia.Mul(scalar(-0.5), b.do(gorgonia.Sum(b.do(gorgonia.Square(bLow))))))))
	invLam := b.do(gorgonia.Exp(b.do(gorgonia.Neg(lamLog))))
	prior = b.do(gorgonia.Add(prior, b.do(gorgonia.Mul(scalar(-factorIGShape), b.do(gorgonia.Sum(lamLog))))))
	prior = b.do(gorgonia.Add(prior, b.do(gorgonia.Mul(scalar(-factorIGScale), b.do(gorgonia.Sum(invLam))))))

	logp := b.do(gorgonia.Add(b.do(gorgonia.Add(lik, prior)), scalar(factorConst(n, p, k))))
	if b.err != nil {
		return nil, fmt.Errorf("factor model: building graph: %w", b.err)
	}
	wrt := []*gorgonia.Node{bLow, bDiagLog, lamLog}
	return &factorGraph{g: g, logp: logp, wrt: wrt, p: p, k: k}, nil
}

// factorConst collects the normalising constants of the likelihood and the
// priors: −np/2·log 2π, N(0,1) and N⁺(0,1) normalisers and the inverse-gamma
// normaliser α log β − log Γ(α) per Λ_ii.
func factorConst(n, p, k int) float64 {
	log2pi := math.Log(2 * math.Pi)
	lg, _ := math.Lgamma(factorIGShape)
	return -0.5*float64(n*p)*log2pi +
		float64(factorLowerCount(p, k))*(-0.5*log2pi) +
		float64(k)*(math.Ln2-0.5*log2pi) +
		float64(p)*(factorIGShape*math.Log(factorIGScale)-lg)
}

// graphBuilder threads the first error through a chain of graph
// constructors, so that a model reads as its formula.
type graphBuilder struct{ err error }

func (b *graphBuilder) do(n *gorgonia.Node, err error) *gorgonia.Node {
	if b.err == nil && err != nil {
		b.err = err
	}
	if b.err != nil {
		return nil
	}
	return n
}
