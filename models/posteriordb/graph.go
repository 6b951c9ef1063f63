package posteriordb

import (
	"math"

	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl"
)

// graph writes scalar and vector expressions for a model's builder. Errors
// are kept by the builder (ppl.Builder.Check), so formulas read as formulas.
type graph struct{ b *ppl.Builder }

func (g graph) add(x, y *gorgonia.Node) *gorgonia.Node { return g.b.Check(gorgonia.Add(x, y)) }
func (g graph) sub(x, y *gorgonia.Node) *gorgonia.Node { return g.b.Check(gorgonia.Sub(x, y)) }

// mul multiplies elementwise, or scales when one side is a scalar.
func (g graph) mul(x, y *gorgonia.Node) *gorgonia.Node { return g.b.Check(gorgonia.HadamardProd(x, y)) }
func (g graph) div(x, y *gorgonia.Node) *gorgonia.Node { return g.b.Check(gorgonia.HadamardDiv(x, y)) }

// matVec is the matrix–vector (or matrix–matrix) product.
func (g graph) matVec(m, v *gorgonia.Node) *gorgonia.Node { return g.b.Check(gorgonia.Mul(m, v)) }
func (g graph) square(x *gorgonia.Node) *gorgonia.Node    { return g.b.Check(gorgonia.Square(x)) }
func (g graph) log(x *gorgonia.Node) *gorgonia.Node       { return g.b.Check(gorgonia.Log(x)) }
func (g graph) exp(x *gorgonia.Node) *gorgonia.Node       { return g.b.Check(gorgonia.Exp(x)) }
func (g graph) neg(x *gorgonia.Node) *gorgonia.Node       { return g.b.Check(gorgonia.Neg(x)) }
func (g graph) sum(x *gorgonia.Node) *gorgonia.Node       { return g.b.Check(gorgonia.Sum(x)) }

// log1m is log(1 − x).
func (g graph) log1m(x *gorgonia.Node) *gorgonia.Node { return g.b.Check(gorgonia.Log1p(g.neg(x))) }

// at is element i (from zero) of the vector v, as a scalar node.
func (g graph) at(v *gorgonia.Node, i int) *gorgonia.Node {
	return g.b.Check(ops.Slice(v, gorgonia.S(i)))
}

// c is a scalar constant.
func (g graph) c(v float64) *gorgonia.Node { return gorgonia.NewConstant(v) }

// logAddExp is log(eˣ + eʸ) = x + softplus(y − x), finite however far
// apart x and y are.
func (g graph) logAddExp(x, y *gorgonia.Node) *gorgonia.Node {
	return g.add(x, g.b.Check(ops.Softplus(g.sub(y, x))))
}

// normalSumSq is Σ normal_lpdf(eₜ | 0, σ) over n terms written through
// their sum of squares ss = Σ eₜ²: −ss/(2σ²) − n log σ − n log √(2π).
func (g graph) normalSumSq(ss, sigma *gorgonia.Node, n int) *gorgonia.Node {
	quad := g.div(ss, g.mul(g.c(2), g.square(sigma)))
	return g.sub(g.neg(quad), g.add(g.mul(g.c(float64(n)), g.log(sigma)), g.c(float64(n)*logSqrt2Pi)))
}

var logSqrt2Pi = 0.5 * math.Log(2*math.Pi)

// dataMatrix binds a row-major matrix as data.
func dataMatrix(b *ppl.Builder, name string, v []float64, rows, cols int) *gorgonia.Node {
	return b.Data(name, v, rows, cols)
}

func logOf(x float64) float64 { return math.Log(x) }
