package ops

import (
	"fmt"
	"math"

	"github.com/trjgo/trj/ad"
)

// The Dormand–Prince 5(4) tableau (Dormand and Prince 1980; Hairer,
// Nørsett and Wanner, Solving ODEs I, table II.5.2). The fifth-order
// solution is propagated; dpE are the differences between the fifth- and
// fourth-order weights, which estimate the local error. The last stage is
// evaluated at the new solution, so it is the next step's first (FSAL).
const (
	dpC2, dpC3, dpC4, dpC5 = 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9

	dpA21 = 1.0 / 5

	dpA31, dpA32 = 3.0 / 40, 9.0 / 40

	dpA41, dpA42, dpA43 = 44.0 / 45, -56.0 / 15, 32.0 / 9

	dpA51, dpA52, dpA53, dpA54 = 19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729

	dpA61, dpA62, dpA63, dpA64, dpA65 = 9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656

	dpA71, dpA73, dpA74, dpA75, dpA76 = 35.0 / 384, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84

	dpE1, dpE3, dpE4, dpE5, dpE6, dpE7 = 71.0 / 57600, -71.0 / 16695, 71.0 / 1920, -17253.0 / 339200, 22.0 / 525, -1.0 / 40
)

// Step-size control (Hairer, Nørsett and Wanner, section II.4): the new
// step is h·0.9·err^(−1/5), its factor kept within [dpFacMin, dpFacMax],
// and not above 1 right after a rejected step. The stiffness test of their
// DOPRI5 runs every dpStiffEvery accepted steps and then on every step
// while it keeps firing: dpStiffHits consecutive steps with h·|λ| beyond
// dpStiffLambda (near the edge of the method's stability region, −3.3 on
// the real axis) mean stiffness; dpStiffClear steps below it reset the
// count.
const (
	dpSafety      = 0.9
	dpFacMin      = 0.2
	dpFacMax      = 10
	dpStiffEvery  = 1000
	dpStiffLambda = 3.25
	dpStiffHits   = 15
	dpStiffClear  = 6
)

// odeKernel solves the system and its forward sensitivities for one
// (y0, θ), writing odeOp's packed output. It keeps scratch buffers and its
// own clone of the right-hand side's program, so it implements ad.Cloner.
type odeKernel struct {
	sys        *ODE
	n, p, q, m int // states, parameters, n+p, n + n·q (the augmented state)
	t0         float64
	times      []float64 // shared with the op, never written
	set        ODESettings

	rhs   *ad.Program
	z, g  []float64 // the program's input (w, y, θ, t) and gradient
	jac   []float64 // n × q: [∂f/∂y | ∂f/∂θ]
	y, yn []float64 // augmented state (y, S) before and after a step
	ys    []float64 // stage input
	k     [7][]float64

	// Solver state of one Eval.
	t, h       float64
	steps      int
	accepted   int
	stiffHits  int
	stiffClear int
	rejected   bool
}

func newODEKernel(sys *ODE, t0 float64, times []float64, set ODESettings) *odeKernel {
	n, p := sys.dim, sys.params
	q := n + p
	m := n + n*q
	k := &odeKernel{sys: sys, n: n, p: p, q: q, m: m, t0: t0, times: times, set: set,
		rhs: sys.prog.Clone()}
	nz := n * (2 + q)
	buf := make([]float64, 2*nz+n*q+10*m)
	take := func(l int) []float64 {
		s := buf[:l:l]
		buf = buf[l:]
		return s
	}
	k.z, k.g, k.jac = take(nz), take(nz), take(n*q)
	for i := range n {
		k.z[i] = 1 // the weights w of every copy's f_i
	}
	k.y, k.yn, k.ys = take(m), take(m), take(m)
	for i := range k.k {
		k.k[i] = take(m)
	}
	return k
}

// CloneKernel implements ad.Cloner: a clone has its own buffers and its
// own clone of the right-hand side's program.
func (k *odeKernel) CloneKernel() ad.Kernel { return newODEKernel(k.sys, k.t0, k.times, k.set) }

// WritesFullOutput implements ad.FullWriter: a successful Eval writes every
// element of out.
func (k *odeKernel) WritesFullOutput() bool { return true }

func (k *odeKernel) Eval(out []float64, in [][]float64) error {
	nin := 1
	if k.p > 0 {
		nin = 2
	}
	T := len(k.times)
	if len(in) != nin || len(in[0]) != k.n || nin == 2 && len(in[1]) != k.p || len(out) != T*k.n*(1+k.q) {
		return errBufferSize
	}
	n := k.n
	for i, v := range in[0] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: ODESolve: y0[%d] is %v", ad.ErrNonFinite, i, v)
		}
	}
	if nin == 2 {
		for i, v := range in[1] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: ODESolve: theta[%d] is %v", ad.ErrNonFinite, i, v)
			}
		}
		for i := range n {
			base := n + i*(k.q+1)
			copy(k.z[base+n:base+k.q], in[1])
		}
	}
	// y = y0, S = [I | 0].
	copy(k.y, in[0])
	clear(k.y[n:])
	for i := range n {
		k.y[n+i*k.q+i] = 1
	}
	k.t, k.steps, k.accepted, k.stiffHits, k.stiffClear, k.rejected = k.t0, 0, 0, 0, 0, false
	outY, outS := out[:T*n], out[T*n:]
	started := false
	for j, tout := range k.times {
		if tout > k.t {
			if !started {
				if err := k.start(k.times[T-1]); err != nil {
					return err
				}
				started = true
			}
			if err := k.advance(tout); err != nil {
				return err
			}
		}
		copy(outY[j*n:(j+1)*n], k.y[:n])
		copy(outS[j*n*k.q:(j+1)*n*k.q], k.y[n:])
	}
	return nil
}

// deriv writes the derivative of the augmented state Y at time t into dY:
// f(t, y, θ) and S' = (∂f/∂y)S + [0 | ∂f/∂θ], from one evaluation of the
// right-hand side's program (see ODE.prog).
func (k *odeKernel) deriv(t float64, Y, dY []float64) error {
	n, q := k.n, k.q
	z := k.z
	for i := range n {
		base := n + i*(q+1)
		copy(z[base:base+n], Y[:n])
		z[base+q] = t
	}
	if _, err := k.rhs.LogDensityGrad(z, k.g); err != nil {
		return fmt.Errorf("ODESolve: right-hand side at t = %g: %w", t, err)
	}
	copy(dY[:n], k.g[:n])
	for i := range n {
		base := n + i*(q+1)
		copy(k.jac[i*q:(i+1)*q], k.g[base:base+q])
	}
	S, dS := Y[n:], dY[n:]
	for i := range n {
		row, jrow := dS[i*q:(i+1)*q], k.jac[i*q:(i+1)*q]
		clear(row[:n])
		copy(row[n:], jrow[n:])
		for j, a := range jrow[:n] {
			if a == 0 {
				continue
			}
			for c, s := range S[j*q : (j+1)*q] {
				row[c] += a * s
			}
		}
	}
	return nil
}

// start evaluates the first stage at t0 and chooses the initial step
// (Hairer, Nørsett and Wanner, section II.4), given the last output time.
func (k *odeKernel) start(tend float64) error {
	k1, f1 := k.k[0], k.k[1]
	if err := k.deriv(k.t, k.y, k1); err != nil {
		return err
	}
	rtol, atol := k.set.RelTol, k.set.AbsTol
	var d0, d1 float64
	for i, y := range k.y {
		sk := atol + rtol*math.Abs(y)
		d0 += (y / sk) * (y / sk)
		d1 += (k1[i] / sk) * (k1[i] / sk)
	}
	d0, d1 = math.Sqrt(d0/float64(k.m)), math.Sqrt(d1/float64(k.m))
	span := tend - k.t
	h0 := 1e-6
	if d0 >= 1e-5 && d1 >= 1e-5 {
		h0 = 0.01 * d0 / d1
	}
	h0 = math.Min(h0, span)
	for i, y := range k.y {
		k.ys[i] = y + h0*k1[i]
	}
	if err := k.deriv(k.t+h0, k.ys, f1); err != nil {
		return err
	}
	var d2 float64
	for i, y := range k.y {
		sk := atol + rtol*math.Abs(y)
		d := (f1[i] - k1[i]) / sk
		d2 += d * d
	}
	d2 = math.Sqrt(d2/float64(k.m)) / h0
	h1 := math.Max(1e-6, h0*1e-3)
	if dm := math.Max(d1, d2); dm > 1e-15 {
		h1 = math.Pow(0.01/dm, 1.0/5)
	}
	k.h = math.Min(math.Min(100*h0, h1), span)
	return nil
}

// advance integrates from k.t to tout, with k.k[0] holding the derivative
// at k.t, and leaves k.t = tout exactly.
func (k *odeKernel) advance(tout float64) error {
	for k.t < tout {
		if k.steps >= k.set.MaxSteps {
			return fmt.Errorf("%w: %d steps reached at t = %g (of %g)", ErrODEMaxSteps, k.steps, k.t, tout)
		}
		k.steps++
		// A step that would end just short of tout is stretched to it, so
		// that no sliver of a step remains (Hairer's DOPRI5 does the same);
		// a step landing on tout may be as short as the gap between the
		// output times.
		h, last := k.h, false
		if k.t+1.01*h >= tout {
			h, last = tout-k.t, true
		}
		if !last && 0.1*h <= math.Abs(k.t)*0x1p-52 || !(h > 0) {
			return fmt.Errorf("%w: step %g at t = %g", ErrODEStepSize, h, k.t)
		}
		err, stiff, e := k.trial(h)
		if e != nil {
			return e
		}
		if !(err <= 1) {
			if math.IsNaN(err) {
				return fmt.Errorf("%w: ODESolve: error estimate is NaN at t = %g", ad.ErrNonFinite, k.t)
			}
			k.h = h * math.Max(dpFacMin, dpSafety*math.Pow(err, -0.2))
			k.rejected = true
			continue
		}
		fac := float64(dpFacMax)
		if k.rejected {
			fac = 1
		}
		if err > 0 {
			fac = math.Min(fac, math.Max(dpFacMin, dpSafety*math.Pow(err, -0.2)))
		}
		if last {
			k.t = tout
			k.h = math.Max(k.h, h*fac) // h was cut to land on tout
		} else {
			k.t += h
			k.h = h * fac
		}
		k.rejected = false
		copy(k.y, k.yn)
		k.k[0], k.k[6] = k.k[6], k.k[0] // FSAL
		k.accepted++
		if !k.set.AllowStiff && (k.accepted%dpStiffEvery == 0 || k.stiffHits > 0) {
			if stiff > dpStiffLambda {
				k.stiffClear = 0
				if k.stiffHits++; k.stiffHits == dpStiffHits {
					return fmt.Errorf("%w: at t = %g after %d steps (h·|λ| ≈ %.3g)", ErrODEStiff, k.t, k.steps, stiff)
				}
			} else if k.stiffClear++; k.stiffClear == dpStiffClear {
				k.stiffHits = 0
			}
		}
	}
	return nil
}

// trial takes one step of size h from (k.t, k.y) into k.yn and k.k[6],
// returning the scaled error norm and the estimate of h·|λ| for the
// stiffness test.
func (k *odeKernel) trial(h float64) (errNorm, hLambda float64, err error) {
	t, y, ys := k.t, k.y, k.ys
	k1, k2, k3, k4, k5, k6, k7 := k.k[0], k.k[1], k.k[2], k.k[3], k.k[4], k.k[5], k.k[6]
	for i := range ys {
		ys[i] = y[i] + h*dpA21*k1[i]
	}
	if err := k.deriv(t+dpC2*h, ys, k2); err != nil {
		return 0, 0, err
	}
	for i := range ys {
		ys[i] = y[i] + h*(dpA31*k1[i]+dpA32*k2[i])
	}
	if err := k.deriv(t+dpC3*h, ys, k3); err != nil {
		return 0, 0, err
	}
	for i := range ys {
		ys[i] = y[i] + h*(dpA41*k1[i]+dpA42*k2[i]+dpA43*k3[i])
	}
	if err := k.deriv(t+dpC4*h, ys, k4); err != nil {
		return 0, 0, err
	}
	for i := range ys {
		ys[i] = y[i] + h*(dpA51*k1[i]+dpA52*k2[i]+dpA53*k3[i]+dpA54*k4[i])
	}
	if err := k.deriv(t+dpC5*h, ys, k5); err != nil {
		return 0, 0, err
	}
	for i := range ys {
		ys[i] = y[i] + h*(dpA61*k1[i]+dpA62*k2[i]+dpA63*k3[i]+dpA64*k4[i]+dpA65*k5[i])
	}
	if err := k.deriv(t+h, ys, k6); err != nil {
		return 0, 0, err
	}
	yn := k.yn
	for i := range yn {
		yn[i] = y[i] + h*(dpA71*k1[i]+dpA73*k3[i]+dpA74*k4[i]+dpA75*k5[i]+dpA76*k6[i])
	}
	if err := k.deriv(t+h, yn, k7); err != nil {
		return 0, 0, err
	}
	var sum, num, den float64
	rtol, atol := k.set.RelTol, k.set.AbsTol
	for i := range yn {
		e := h * (dpE1*k1[i] + dpE3*k3[i] + dpE4*k4[i] + dpE5*k5[i] + dpE6*k6[i] + dpE7*k7[i])
		sk := atol + rtol*math.Max(math.Abs(y[i]), math.Abs(yn[i]))
		sum += (e / sk) * (e / sk)
		dk, dy := k7[i]-k6[i], yn[i]-ys[i]
		num += dk * dk
		den += dy * dy
	}
	if den > 0 {
		hLambda = h * math.Sqrt(num/den)
	}
	return math.Sqrt(sum / float64(k.m)), hLambda, nil
}
