package docs_test

// The extension examples of architecture.md: a custom op, a within-model
// kernel and a transport, each checked by TestExtend*.

import (
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/stat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/kernels"
)

// snippet:op
// Expm1 returns exp(x) − 1 elementwise, accurate for small x.
func Expm1(x *gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.ApplyOp(expm1Op{}, x) }

// expm1Op is a gorgonia op (for graphs), a gorgonia.SDOp (for gorgonia.Grad)
// and an ad.Lowerer (for ad.Compile).
type expm1Op struct{}

func (expm1Op) Arity() int           { return 1 }
func (expm1Op) Type() hm.Type        { a := hm.TypeVariable('a'); return hm.NewFnType(a, a) }
func (expm1Op) ReturnsPtr() bool     { return false }
func (expm1Op) CallsExtern() bool    { return false }
func (expm1Op) OverwritesInput() int { return -1 }
func (expm1Op) String() string       { return "Expm1" }
func (op expm1Op) WriteHash(h hash.Hash) {
	fmt.Fprint(h, op.String())
}
func (op expm1Op) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

func (expm1Op) InferShape(in ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, errors.New("Expm1: input has no shape")
	}
	return s.Clone(), nil
}

// Do is gorgonia's own (slow) path; it runs the same kernel.
func (op expm1Op) Do(v ...gorgonia.Value) (gorgonia.Value, error) {
	switch x := v[0].(type) {
	case *gorgonia.F64:
		return gorgonia.NewF64(math.Expm1(float64(*x))), nil
	case *tensor.Dense:
		in := x.Materialize().Data().([]float64)
		out := make([]float64, len(in))
		if err := (expm1Kernel{}).Eval(out, [][]float64{in}); err != nil {
			return nil, err
		}
		return tensor.New(tensor.WithShape(x.Shape().Clone()...), tensor.WithBacking(out)), nil
	}
	return nil, fmt.Errorf("Expm1: unsupported value %T", v[0])
}

// The gradient d/dx (exp(x) − 1) = exp(x), built from gorgonia ops.
func (expm1Op) DiffWRT(int) []bool { return []bool{true} }
func (expm1Op) SymDiff(in gorgonia.Nodes, out, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	ex, err := gorgonia.Exp(in[0])
	if err != nil {
		return nil, err
	}
	g, err := gorgonia.HadamardProd(grad, ex)
	return gorgonia.Nodes{g}, err
}

// Lower gives ad.Compile a native kernel for the input shapes.
func (expm1Op) Lower(in []tensor.Shape) (ad.Kernel, error) { return expm1Kernel{}, nil }

// expm1Kernel works on flat buffers and must not allocate.
type expm1Kernel struct{}

var errExpm1Buffers = errors.New("Expm1: buffer sizes do not match")

func (expm1Kernel) Eval(out []float64, in [][]float64) error {
	if len(in) != 1 || len(in[0]) != len(out) {
		return errExpm1Buffers // preallocated: no allocation on the hot path
	}
	for i, x := range in[0] {
		out[i] = math.Expm1(x)
	}
	return nil
}

// endsnippet:op

// snippet:kernel
// MALA is the Metropolis-adjusted Langevin algorithm: a gradient step plus
// Gaussian noise, x' = x + (ε²/2)∇log p(x) + εξ, corrected by a
// Metropolis–Hastings test. The value holds the parameters and scratch
// space; the state and the random stream belong to the chain.
type MALA struct {
	StepSize float64 // ε
	target   kernels.Target
	prop     MALAState // scratch for the proposal
}

// MALAState is a position with its log-density and gradient.
type MALAState struct {
	Position, Grad []float64
	LogDensity     float64
}

// MALAInfo says what one transition did.
type MALAInfo struct {
	AcceptProb float64
	Accepted   bool
}

// NewMALA validates its arguments rather than panicking later.
func NewMALA(t kernels.Target, stepSize float64) (*MALA, error) {
	if t == nil || t.Dim() < 1 || !(stepSize > 0) || math.IsInf(stepSize, 1) {
		return nil, errors.New("NewMALA: need a target and a finite positive step size")
	}
	n := t.Dim()
	return &MALA{StepSize: stepSize, target: t,
		prop: MALAState{Position: make([]float64, n), Grad: make([]float64, n)}}, nil
}

// Init returns the state at a copy of x.
func (k *MALA) Init(x []float64) (MALAState, error) {
	s := MALAState{Position: append([]float64(nil), x...), Grad: make([]float64, len(x))}
	var err error
	s.LogDensity, err = k.target.LogDensityGrad(s.Position, s.Grad)
	if err != nil || math.IsNaN(s.LogDensity) || math.IsInf(s.LogDensity, 0) {
		return s, fmt.Errorf("MALA.Init: no finite log-density at the initial point: %v", err)
	}
	return s, nil
}

// Step makes one transition without allocating; s is consumed (an accepted
// proposal is swapped into it).
func (k *MALA) Step(rng *rand.Rand, s MALAState) (MALAState, MALAInfo) {
	eps, p := k.StepSize, &k.prop
	for i, x := range s.Position {
		p.Position[i] = x + eps*eps/2*s.Grad[i] + eps*rng.NormFloat64()
	}
	lp, err := k.target.LogDensityGrad(p.Position, p.Grad)
	if err != nil || math.IsNaN(lp) || math.IsInf(lp, 0) {
		return s, MALAInfo{} // a failing target is a rejection
	}
	p.LogDensity = lp
	// log q(x | x') − log q(x' | x) for the Langevin proposal.
	logQ := 0.0
	for i, x := range s.Position {
		fwd := p.Position[i] - x - eps*eps/2*s.Grad[i]
		rev := x - p.Position[i] - eps*eps/2*p.Grad[i]
		logQ += (fwd*fwd - rev*rev) / (2 * eps * eps)
	}
	info := MALAInfo{AcceptProb: math.Min(1, math.Exp(lp-s.LogDensity+logQ))}
	if rng.Float64() < info.AcceptProb {
		info.Accepted = true
		s, k.prop = k.prop, s
	}
	return s, info
}

// endsnippet:kernel

// snippet:within
// coordinateWalk is a within-model kernel: a Metropolis random walk on one
// coordinate of θ_k at a time, each accepted or rejected on its own.
type coordinateWalk struct {
	target kernels.TransdimensionalTarget
	scale  float64
}

func newCoordinateWalk(t kernels.TransdimensionalTarget, scale float64) (*coordinateWalk, error) {
	if t == nil || !(scale > 0) || math.IsInf(scale, 1) {
		return nil, fmt.Errorf("coordinateWalk: need a target and a finite positive scale, got %v", scale)
	}
	return &coordinateWalk{target: t, scale: scale}, nil
}

// Step implements kernels.WithinModelKernel. A failing or non-finite
// density rejects; nothing is allocated.
func (w *coordinateWalk) Step(rng *rand.Rand, k int, theta []float64, logDensity float64) (float64, bool) {
	moved := false
	for i, old := range theta {
		theta[i] = old + w.scale*rng.NormFloat64()
		lp, err := w.target.LogDensity(k, theta)
		if err == nil && !math.IsNaN(lp) && math.Log(rng.Float64()) < lp-logDensity {
			logDensity, moved = lp, true
			continue
		}
		theta[i] = old
	}
	return logDensity, moved
}

// endsnippet:within

// snippet:transport
// logAffine is the transport z_i = (log θ_i − m_i)/s_i for positive
// parameters, a log-normal fit to the draws.
type logAffine struct{ m, s []float64 }

// fitLogAffine fits m and s to the means and standard deviations of log θ.
func fitLogAffine(draws [][]float64) (*logAffine, error) {
	if len(draws) < 2 {
		return nil, errors.New("fitLogAffine: need at least two draws")
	}
	n := len(draws[0])
	t := &logAffine{m: make([]float64, n), s: make([]float64, n)}
	col := make([]float64, len(draws))
	for i := 0; i < n; i++ {
		for r, d := range draws {
			if len(d) != n || !(d[i] > 0) {
				return nil, fmt.Errorf("fitLogAffine: draw %d is not a positive vector of length %d", r, n)
			}
			col[r] = math.Log(d[i])
		}
		t.m[i], t.s[i] = stat.MeanStdDev(col, nil)
		if !(t.s[i] > 0) {
			return nil, fmt.Errorf("fitLogAffine: coordinate %d does not vary", i)
		}
	}
	return t, nil
}

func (t *logAffine) Dim() int { return len(t.m) }

// Forward sets z = T(θ) and returns log|det J_T(θ)| = −Σ (log θ_i + log s_i).
func (t *logAffine) Forward(theta, z []float64) (float64, error) {
	if len(theta) != len(t.m) || len(z) != len(t.m) {
		return 0, kernels.ErrDimension
	}
	ld := 0.0
	for i, x := range theta {
		if !(x > 0) || math.IsInf(x, 1) {
			return 0, fmt.Errorf("logAffine: θ_%d = %v is not a finite positive number", i, x)
		}
		lx := math.Log(x)
		z[i] = (lx - t.m[i]) / t.s[i]
		ld -= lx + math.Log(t.s[i])
	}
	return ld, nil
}

// Inverse sets θ = T⁻¹(z) and returns log|det J_T⁻¹(z)| = Σ (log s_i + log θ_i).
func (t *logAffine) Inverse(z, theta []float64) (float64, error) {
	if len(theta) != len(t.m) || len(z) != len(t.m) {
		return 0, kernels.ErrDimension
	}
	ld := 0.0
	for i, v := range z {
		lx := t.m[i] + t.s[i]*v
		theta[i] = math.Exp(lx)
		if math.IsNaN(lx) || math.IsInf(theta[i], 0) || theta[i] == 0 {
			return 0, fmt.Errorf("logAffine: z_%d = %v maps outside the positive reals", i, v)
		}
		ld += math.Log(t.s[i]) + lx
	}
	return ld, nil
}

// endsnippet:transport

// Compile-time checks that the examples satisfy the contracts.
var (
	_ gorgonia.SDOp             = expm1Op{}
	_ ad.Lowerer                = expm1Op{}
	_ kernels.WithinModelKernel = (*coordinateWalk)(nil)
	_ kernels.Transport         = (*logAffine)(nil)
)
