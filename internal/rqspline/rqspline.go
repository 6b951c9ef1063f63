package rqspline

import (
	"errors"
	"fmt"
	"math"

	"github.com/trjgo/trj/internal/scalar"
)

// Floors applied to the normalised bin widths, bin heights and knot
// derivatives. They keep every bin invertible with a bounded condition number;
// the values are the nflows defaults.
const (
	MinBinWidth   = 1e-3
	MinBinHeight  = 1e-3
	MinDerivative = 1e-3
)

// NumParams returns the number of unnormalised parameters of a K-bin spline:
// K widths, K heights and K+1 derivatives.
func NumParams(bins int) int { return 3*bins + 1 }

// Validate reports whether uw, uh and ud are a valid parameterisation: K ≥ 1
// widths and heights, K+1 derivatives, every value finite, and K small enough
// that the minimum bin width and height leave room for the softmax.
func Validate(uw, uh, ud []float64) error {
	k := len(uw)
	switch {
	case k == 0:
		return errors.New("rqspline: no bins")
	case len(uh) != k:
		return fmt.Errorf("rqspline: %d widths but %d heights", k, len(uh))
	case len(ud) != k+1:
		return fmt.Errorf("rqspline: %d bins need %d derivatives, got %d", k, k+1, len(ud))
	case float64(k)*MinBinWidth >= 1 || float64(k)*MinBinHeight >= 1:
		return fmt.Errorf("rqspline: %d bins are too many for the minimum bin size", k)
	}
	for _, s := range [][]float64{uw, uh, ud} {
		for _, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return errors.New("rqspline: non-finite parameter")
			}
		}
	}
	return nil
}

// softmaxStats returns the maximum of u and the sum of exp(u_i − max), from
// which the normalised bin sizes follow without allocating.
func softmaxStats(u []float64) (mx, sum float64) {
	mx = u[0]
	for _, v := range u[1:] {
		if v > mx {
			mx = v
		}
	}
	for _, v := range u {
		sum += math.Exp(v - mx)
	}
	return mx, sum
}

// locate finds the bin of v ∈ [0, 1] on the knot grid defined by u and
// returns its index, left edge and size. The last bin ends exactly at 1 (its
// size is 1 minus the others), as in nflows, so the grid covers [0, 1] without
// a rounding gap.
func locate(v float64, u []float64, minSize float64) (k int, left, size float64) {
	n := len(u)
	mx, sum := softmaxStats(u)
	scale := (1 - minSize*float64(n)) / sum
	cum := 0.0
	for i := 0; i < n-1; i++ {
		w := minSize + scale*math.Exp(u[i]-mx)
		if v < cum+w {
			return i, cum, w
		}
		cum += w
	}
	return n - 1, cum, 1 - cum
}

// edge returns the left edge and size of bin k on the knot grid defined by u,
// computed exactly as locate computes them.
func edge(k int, u []float64, minSize float64) (left, size float64) {
	n := len(u)
	mx, sum := softmaxStats(u)
	scale := (1 - minSize*float64(n)) / sum
	cum := 0.0
	for i := 0; i < k; i++ {
		cum += minSize + scale*math.Exp(u[i]-mx)
	}
	if k == n-1 {
		return cum, 1 - cum
	}
	return cum, minSize + scale*math.Exp(u[k]-mx)
}

// segment is one bin of the spline: input edge xk and width wk, output edge
// yk and height hk, and the knot derivatives at both ends.
type segment struct {
	k                  int
	xk, wk, yk, hk     float64
	dk, dk1            float64
	udk, udk1          float64 // unnormalised derivatives, for the softplus gradient
	theta, s, t, denom float64
}

// eval returns y and log f'(x) for θ = (x − xk)/wk already stored in g, and
// caches the shared subexpressions.
func (g *segment) eval() (y, ld float64) {
	th := g.theta
	g.s = g.hk / g.wk
	g.t = th * (1 - th)
	g.denom = g.s + (g.dk+g.dk1-2*g.s)*g.t
	num := g.hk * (g.s*th*th + g.dk*g.t)
	// Rounding must not carry y out of its bin or out of [0, 1]: the inverse
	// relies on both.
	y = min(max(g.yk+num/g.denom, g.yk), g.yk+g.hk)
	y = clamp01(y)
	p := g.dk1*th*th + 2*g.s*g.t + g.dk*(1-th)*(1-th)
	ld = 2*math.Log(g.s) + math.Log(p) - 2*math.Log(g.denom)
	return y, ld
}

func derivs(k int, ud []float64, g *segment) {
	g.udk, g.udk1 = ud[k], ud[k+1]
	g.dk = MinDerivative + scalar.Softplus(g.udk)
	g.dk1 = MinDerivative + scalar.Softplus(g.udk1)
}

func clamp01(v float64) float64 {
	if v < 0 {
		return 0
	}
	if v > 1 {
		return 1
	}
	return v
}

func inside(v float64) bool { return v >= 0 && v <= 1 }

// Forward evaluates the spline at x and returns y = f(x) and log f'(x).
// The parameters must satisfy Validate; lengths are not checked here because
// this is the hot path. Outside [0, 1] the spline is the identity.
func Forward(x float64, uw, uh, ud []float64) (y, logDeriv float64) {
	if !inside(x) {
		return x, 0
	}
	var g segment
	forwardSegment(x, uw, uh, ud, &g)
	return g.eval()
}

func forwardSegment(x float64, uw, uh, ud []float64, g *segment) {
	g.k, g.xk, g.wk = locate(x, uw, MinBinWidth)
	g.yk, g.hk = edge(g.k, uh, MinBinHeight)
	derivs(g.k, ud, g)
	g.theta = clamp01((x - g.xk) / g.wk)
}

// Inverse returns x = f⁻¹(y) and log f'(x), the log-derivative of the
// forward map at the returned point (so the inverse's own log-derivative is
// its negative). The inverse is exact: within the bin, x solves a quadratic,
// whose root is taken in whichever of its two algebraic forms avoids
// cancellation.
// Outside [0, 1] the spline is the identity.
func Inverse(y float64, uw, uh, ud []float64) (x, logDeriv float64) {
	if !inside(y) {
		return y, 0
	}
	var g segment
	x = inverseSegment(y, uw, uh, ud, &g)
	_, ld := g.eval()
	return x, ld
}

func inverseSegment(y float64, uw, uh, ud []float64, g *segment) float64 {
	g.k, g.yk, g.hk = locate(y, uh, MinBinHeight)
	g.xk, g.wk = edge(g.k, uw, MinBinWidth)
	derivs(g.k, ud, g)
	return g.invert(y)
}

// invert solves the segment's rational quadratic for θ given y, sets
// g.theta and returns x.
func (g *segment) invert(y float64) float64 {
	s := g.hk / g.wk
	dy := y - g.yk
	sumd := g.dk + g.dk1 - 2*s
	a := g.hk*(s-g.dk) + dy*sumd
	b := g.hk*g.dk - dy*sumd
	c := -s * dy
	disc := b*b - 4*a*c
	if disc < 0 {
		disc = 0
	}
	// Of the two algebraically equal forms of the root in [0, 1], use the one
	// that adds terms of equal sign: 2c/(−b − √disc) when b ≥ 0 (the nflows
	// form), (−b + √disc)/(2a) when b < 0, where the first would cancel.
	sq := math.Sqrt(disc)
	var th float64
	switch {
	case b >= 0 && b+sq != 0:
		th = 2 * c / (-b - sq)
	case b < 0 && a != 0:
		th = (-b + sq) / (2 * a)
	case b != 0:
		th = -c / b
	}
	g.theta = clamp01(th)
	return g.xk + g.theta*g.wk
}

// ForwardVJP is the reverse-mode derivative of Forward at x: given upstream
// gradients gy = ∂ℓ/∂y and gld = ∂ℓ/∂logDeriv, it adds ∂ℓ/∂uw, ∂ℓ/∂uh and
// ∂ℓ/∂ud into guw, guh and gud (same lengths as the parameters) and returns
// ∂ℓ/∂x.
func ForwardVJP(x float64, uw, uh, ud []float64, gy, gld float64, guw, guh, gud []float64) (gx float64) {
	if !inside(x) {
		return gy
	}
	var g segment
	forwardSegment(x, uw, uh, ud, &g)
	g.eval()
	return g.backward(gy, gld, uw, uh, guw, guh, gud)
}

// InverseVJP is the reverse-mode derivative of Inverse at y: given upstream
// gradients gx = ∂ℓ/∂x and gld = ∂ℓ/∂logDeriv for the outputs of Inverse, it
// adds the parameter gradients into guw, guh and gud and returns ∂ℓ/∂y. It
// uses the implicit-function theorem on f(x) = y, so it costs one inverse and
// one forward partial evaluation.
func InverseVJP(y float64, uw, uh, ud []float64, gx, gld float64, guw, guh, gud []float64) (gy float64) {
	if !inside(y) {
		return gx
	}
	var g segment
	inverseSegment(y, uw, uh, ud, &g)
	_, ld := g.eval()
	// Adjoint of x including the path through logDeriv = L(x, p).
	lx := g.dLdTheta() / g.wk
	adj := gx + gld*lx
	fx := math.Exp(ld)
	// ∂x/∂p = −(∂f/∂p)/f'(x): the forward VJP with gy = −adj/f' does both terms.
	g.backward(-adj/fx, gld, uw, uh, guw, guh, gud)
	return adj / fx
}

// dLdTheta is ∂ log f'/∂θ in the current segment.
func (g *segment) dLdTheta() float64 {
	th, s := g.theta, g.s
	p := g.dk1*th*th + 2*s*g.t + g.dk*(1-th)*(1-th)
	pth := 2*g.dk1*th + 2*s*(1-2*th) - 2*g.dk*(1-th)
	dth := (g.dk + g.dk1 - 2*s) * (1 - 2*th)
	return pth/p - 2*dth/g.denom
}

// backward pushes (gy, gld) through the segment formulas, the softmax of the
// widths and heights and the softplus of the derivatives, accumulating into
// guw, guh, gud. It returns ∂ℓ/∂x.
func (g *segment) backward(gy, gld float64, uw, uh, guw, guh, gud []float64) float64 {
	gx, gxk, gwk, gyk, ghk, gdk, gdk1 := g.partials(gy, gld)
	softmaxBackward(uw, MinBinWidth, g.k, gxk, gwk, guw)
	softmaxBackward(uh, MinBinHeight, g.k, gyk, ghk, guh)
	gud[g.k] += gdk * scalar.Sigmoid(g.udk)
	gud[g.k+1] += gdk1 * scalar.Sigmoid(g.udk1)
	return gx
}

// partials returns the gradient of gy·y + gld·log f'(x) with respect to x
// and to the segment's edge xk, width wk, output edge yk, height hk and knot
// derivatives dk, dk1. eval must have run.
func (g *segment) partials(gy, gld float64) (gx, gxk, gwk, gyk, ghk, gdk, gdk1 float64) {
	th, s, t, d := g.theta, g.s, g.t, g.denom
	dk, dk1 := g.dk, g.dk1
	sumd := dk + dk1 - 2*s
	q := s*th*th + dk*t // N / hk
	r := q / d          // (y − yk)/hk
	d2 := d * d
	rth := ((2*s*th+dk*(1-2*th))*d - q*sumd*(1-2*th)) / d2
	rs := (th*th*d - q*(1-2*t)) / d2
	rdk := (t*d - q*t) / d2
	rdk1 := -q * t / d2

	p := dk1*th*th + 2*s*t + dk*(1-th)*(1-th)
	lth := (2*dk1*th+2*s*(1-2*th)-2*dk*(1-th))/p - 2*sumd*(1-2*th)/d
	ls := 2/s + 2*t/p - 2*(1-2*t)/d
	ldk := (1-th)*(1-th)/p - 2*t/d
	ldk1 := th*th/p - 2*t/d

	gth := gy*g.hk*rth + gld*lth
	gs := gy*g.hk*rs + gld*ls
	gx = gth / g.wk
	gxk = -gx
	gwk = -(gth*th + gs*s) / g.wk
	ghk = gy*r + gs/g.wk
	gyk = gy
	gdk = gy*g.hk*rdk + gld*ldk
	gdk1 = gy*g.hk*rdk1 + gld*ldk1
	return
}

// softmaxBackward adds to gu the gradient of ℓ through the normalised sizes
// w_i = min + (1 − K·min)·softmax(u)_i, given ∂ℓ/∂(left edge of bin k) = gedge,
// which every w_i with i < k receives, and ∂ℓ/∂w_k = gsize. Using the softmax
// formula for the last bin's size, rather than 1 − Σ others, gives the same
// gradient because Σ w_i is constant.
func softmaxBackward(u []float64, minSize float64, k int, gedge, gsize float64, gu []float64) {
	n := len(u)
	mx, sum := softmaxStats(u)
	c := 1 - minSize*float64(n)
	// dot = Σ_i p_i ∂ℓ/∂p_i with p = softmax(u), ∂ℓ/∂p_i = c·∂ℓ/∂w_i.
	below := 0.0
	for i := 0; i < k; i++ {
		below += math.Exp(u[i] - mx)
	}
	below /= sum
	pk := math.Exp(u[k]-mx) / sum
	dot := c * (gedge*below + gsize*pk)
	for i := range u {
		pi := math.Exp(u[i]-mx) / sum
		gp := logitGrad(i, k, c, gedge, gsize)
		gu[i] += pi * (gp - dot)
	}
}

// logitGrad is the upstream gradient with respect to the softmax
// probability of bin i when bin k holds the point: the bins below k enter
// through k's left edge (gradient gedge), bin k through its size (gsize),
// both scaled by c.
func logitGrad(i, k int, c, gedge, gsize float64) float64 {
	switch {
	case i < k:
		return c * gedge
	case i == k:
		return c * gsize
	}
	return 0
}
