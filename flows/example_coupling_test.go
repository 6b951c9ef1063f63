package flows_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/flows"
)

// coupling is a flow written by a user: RealNVP-style affine coupling layers
// with alternating masks m. Layer l maps x to
//
//	y = x ⊙ exp(s) + t,  s = (1−m) ⊙ tanh(S(h)),  t = (1−m) ⊙ T(h),  h = tanh(W·(m⊙x) + b),
//
// so the coordinates kept by m pass through and condition the others; its
// log-determinant is Σ s. The inverse is as cheap: x = (y − t) ⊙ exp(−s),
// with s and t computed from m⊙y = m⊙x.
type coupling struct {
	n, layers, hidden int
}

// couplingLayer holds one layer's parameter nodes.
type couplingLayer struct {
	w, b, ws, bs, wt, bt *gorgonia.Node
}

func (c coupling) Dim() int { return c.n }

func (c coupling) NumParams() int {
	h := c.hidden
	return c.layers * (h*c.n + h + 2*(c.n*h+c.n))
}

// Init draws the input weights at random and zeroes the output layers, so
// that the untrained flow is the identity.
func (c coupling) Init(p []float64, rng *rand.Rand) {
	clear(p)
	per := c.NumParams() / c.layers
	for l := 0; l < c.layers; l++ {
		w := p[l*per : l*per+c.hidden*c.n]
		for i := range w {
			w[i] = (2*rng.Float64() - 1) / math.Sqrt(float64(c.n))
		}
	}
}

// take reads every layer's parameters in order: Forward and Inverse must
// take them in the same order.
func (c coupling) take(p *flows.Params) []couplingLayer {
	ls := make([]couplingLayer, c.layers)
	for l := range ls {
		ls[l] = couplingLayer{
			w: p.Matrix(c.hidden, c.n), b: p.Vector(c.hidden),
			ws: p.Matrix(c.n, c.hidden), bs: p.Vector(c.n),
			wt: p.Matrix(c.n, c.hidden), bt: p.Vector(c.n),
		}
	}
	return ls
}

// masks returns layer l's mask m and 1−m for a batch of the given size.
func (c coupling) masks(l, rows int) (m, r *gorgonia.Node) {
	mv, rv := make([]float64, rows*c.n), make([]float64, rows*c.n)
	for k := 0; k < rows; k++ {
		for i := 0; i < c.n; i++ {
			if (i+l)%2 == 0 {
				mv[k*c.n+i] = 1
			} else {
				rv[k*c.n+i] = 1
			}
		}
	}
	return flows.Constant(mv, rows, c.n), flows.Constant(rv, rows, c.n)
}

// shiftScale returns s and t of a layer from its unchanged coordinates.
func (c coupling) shiftScale(x *gorgonia.Node, ly couplingLayer, l int) (s, t *gorgonia.Node, err error) {
	m, r := c.masks(l, x.Shape()[0])
	mx, err := gorgonia.HadamardProd(x, m)
	if err != nil {
		return nil, nil, err
	}
	h, err := ops.MaskedLinear(mx, ly.w, ly.b, nil, ops.Tanh)
	if err != nil {
		return nil, nil, err
	}
	if s, err = ops.MaskedLinear(h, ly.ws, ly.bs, nil, ops.Tanh); err != nil {
		return nil, nil, err
	}
	if t, err = ops.MaskedLinear(h, ly.wt, ly.bt, nil, ops.Identity); err != nil {
		return nil, nil, err
	}
	if s, err = gorgonia.HadamardProd(s, r); err != nil {
		return nil, nil, err
	}
	t, err = gorgonia.HadamardProd(t, r)
	return s, t, err
}

func (c coupling) Forward(x *gorgonia.Node, p *flows.Params) (z, logDet *gorgonia.Node, err error) {
	for l, ly := range c.take(p) {
		s, t, err := c.shiftScale(x, ly, l)
		if err != nil {
			return nil, nil, err
		}
		e, err := gorgonia.Exp(s)
		if err != nil {
			return nil, nil, err
		}
		xe, err := gorgonia.HadamardProd(x, e)
		if err != nil {
			return nil, nil, err
		}
		if x, err = gorgonia.Add(xe, t); err != nil {
			return nil, nil, err
		}
		if logDet, err = addRowSums(logDet, s); err != nil {
			return nil, nil, err
		}
	}
	return x, logDet, nil
}

func (c coupling) Inverse(z *gorgonia.Node, p *flows.Params) (x, logDet *gorgonia.Node, err error) {
	ls := c.take(p)
	for l := len(ls) - 1; l >= 0; l-- {
		s, t, err := c.shiftScale(z, ls[l], l)
		if err != nil {
			return nil, nil, err
		}
		ns, err := gorgonia.Neg(s)
		if err != nil {
			return nil, nil, err
		}
		e, err := gorgonia.Exp(ns)
		if err != nil {
			return nil, nil, err
		}
		d, err := gorgonia.Sub(z, t)
		if err != nil {
			return nil, nil, err
		}
		if z, err = gorgonia.HadamardProd(d, e); err != nil {
			return nil, nil, err
		}
		if logDet, err = addRowSums(logDet, ns); err != nil {
			return nil, nil, err
		}
	}
	return z, logDet, nil
}

// addRowSums adds the row sums of s (a layer's log-scales) to the
// log-determinant so far (nil before the first layer).
func addRowSums(logDet, s *gorgonia.Node) (*gorgonia.Node, error) {
	ld, err := gorgonia.Sum(s, 1)
	if err != nil || logDet == nil {
		return ld, err
	}
	return gorgonia.Add(logDet, ld)
}

// banana returns draws of a curved two-dimensional distribution.
func banana(rng *rand.Rand, rows int) [][]float64 {
	x := make([][]float64, rows)
	for r := range x {
		a := rng.NormFloat64()
		x[r] = []float64{a, 0.5*a*a + 0.3*rng.NormFloat64()}
	}
	return x
}

// ExampleFitGraph writes an affine coupling flow as a gorgonia graph
// (coupling, above), trains it with the package's trainer and uses it as a
// transport: Forward to the reference, Inverse back.
func ExampleFitGraph() {
	x := banana(rand.New(rand.NewPCG(1, 2)), 2000)
	opts := flows.DefaultTrainOptions()
	opts.Iterations = 300
	opts.Seed = 7
	f, _, err := flows.FitGraph(context.Background(), coupling{n: 2, layers: 4, hidden: 16}, x, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	theta, z, back := []float64{0.5, 0.4}, make([]float64, 2), make([]float64, 2)
	ld, _ := f.Forward(theta, z)
	ldInv, _ := f.Inverse(z, back)
	fmt.Printf("round trip error below 1e-12: %t\n", math.Abs(back[0]-theta[0])+math.Abs(back[1]-theta[1]) < 1e-12)
	fmt.Printf("log-determinants cancel: %t\n", math.Abs(ld+ldInv) < 1e-12)
	// Output:
	// round trip error below 1e-12: true
	// log-determinants cancel: true
}
