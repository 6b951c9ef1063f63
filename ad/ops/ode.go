package ops

import (
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
)

// Errors of ODESolve, returned (wrapped, with the time and step count) by
// Do and Kernel.Eval. Samplers treat them, like every error of a
// log-density, as a rejected proposal.
var (
	// ErrODEStiff is returned when the explicit solver's steps have been
	// limited by stability rather than accuracy for many steps in a row:
	// the problem is stiff there, and an explicit method would crawl
	// (Hairer and Wanner's test for DOPRI5). ODESettings.AllowStiff turns
	// the test off.
	ErrODEStiff = errors.New("ops: ODESolve: the problem looks stiff (steps limited by stability, not accuracy); an explicit solver would take very many steps")
	// ErrODEMaxSteps is returned when a solve reaches
	// ODESettings.MaxSteps steps (accepted and rejected) before the last
	// output time, which usually means the problem is stiff or the
	// tolerances are too tight for float64.
	ErrODEMaxSteps = errors.New("ops: ODESolve: maximum number of steps reached; the problem may be stiff")
	// ErrODEStepSize is returned when the step size falls below what
	// float64 can resolve at the current time: the solution is probably
	// singular there (it blows up in finite time).
	ErrODEStepSize = errors.New("ops: ODESolve: step size too small; the solution may blow up there")
)

// ODE is a system of ordinary differential equations dy/dt = f(t, y, θ),
// ready to be solved inside graphs by ODESolve. Its right-hand side is a
// gorgonia graph compiled by ad, so the Jacobians that the sensitivities
// need come from ad and no derivative is written by hand. An ODE is
// immutable and may be shared by any number of graphs, models and
// goroutines.
type ODE struct {
	dim, params int
	// prog evaluates L(z) = Σ_i w_i f_i(y⁽ⁱ⁾, θ⁽ⁱ⁾, t⁽ⁱ⁾) at z = (w, y⁽¹⁾,
	// θ⁽¹⁾, t⁽¹⁾, …, y⁽ⁿ⁾, θ⁽ⁿ⁾, t⁽ⁿ⁾), n copies of the inputs: at w = 1
	// and equal copies its gradient holds f (∂L/∂w) and, in copy i's
	// place, row i of [∂f/∂y | ∂f/∂θ | ∂f/∂t]. It is only cloned, never
	// evaluated, so concurrent Lower calls may share it.
	prog *ad.Program
}

// ODERHS builds the right-hand side f(t, y, θ) of an ODE: t is a scalar
// node, y holds dim scalar nodes (the states) and theta params scalar nodes
// (the parameters), all in one graph. It returns dim scalar nodes, the
// derivatives dy_i/dt, built from them with gorgonia (and this package's)
// ops. Writing the system one component at a time keeps small models, the
// usual case, as short as their equations. NewODE calls it dim times, on
// separate inputs, so that one evaluation yields the whole Jacobian; it
// must build the same function each time.
type ODERHS func(t *gorgonia.Node, y, theta []*gorgonia.Node) ([]*gorgonia.Node, error)

// NewODE compiles the right-hand side rhs of a system of dim states and
// params parameters (params may be 0). The graph rhs builds is compiled
// once, here; each solve evaluates it on its own clone.
func NewODE(dim, params int, rhs ODERHS) (*ODE, error) {
	if dim < 1 {
		return nil, fmt.Errorf("ops: NewODE: %d states, want at least 1", dim)
	}
	if params < 0 {
		return nil, fmt.Errorf("ops: NewODE: %d parameters, want 0 or more", params)
	}
	if rhs == nil {
		return nil, errors.New("ops: NewODE: nil right-hand side")
	}
	g := gorgonia.NewGraph()
	blk := dim + params + 1
	z := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(dim*(1+blk)), gorgonia.WithName("ode_z"))
	at := func(i int) (*gorgonia.Node, error) { return Slice(z, gorgonia.S(i)) }
	w, f := make([]*gorgonia.Node, dim), make([]*gorgonia.Node, dim)
	for i := range dim {
		var err error
		if w[i], err = at(i); err != nil {
			return nil, fmt.Errorf("ops: NewODE: %w", err)
		}
		// Copy i of the right-hand side, on inputs of its own, gives f_i;
		// the gradient with respect to those inputs is row i of the
		// Jacobian, so one evaluation gives all of them.
		base := dim + i*blk
		in := make([]*gorgonia.Node, blk)
		for c := range in {
			if in[c], err = at(base + c); err != nil {
				return nil, fmt.Errorf("ops: NewODE: %w", err)
			}
		}
		fi, err := rhs(in[blk-1], in[:dim:dim], in[dim:dim+params:dim+params])
		if err != nil {
			return nil, fmt.Errorf("ops: NewODE: right-hand side: %w", err)
		}
		if len(fi) != dim {
			return nil, fmt.Errorf("ops: NewODE: right-hand side returned %d derivatives, want %d (one per state)", len(fi), dim)
		}
		f[i] = fi[i]
	}
	l, err := weightedRHS(g, w, f)
	if err != nil {
		return nil, err
	}
	prog, err := ad.Compile(g, l, []*gorgonia.Node{z})
	if err != nil {
		return nil, fmt.Errorf("ops: NewODE: compiling the right-hand side: %w", err)
	}
	return &ODE{dim: dim, params: params, prog: prog}, nil
}

// weightedRHS returns Σ_i w_i f_i after checking that f has one scalar per
// state, in graph g.
func weightedRHS(g *gorgonia.ExprGraph, w, f []*gorgonia.Node) (*gorgonia.Node, error) {
	var sum *gorgonia.Node
	for i, fi := range f {
		if fi == nil {
			return nil, fmt.Errorf("ops: NewODE: derivative %d is nil", i)
		}
		if fi.Graph() != g {
			return nil, fmt.Errorf("ops: NewODE: derivative %d is not built from the nodes given to the right-hand side", i)
		}
		if fi.Dtype() != tensor.Float64 || fi.Shape().TotalSize() != 1 {
			return nil, fmt.Errorf("ops: NewODE: derivative %d has dtype %v and shape %v, want a float64 scalar", i, fi.Dtype(), fi.Shape())
		}
		var err error
		if !fi.IsScalar() {
			if fi, err = gorgonia.Reshape(fi, tensor.ScalarShape()); err != nil {
				return nil, fmt.Errorf("ops: NewODE: derivative %d: %w", i, err)
			}
		}
		term, err := gorgonia.Mul(w[i], fi)
		if err != nil {
			return nil, fmt.Errorf("ops: NewODE: derivative %d: %w", i, err)
		}
		if sum == nil {
			sum = term
		} else if sum, err = gorgonia.Add(sum, term); err != nil {
			return nil, fmt.Errorf("ops: NewODE: %w", err)
		}
	}
	return sum, nil
}

// Dim is the number of states.
func (s *ODE) Dim() int { return s.dim }

// Params is the number of parameters.
func (s *ODE) Params() int { return s.params }

// ODESettings tunes ODESolve. The zero value, or nil, means the defaults,
// which are those of Stan's ode_rk45.
type ODESettings struct {
	// RelTol and AbsTol are the relative and absolute tolerances of the
	// local error of each step, on every state and every sensitivity:
	// a step is accepted when the root mean square of
	// err_i / (AbsTol + RelTol·|y_i|) is at most 1. Both default to 1e-6.
	RelTol, AbsTol float64
	// MaxSteps bounds the steps (accepted and rejected) of one solve over
	// all output times; reaching it returns ErrODEMaxSteps. Default 1e6.
	MaxSteps int
	// AllowStiff turns off the stiffness test, so that a stiff problem
	// runs until MaxSteps instead of returning ErrODEStiff early.
	AllowStiff bool
}

// Defaults of ODESettings.
const (
	DefaultODERelTol   = 1e-6
	DefaultODEAbsTol   = 1e-6
	DefaultODEMaxSteps = 1_000_000
)

// resolve returns s with defaults filled in, or an error naming a bad field.
func (s *ODESettings) resolve() (ODESettings, error) {
	var r ODESettings
	if s != nil {
		r = *s
	}
	for _, f := range []struct {
		name string
		v    *float64
		def  float64
	}{{"RelTol", &r.RelTol, DefaultODERelTol}, {"AbsTol", &r.AbsTol, DefaultODEAbsTol}} {
		switch {
		case *f.v == 0:
			*f.v = f.def
		case !(*f.v > 0) || math.IsInf(*f.v, 0):
			return r, fmt.Errorf("ops: ODESolve: %s is %v, want a positive finite tolerance (0 for the default %g)", f.name, *f.v, f.def)
		}
	}
	if r.RelTol < 1e-15 {
		return r, fmt.Errorf("ops: ODESolve: RelTol is %v, below what float64 can deliver (want at least 1e-15)", r.RelTol)
	}
	switch {
	case r.MaxSteps == 0:
		r.MaxSteps = DefaultODEMaxSteps
	case r.MaxSteps < 0:
		return r, fmt.Errorf("ops: ODESolve: MaxSteps is %d, want a positive count (0 for the default %d)", r.MaxSteps, DefaultODEMaxSteps)
	}
	return r, nil
}

// ODESolve returns the solution of sys at the output times: a
// len(times) × Dim matrix whose row j is y(times[j]), where y(t0) = y0 (a
// vector of Dim entries, or a scalar when Dim is 1) and theta holds the
// Params parameters (likewise; nil when there are none). Both y0 and theta are differentiable; times and t0 are
// data, with times non-decreasing and none before t0.
//
// The solver is Dormand and Prince's explicit Runge–Kutta pair of orders
// 5 and 4, with adaptive steps that land on each output time. The
// gradient comes from forward sensitivities: the solver integrates
// S = ∂y/∂(y0, θ), which obeys S' = (∂f/∂y)S + [0 | ∂f/∂θ] with S(t0) =
// [I | 0], together with y, in the same steps and under the same error
// control, the Jacobians evaluated by ad from sys's graph. The value and
// its gradient therefore cost one solve of Dim·(1 + Dim + Params) equations
// (a value-only evaluation pays for the sensitivities too), and the
// gradient is that of the discrete solution up to the tolerances.
//
// A solve fails, with an error naming the time, rather than hang or return
// NaN: ErrODEStiff when the problem turns stiff, ErrODEMaxSteps after
// MaxSteps steps, ErrODEStepSize when the solution blows up, and an error
// wrapping ad.ErrNonFinite when f or y0 or θ is not finite.
func ODESolve(sys *ODE, y0, theta *gorgonia.Node, t0 float64, times []float64, s *ODESettings) (*gorgonia.Node, error) {
	if sys == nil {
		return nil, errors.New("ops: ODESolve: nil ODE")
	}
	set, err := s.resolve()
	if err != nil {
		return nil, err
	}
	if err := checkODETimes(t0, times); err != nil {
		return nil, err
	}
	args := []*gorgonia.Node{y0}
	if sys.params > 0 {
		args = append(args, theta)
	} else if theta != nil {
		return nil, errors.New("ops: ODESolve: theta given to an ODE without parameters; pass nil")
	}
	if err := checkNodes("ODESolve", args...); err != nil {
		return nil, err
	}
	for i, a := range args {
		// A scalar stands for a vector of one, as ppl declares a single
		// parameter.
		if a.IsScalar() {
			if args[i], err = gorgonia.Reshape(a, tensor.Shape{1}); err != nil {
				return nil, fmt.Errorf("ops: ODESolve: %w", err)
			}
		}
	}
	op := odeOp{sys: sys, t0: t0, times: append([]float64(nil), times...), set: set}
	shapes := make([]gorgonia.DimSizer, len(args))
	for i, a := range args {
		shapes[i] = a.Shape()
	}
	packedShape, err := op.InferShape(shapes...)
	if err != nil {
		return nil, err
	}
	packed, err := gorgonia.ApplyOp(op, args...)
	if err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(sliceOp{off: 0, in: packedShape, out: tensor.Shape{len(times), sys.dim}}, packed)
}

// checkODETimes rejects output times that are empty, not finite, before t0
// or decreasing.
func checkODETimes(t0 float64, times []float64) error {
	if math.IsNaN(t0) || math.IsInf(t0, 0) {
		return fmt.Errorf("ops: ODESolve: t0 is %v, want a finite time", t0)
	}
	if len(times) == 0 {
		return errors.New("ops: ODESolve: no output times")
	}
	prev := t0
	for j, tj := range times {
		switch {
		case math.IsNaN(tj) || math.IsInf(tj, 0):
			return fmt.Errorf("ops: ODESolve: times[%d] is %v, want a finite time", j, tj)
		case j == 0 && tj < t0:
			return fmt.Errorf("ops: ODESolve: times[0] = %v is before t0 = %v", tj, t0)
		case tj < prev:
			return fmt.Errorf("ops: ODESolve: times[%d] = %v is before times[%d] = %v; want non-decreasing times", j, tj, j-1, prev)
		}
		prev = tj
	}
	return nil
}

// odeOp maps (y0[, θ]) to the packed vector of the solution at the output
// times, T×n, followed by its sensitivities, T×n×(n+p) (row i of time j
// holds ∂y_i(t_j)/∂(y0, θ)). ODESolve exposes only the solution, through a
// sliceOp, so the output gradient reaching SymDiff is zero on the
// sensitivities.
type odeOp struct {
	matOp
	sys   *ODE
	t0    float64
	times []float64
	set   ODESettings
}

// packedLen is the length of the packed output.
func (op odeOp) packedLen() int {
	n, p := op.sys.dim, op.sys.params
	return len(op.times) * n * (1 + n + p)
}

func (op odeOp) Arity() int {
	if op.sys.params > 0 {
		return 2
	}
	return 1
}
func (op odeOp) Type() hm.Type {
	if op.sys.params > 0 {
		return hm.NewFnType(tensorType(1), tensorType(1), tensorType(1))
	}
	return hm.NewFnType(tensorType(1), tensorType(1))
}
func (op odeOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOfN(op, in, op.Arity())
	if err != nil {
		return nil, err
	}
	if err := op.checkShapes(s); err != nil {
		return nil, err
	}
	return tensor.Shape{op.packedLen()}, nil
}

// checkShapes checks that y0 has Dim entries and θ Params.
func (op odeOp) checkShapes(s []tensor.Shape) error {
	if len(s) != op.Arity() {
		return fmt.Errorf("ops: ODESolve: got %d inputs, want %d", len(s), op.Arity())
	}
	if len(s[0]) > 1 || s[0].TotalSize() != op.sys.dim {
		return fmt.Errorf("ops: ODESolve: y0 has shape %v, want a vector of %d states", s[0], op.sys.dim)
	}
	if op.sys.params > 0 && (len(s[1]) > 1 || s[1].TotalSize() != op.sys.params) {
		return fmt.Errorf("ops: ODESolve: theta has shape %v, want a vector of %d parameters", s[1], op.sys.params)
	}
	return nil
}

func (op odeOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op odeOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op odeOp) Hashcode() uint32                               { return hashOf(op) }

// String encodes every parameter of the op (the system by identity, the
// times by a hash of their bits), so that gorgonia merges only solves that
// are the same.
func (op odeOp) String() string {
	h := fnv.New64a()
	var b [8]byte
	for _, t := range op.times {
		u := math.Float64bits(t)
		for i := range b {
			b[i] = byte(u >> (8 * i))
		}
		h.Write(b[:])
	}
	return fmt.Sprintf("ODESolve{%p,n=%d,p=%d,t0=%v,T=%d:%x,rtol=%v,atol=%v,max=%d,stiff=%v}",
		op.sys, op.sys.dim, op.sys.params, op.t0, len(op.times), h.Sum64(),
		op.set.RelTol, op.set.AbsTol, op.set.MaxSteps, op.set.AllowStiff)
}

func (op odeOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

func (op odeOp) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(in) != op.Arity() {
		return nil, fmt.Errorf("ops: %v: got %d inputs, want %d", op, len(in), op.Arity())
	}
	n, p := op.sys.dim, op.sys.params
	res := make(gorgonia.Nodes, len(in))
	var err error
	for a := range in {
		g := odeGradOp{n: n, p: p, steps: len(op.times), off: 0, cnt: n}
		if a == 1 {
			g.off, g.cnt = n, p
		}
		if res[a], err = gorgonia.ApplyOp(g, out, grad); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Lower implements ad.Lowerer.
func (op odeOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if err := op.checkShapes(in); err != nil {
		return nil, err
	}
	return newODEKernel(op.sys, op.t0, op.times, op.set), nil
}

// errODEPacked is returned if a graph differentiates through the
// sensitivities in odeOp's packed output, which ODESolve never exposes.
var errODEPacked = errors.New("ops: ODESolve: only the solution entries of the packed output are differentiable")

// odeGradOp is x̄_c = Σ_{j,i} ȳ_{j,i} S_{j,i,off+c} for c < cnt, from
// odeOp's packed output and its gradient ȳ: the gradient of y0 (off 0, cnt
// n) or of θ (off n, cnt p). It reads the sensitivities through the graph,
// not through kernel state, so clones stay independent.
type odeGradOp struct {
	gradOp
	n, p, steps, off, cnt int
}

func (op odeGradOp) packedLen() int { return op.steps * op.n * (1 + op.n + op.p) }

func (op odeGradOp) Arity() int    { return 2 }
func (op odeGradOp) Type() hm.Type { return hm.NewFnType(tensorType(1), tensorType(1), tensorType(1)) }
func (op odeGradOp) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := shapesOfN(op, in, 2)
	if err != nil {
		return nil, err
	}
	if s[0].TotalSize() != op.packedLen() || s[1].TotalSize() != op.packedLen() {
		return nil, fmt.Errorf("ops: %v: shapes %v, want two vectors of %d", op, s, op.packedLen())
	}
	return tensor.Shape{op.cnt}, nil
}
func (op odeGradOp) Do(v ...gorgonia.Value) (gorgonia.Value, error) { return doWithKernel(op, v) }
func (op odeGradOp) WriteHash(h hash.Hash)                          { writeHash(h, op) }
func (op odeGradOp) Hashcode() uint32                               { return hashOf(op) }
func (op odeGradOp) String() string {
	return fmt.Sprintf("ODESolveGrad{n=%d,p=%d,T=%d,off=%d,cnt=%d}", op.n, op.p, op.steps, op.off, op.cnt)
}

// Lower implements ad.Lowerer.
func (op odeGradOp) Lower(in []tensor.Shape) (ad.Kernel, error) {
	if len(in) != 2 {
		return nil, fmt.Errorf("ops: %v: got %d inputs, want 2", op, len(in))
	}
	if _, err := op.InferShape(in[0], in[1]); err != nil {
		return nil, err
	}
	return odeGradKernel(op), nil
}

type odeGradKernel odeGradOp

// WritesFullOutput implements ad.FullWriter: Eval writes every element of out.
func (k odeGradKernel) WritesFullOutput() bool { return true }

func (k odeGradKernel) Eval(out []float64, in [][]float64) error {
	m := odeGradOp(k).packedLen()
	if len(in) != 2 || len(in[0]) != m || len(in[1]) != m || len(out) != k.cnt {
		return errBufferSize
	}
	ny := k.steps * k.n
	q := k.n + k.p
	for _, v := range in[1][ny:] {
		if v != 0 {
			return errODEPacked
		}
	}
	clear(out)
	sens, gbar := in[0][ny:], in[1][:ny]
	for r, gb := range gbar {
		if gb == 0 {
			continue
		}
		row := sens[r*q+k.off : r*q+k.off+k.cnt]
		for c, v := range row {
			out[c] += gb * v
		}
	}
	return nil
}
