package rqspline

import "math"

// Knots is one spline's normalised knots, computed once by Set and reused by
// its methods. A caller that evaluates a spline and later differentiates it
// (a training step) saves recomputing the softmaxes and softplus, which
// dominate the cost of the free functions. Results agree with the free
// functions to rounding: bin edges are computed by the same expressions.
// A Knots is scratch space: not safe for concurrent use.
type Knots struct {
	k      int
	ew, eh []float64 // exp(u − max u) of widths and heights
	sums   []float64 // their sums, 2
	xs, ys []float64 // knot positions, k+1 each, xs[0] = ys[0] = 0, xs[k] = ys[k] = 1
	d      []float64 // knot derivatives, k+1
	sd     []float64 // ∂d/∂ud = sigmoid(ud), k+1
}

// NewKnots returns scratch for a spline with the given number of bins.
func NewKnots(bins int) *Knots {
	s := KnotsOn(make([]float64, KnotsLen(bins)), bins)
	return &s
}

// KnotsLen is the number of float64s that the knots of a spline with the
// given number of bins occupy in a caller's buffer (see KnotsOn).
func KnotsLen(bins int) int { return 6*bins + 6 }

// KnotsOn returns knots stored in buf[:KnotsLen(bins)]: Set writes there,
// and a later KnotsOn on the same buffer sees the same knots. It lets a
// batched op keep the knots of its forward pass for its gradient without
// allocating.
func KnotsOn(buf []float64, bins int) Knots {
	buf = buf[:KnotsLen(bins)]
	return Knots{
		k:    bins,
		ew:   buf[:bins],
		eh:   buf[bins : 2*bins],
		xs:   buf[2*bins : 3*bins+1],
		ys:   buf[3*bins+1 : 4*bins+2],
		d:    buf[4*bins+2 : 5*bins+3],
		sd:   buf[5*bins+3 : 6*bins+4],
		sums: buf[6*bins+4:],
	}
}

// Bins returns the number of bins.
func (s *Knots) Bins() int { return s.k }

// Set computes the knots from unnormalised parameters, which must satisfy
// Validate and have s.Bins() bins.
func (s *Knots) Set(uw, uh, ud []float64) {
	s.sums[0] = cumulate(uw, MinBinWidth, s.ew, s.xs)
	s.sums[1] = cumulate(uh, MinBinHeight, s.eh, s.ys)
	for i, u := range ud {
		// softplus and its derivative share one exponential.
		if u > 0 {
			e := math.Exp(-u)
			s.d[i] = MinDerivative + (u + math.Log1p(e)) // as softplus rounds
			s.sd[i] = 1 / (1 + e)
		} else {
			e := math.Exp(u)
			s.d[i] = MinDerivative + math.Log1p(e)
			s.sd[i] = e / (1 + e)
		}
	}
}

// cumulate fills e with exp(u − max) and edges with the knot positions,
// exactly as locate and edge compute them, and returns Σe.
func cumulate(u []float64, minSize float64, e, edges []float64) float64 {
	n := len(u)
	mx := u[0]
	for _, v := range u[1:] {
		mx = max(mx, v)
	}
	sum := 0.0
	for i, v := range u {
		e[i] = math.Exp(v - mx)
		sum += e[i]
	}
	scale := (1 - minSize*float64(n)) / sum
	cum := 0.0
	edges[0] = 0
	for i := 0; i < n-1; i++ {
		cum += minSize + scale*e[i]
		edges[i+1] = cum
	}
	edges[n] = 1
	return sum
}

// find returns the bin containing v: the last i with edges[i] ≤ v, at most
// k−1.
func find(v float64, edges []float64) int {
	lo, hi := 0, len(edges)-2
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if edges[mid] <= v {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// segment fills g with bin k. Bin sizes are computed as locate and edge
// compute them, not as differences of knot positions, which lose up to
// ulp(1)/size of relative precision in narrow bins: the cached and free
// paths then agree bit for bit.
func (s *Knots) segment(k int, g *segment) {
	g.k = k
	g.xk, g.wk = s.xs[k], binSize(k, s.ew, s.sums[0], MinBinWidth, s.xs)
	g.yk, g.hk = s.ys[k], binSize(k, s.eh, s.sums[1], MinBinHeight, s.ys)
	g.dk, g.dk1 = s.d[k], s.d[k+1]
}

// binSize is the size of bin k of a grid with exponentials e summing to
// sum and knot positions edges, by locate's expressions.
func binSize(k int, e []float64, sum, minSize float64, edges []float64) float64 {
	n := len(e)
	if k == n-1 {
		return 1 - edges[k]
	}
	scale := (1 - minSize*float64(n)) / sum
	return minSize + scale*e[k]
}

// Forward is the free Forward with these knots.
func (s *Knots) Forward(x float64) (y, logDeriv float64) {
	if !inside(x) {
		return x, 0
	}
	var g segment
	s.segment(find(x, s.xs), &g)
	g.theta = clamp01((x - g.xk) / g.wk)
	return g.eval()
}

// Inverse is the free Inverse with these knots.
func (s *Knots) Inverse(y float64) (x, logDeriv float64) {
	if !inside(y) {
		return y, 0
	}
	var g segment
	s.segment(find(y, s.ys), &g)
	x = g.invert(y)
	_, ld := g.eval()
	return x, ld
}

// ForwardVJP is the free ForwardVJP with these knots; guw, guh and gud
// receive (accumulate) the gradients with respect to the unnormalised
// parameters that Set was given.
func (s *Knots) ForwardVJP(x, gy, gld float64, guw, guh, gud []float64) (gx float64) {
	if !inside(x) {
		return gy
	}
	var g segment
	s.segment(find(x, s.xs), &g)
	g.theta = clamp01((x - g.xk) / g.wk)
	g.eval()
	gx, gxk, gwk, gyk, ghk, gdk, gdk1 := g.partials(gy, gld)
	s.accumulate(g.k, gxk, gwk, gyk, ghk, gdk, gdk1, guw, guh, gud)
	return gx
}

func (s *Knots) accumulate(k int, gxk, gwk, gyk, ghk, gdk, gdk1 float64, guw, guh, gud []float64) {
	softmaxBack(s.ew, s.sums[0], MinBinWidth, k, gxk, gwk, guw)
	softmaxBack(s.eh, s.sums[1], MinBinHeight, k, gyk, ghk, guh)
	gud[k] += gdk * s.sd[k]
	gud[k+1] += gdk1 * s.sd[k+1]
}

// softmaxBack is softmaxBackward with the exponentials precomputed.
func softmaxBack(e []float64, sum, minSize float64, k int, gedge, gsize float64, gu []float64) {
	c := 1 - minSize*float64(len(e))
	below := 0.0
	for i := 0; i < k; i++ {
		below += e[i]
	}
	inv := 1 / sum
	below *= inv
	dot := c * (gedge*below + gsize*e[k]*inv)
	for i := range e {
		gp := logitGrad(i, k, c, gedge, gsize)
		gu[i] += e[i] * inv * (gp - dot)
	}
}

// InverseVJP is the free InverseVJP with these knots.
func (s *Knots) InverseVJP(y, gx, gld float64, guw, guh, gud []float64) (gy float64) {
	if !inside(y) {
		return gx
	}
	var g segment
	s.segment(find(y, s.ys), &g)
	g.invert(y)
	_, ld := g.eval()
	adj := gx + gld*g.dLdTheta()/g.wk
	fx := math.Exp(ld)
	_, gxk, gwk, gyk, ghk, gdk, gdk1 := g.partials(-adj/fx, gld)
	s.accumulate(g.k, gxk, gwk, gyk, ghk, gdk, gdk1, guw, guh, gud)
	return adj / fx
}
