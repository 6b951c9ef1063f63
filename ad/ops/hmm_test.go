package ops

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
)

// hmmCase is an HMM of n steps and k states whose inputs are packed in one
// parameter vector: logEmit (n·k), logTrans (k·k), then logInit (k) if
// init is set.
type hmmCase struct {
	n, k int
	init bool
}

func (c hmmCase) size() int {
	m := c.n*c.k + c.k*c.k
	if c.init {
		m += c.k
	}
	return m
}

func (c hmmCase) String() string { return fmt.Sprintf("N=%d,K=%d,init=%v", c.n, c.k, c.init) }

// build slices the packed parameter into the op's inputs.
func (c hmmCase) build(x *gorgonia.Node) (*gorgonia.Node, error) {
	all := tensor.Shape{c.size()}
	emit, err := gorgonia.ApplyOp(sliceOp{off: 0, in: all, out: tensor.Shape{c.n, c.k}}, x)
	if err != nil {
		return nil, err
	}
	trans, err := gorgonia.ApplyOp(sliceOp{off: c.n * c.k, in: all, out: tensor.Shape{c.k, c.k}}, x)
	if err != nil {
		return nil, err
	}
	var init *gorgonia.Node
	if c.init {
		if init, err = gorgonia.ApplyOp(sliceOp{off: c.n*c.k + c.k*c.k, in: all, out: tensor.Shape{c.k}}, x); err != nil {
			return nil, err
		}
	}
	return HMMMarginal(emit, trans, init)
}

// brute is the log marginal likelihood by enumerating all kⁿ state paths,
// each path's log weight summed directly and the paths combined by a
// max-shifted log-sum-exp: the definition, with no recursion.
func (c hmmCase) brute(x []float64) float64 {
	emit, trans := x[:c.n*c.k], x[c.n*c.k:c.n*c.k+c.k*c.k]
	z := make([]int, c.n)
	var scores []float64
	for {
		s := emit[z[0]]
		if c.init {
			s += x[c.n*c.k+c.k*c.k+z[0]]
		}
		for t := 1; t < c.n; t++ {
			s += trans[z[t-1]*c.k+z[t]] + emit[t*c.k+z[t]]
		}
		scores = append(scores, s)
		t := 0
		for t < c.n && z[t] == c.k-1 {
			z[t] = 0
			t++
		}
		if t == c.n {
			break
		}
		z[t]++
	}
	return logSumExpSlice(scores)
}

// point draws inputs on the scale of real models: emissions in (−8, 0),
// transitions and initial weights in (−3, 1) (unnormalised).
func (c hmmCase) point(seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 11))
	x := make([]float64, c.size())
	for i := range x {
		if i < c.n*c.k {
			x[i] = -8 * rng.Float64()
		} else {
			x[i] = 4*rng.Float64() - 3
		}
	}
	return x
}

// extreme is point with emissions near −700 and −1000 (whose exponentials
// underflow), one impossible transition and one impossible emission.
func (c hmmCase) extreme(seed uint64) []float64 {
	x := c.point(seed)
	for i := 0; i < c.n*c.k; i += 2 {
		x[i] -= 700
	}
	x[c.k] -= 1000 // row 1, state 0 (row 0 when k = 1)
	if c.n > 2 {
		x[2*c.k+c.k-1] = math.Inf(-1)
	}
	if c.k > 1 {
		x[c.n*c.k+1] = math.Inf(-1) // transition 0 → 1
	}
	return x
}

var hmmCases = []hmmCase{
	{1, 1, false}, {1, 3, true}, {2, 2, false}, {5, 2, true}, {7, 2, false}, {5, 3, true}, {4, 3, false},
}

// TestHMMMarginalValue compares the kernel's value with the enumeration of
// all paths, to 1e-12, at ordinary and extreme inputs, and checks that the
// gradient blocks are posterior marginals (each row sums to 1) and
// expected transition counts (summing to N − 1).
func TestHMMMarginalValue(t *testing.T) {
	for _, c := range hmmCases {
		for _, x := range [][]float64{c.point(1), c.point(2), c.extreme(3)} {
			op := hmmOp{hasInit: c.init}
			shapes := []tensor.Shape{{c.n, c.k}, {c.k, c.k}}
			in := [][]float64{x[:c.n*c.k], x[c.n*c.k : c.n*c.k+c.k*c.k]}
			if c.init {
				shapes = append(shapes, tensor.Shape{c.k})
				in = append(in, x[c.n*c.k+c.k*c.k:])
			}
			out, err := runKernel(t, op, shapes, in...)
			if err != nil {
				t.Fatalf("%v: %v", c, err)
			}
			want := c.brute(x)
			if math.IsInf(want, 0) || !closeTo(out[0], want, 1e-12) {
				t.Errorf("%v: value %v, enumeration %v", c, out[0], want)
			}
			post := out[1 : 1+c.n*c.k]
			for r := 0; r < c.n; r++ {
				var s float64
				for _, v := range post[r*c.k : (r+1)*c.k] {
					s += v
				}
				if math.Abs(s-1) > 1e-12 {
					t.Errorf("%v: posterior marginals of step %d sum to %v", c, r, s)
				}
			}
			var s float64
			for _, v := range out[1+c.n*c.k : 1+c.n*c.k+c.k*c.k] {
				s += v
			}
			if math.Abs(s-float64(c.n-1)) > 1e-12*float64(c.n) {
				t.Errorf("%v: expected transitions sum to %v, want %d", c, s, c.n-1)
			}
		}
	}
}

// TestHMMMarginalGradient checks the forward–backward gradient, through
// gorgonia's TapeMachine with an output gradient of −2.5, against central
// finite differences (gonum diff/fd) of the enumeration, for all three
// inputs, at ordinary and extreme inputs (an −Inf entry's derivative is 0
// on both sides).
func TestHMMMarginalGradient(t *testing.T) {
	for _, c := range hmmCases {
		for i, x := range [][]float64{c.point(4), c.extreme(5)} {
			checkScaledGradFD(t, fmt.Sprintf("%v point %d", c, i), tensor.Shape{c.size()}, x, c.build, c.brute, 1e-6)
		}
	}
}

// TestHMMMarginalCompiled checks that ad.Compile runs the op natively, with
// the TapeMachine's value and gradient and no allocation.
func TestHMMMarginalCompiled(t *testing.T) {
	for _, c := range []hmmCase{{6, 3, true}, {9, 2, false}} {
		shape := tensor.Shape{c.size()}
		p := compileBuilt(t, shape, c.build)
		if fb := p.Fallbacks(); len(fb) > 0 {
			t.Errorf("%v: fallback ops %v", c, fb)
		}
		tg := newTapeGraph(t, shape, c.build)
		for _, x := range [][]float64{c.point(6), c.extreme(7)} {
			want, wantGrad, err := tg.eval(x)
			if err != nil {
				t.Fatal(err)
			}
			checkMatchesTape(t, c.String(), p, x, want, wantGrad, 1e-13)
		}
	}
}

// TestHMMMarginalNoPath: when every path has an impossible step the value
// is −Inf with a zero gradient from the kernel, and a compiled program
// reports ad.ErrNonFinite rather than a NaN.
func TestHMMMarginalNoPath(t *testing.T) {
	c := hmmCase{3, 2, true}
	x := c.point(8)
	// Every path starts in state 1 (logInit = (−Inf, 0)), must then move
	// to state 0 (logTrans row 1 = (0, −Inf)), which cannot emit y₂.
	x[10], x[11] = math.Inf(-1), 0
	x[6+2], x[6+3] = 0, math.Inf(-1)
	x[1*2+0] = math.Inf(-1)
	if v := c.brute(x); !math.IsInf(v, -1) {
		t.Fatalf("test set-up: enumeration %v, want −Inf", v)
	}
	out, err := runKernel(t, hmmOp{hasInit: true}, []tensor.Shape{{3, 2}, {2, 2}, {2}},
		x[:6], x[6:10], x[10:])
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(out[0], -1) {
		t.Errorf("value %v, want −Inf", out[0])
	}
	for i, v := range out[1:] {
		if v != 0 {
			t.Errorf("gradient entry %d = %v, want 0", i, v)
		}
	}
	p := compileBuilt(t, tensor.Shape{c.size()}, c.build)
	grad := make([]float64, c.size())
	if _, err := p.LogDensityGrad(x, grad); !errors.Is(err, ad.ErrNonFinite) {
		t.Errorf("compiled: err = %v, want ad.ErrNonFinite", err)
	}
}

// TestHMMMarginalBadShapes: malformed inputs are errors when the graph is
// built, naming the argument.
func TestHMMMarginalBadShapes(t *testing.T) {
	g := gorgonia.NewGraph()
	mat := func(r, c int) *gorgonia.Node {
		return gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(r, c))
	}
	vec := func(n int) *gorgonia.Node { return gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(n)) }
	f32 := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 2))
	cases := []struct {
		name              string
		emit, trans, init *gorgonia.Node
	}{
		{"nil emissions", nil, mat(2, 2), nil},
		{"nil transitions", mat(4, 2), nil, vec(2)},
		{"vector emissions", vec(4), mat(2, 2), nil},
		{"transitions 2×3", mat(4, 2), mat(2, 3), nil},
		{"transitions 3×3 for 2 states", mat(4, 2), mat(3, 3), nil},
		{"initial weights of 3 for 2 states", mat(4, 2), mat(2, 2), vec(3)},
		{"initial weights as a matrix", mat(4, 2), mat(2, 2), mat(1, 2)},
		{"float32", mat(4, 2), f32, nil},
	}
	for _, c := range cases {
		var v *gorgonia.Node
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", c.name, r)
				}
			}()
			v, err = HMMMarginal(c.emit, c.trans, c.init)
		}()
		if err == nil {
			t.Errorf("%s: no error (node %v)", c.name, v)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
	if _, err := HMMMarginal(mat(4, 2), mat(2, 2), vec(2)); err != nil {
		t.Errorf("good shapes: %v", err)
	}
}

// TestHMMMarginalClonesConcurrent runs clones of one compiled program in
// goroutines at different points (go test -race checks that the kernels'
// scratch is not shared).
func TestHMMMarginalClonesConcurrent(t *testing.T) {
	c := hmmCase{8, 3, true}
	p := compileBuilt(t, tensor.Shape{c.size()}, c.build)
	const workers = 4
	errs := make(chan error, workers)
	for w := range workers {
		q := p.Clone()
		x := c.point(uint64(20 + w))
		want := c.brute(x)
		ref := p.Clone()
		wantGrad := make([]float64, c.size())
		if _, err := ref.LogDensityGrad(x, wantGrad); err != nil {
			t.Fatal(err)
		}
		go func() {
			grad := make([]float64, c.size())
			for range 50 {
				v, err := q.LogDensityGrad(x, grad)
				if err != nil {
					errs <- err
					return
				}
				if !closeTo(v, want, 1e-12) {
					errs <- fmt.Errorf("value %v, enumeration %v", v, want)
					return
				}
				for j := range grad {
					if grad[j] != wantGrad[j] {
						errs <- fmt.Errorf("gradient[%d] = %v, alone %v", j, grad[j], wantGrad[j])
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// hmmInputs splits a packed point into the kernel's inputs.
func (c hmmCase) inputs(x []float64) [][]float64 {
	in := [][]float64{x[:c.n*c.k], x[c.n*c.k : c.n*c.k+c.k*c.k]}
	if c.init {
		in = append(in, x[c.n*c.k+c.k*c.k:])
	}
	return in
}

// bothPaths runs the kernel's scaled and log-space recursions at x and
// returns their outputs and whether the scaled one kept its precision.
func (c hmmCase) bothPaths(x []float64) (scaled, logSpace []float64, ok bool) {
	k := newHMMKernel(c.n, c.k, c.init)
	m := (hmmOp{hasInit: c.init}).packedLen(c.n, c.k)
	scaled, logSpace = make([]float64, m), make([]float64, m)
	ok = k.scaled(scaled, c.inputs(x))
	k.logSpace(logSpace, c.inputs(x))
	return scaled, logSpace, ok
}

// TestHMMMarginalPaths checks the scaled recursions against the log-space
// ones entry by entry (1e-12; 1e-10 over 400 steps), at ordinary points, where the scaled path
// must be taken, and on a long sequence whose best-emitting state is
// unreachable (β̂ would overflow if it were normalised as α̂); and that a
// step whose only paths lie e⁻⁸⁰⁰ below the scaling maxima sends Eval to
// log space, which matches the enumeration.
func TestHMMMarginalPaths(t *testing.T) {
	check := func(name string, c hmmCase, x []float64, tol float64) {
		s, l, ok := c.bothPaths(x)
		if !ok {
			t.Errorf("%s: the scaled recursions gave up", name)
			return
		}
		for i := range s {
			if !closeTo(s[i], l[i], tol) {
				t.Errorf("%s: entry %d scaled %v, log space %v", name, i, s[i], l[i])
			}
		}
	}
	for _, c := range hmmCases {
		check(c.String(), c, c.point(9), 1e-12)
	}
	// State 0 emits best but is never entered.
	long := hmmCase{400, 3, true}
	x := long.point(10)
	for tt := range long.n {
		x[tt*3] = 0
		x[tt*3+1] -= 5
		x[tt*3+2] -= 5
	}
	for j := range 3 {
		x[long.n*3+j*3] = math.Inf(-1)
	}
	x[long.n*3+9] = math.Inf(-1)
	// log α_t reaches −2,000 here: each step's log-sum-exp rounds it by
	// about 2000·2⁻⁵³ ≈ 2·10⁻¹³, and 400 steps add up to ~10⁻¹⁰ in the
	// exponents of the log-space gradient.
	check("unreachable best state", long, x, 1e-10)

	c := hmmCase{2, 2, false}
	x = []float64{0, -800, 0, -800, -1000, 0, 0, 0}
	s, l, ok := c.bothPaths(x)
	if ok {
		t.Errorf("scaled recursions kept a step whose terms all underflow: %v", s)
	}
	out, err := runKernel(t, hmmOp{}, []tensor.Shape{{2, 2}, {2, 2}}, c.inputs(x)...)
	if err != nil {
		t.Fatal(err)
	}
	if want := c.brute(x); !closeTo(out[0], want, 1e-12) || out[0] != l[0] {
		t.Errorf("value %v, log space %v, enumeration %v", out[0], l[0], want)
	}
	checkScaledGradFD(t, "underflowing step", tensor.Shape{c.size()}, x, c.build, c.brute, 1e-6)
}

// BenchmarkHMMMarginal times one value and gradient of the kernel (the
// scaled recursions) at hmm_example's size, N = 100 and K = 2, and larger.
func BenchmarkHMMMarginal(b *testing.B) {
	for _, c := range []hmmCase{{100, 2, false}, {100, 4, true}, {1000, 2, false}} {
		b.Run(c.String(), func(b *testing.B) {
			x := c.point(1)
			k := newHMMKernel(c.n, c.k, c.init)
			out := make([]float64, (hmmOp{hasInit: c.init}).packedLen(c.n, c.k))
			in := c.inputs(x)
			b.ReportAllocs()
			for b.Loop() {
				if err := k.Eval(out, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
