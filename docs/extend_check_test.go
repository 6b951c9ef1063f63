package docs_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/sas"
	"github.com/trjgo/trj/ppl/diag"
)

func TestExtendOp(t *testing.T) {
	// f(x) = Σ expm1(x_i)² compiled natively, against direct evaluation
	// and finite differences.
	g := gorgonia.NewGraph()
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("x"))
	y, err := Expm1(x)
	if err != nil {
		t.Fatal(err)
	}
	sq, err := gorgonia.HadamardProd(y, y)
	if err != nil {
		t.Fatal(err)
	}
	out, err := gorgonia.Sum(sq)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ad.Compile(g, out, []*gorgonia.Node{x})
	if err != nil {
		t.Fatal(err)
	}
	if fb := p.Fallbacks(); len(fb) != 0 {
		t.Errorf("Expm1 not lowered: fallbacks %v", fb)
	}
	f := func(v []float64) float64 {
		s := 0.0
		for _, vi := range v {
			s += math.Expm1(vi) * math.Expm1(vi)
		}
		return s
	}
	for _, pt := range [][]float64{{0.3, -1.2, 1e-9}, {-0.5, 0.8, 2}} {
		grad := make([]float64, 3)
		got, err := p.LogDensityGrad(pt, grad)
		if err != nil {
			t.Fatal(err)
		}
		if want := f(pt); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("f(%v) = %v, want %v", pt, got, want)
		}
		want := fd.Gradient(nil, f, pt, &fd.Settings{Formula: fd.Central})
		for i := range grad {
			if math.Abs(grad[i]-want[i]) > 1e-6*math.Max(1, math.Abs(want[i])) {
				t.Errorf("gradient at %v: %v, finite differences %v", pt, grad, want)
				break
			}
		}
	}
}

func TestExtendWithin(t *testing.T) {
	// TRJ on the paper's sinh-arcsinh target with exact transports and the
	// coordinate walk within models: π(k=2) is 3/4 exactly, and model k=1's
	// mean of θ must match exact draws.
	const chains, steps = 4, 20000
	freq := make([][]float64, chains)
	theta0 := make([][]float64, chains) // θ in model k=1, NaN elsewhere
	for c := range freq {
		target := sas.Paper()
		var ts []kernels.Transport
		for _, tr := range target.Transports() {
			ts = append(ts, tr)
		}
		within, err := newCoordinateWalk(target, 1)
		if err != nil {
			t.Fatal(err)
		}
		jump, err := kernels.ProportionalJumps([]float64{0.25, 0.75})
		if err != nil {
			t.Fatal(err)
		}
		trj, err := kernels.NewTRJ(kernels.TRJConfig{Target: target, Transports: ts, Jump: jump, Within: within, Alternate: true})
		if err != nil {
			t.Fatal(err)
		}
		s, err := trj.Init(0, []float64{-3})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, uint64(c)))
		for i := 0; i < steps; i++ {
			s, _ = trj.Step(rng, s)
			freq[c] = append(freq[c], float64(s.Model))
			if s.Model == 0 {
				theta0[c] = append(theta0[c], s.Theta[0])
			}
		}
	}
	mcse, err := diag.MCSEMean(freq)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range freq {
		sum += stat.Mean(f, nil)
	}
	if got := sum / chains; math.Abs(got-0.75) > 4*mcse {
		t.Errorf("π̂(k=2) = %.4f ± %.4f, exact 0.75", got, mcse)
	}

	// Model k=1's draws, cut to a common length per chain for diag.
	n := len(theta0[0])
	for _, c := range theta0 {
		n = min(n, len(c))
	}
	for c := range theta0 {
		theta0[c] = theta0[c][:n]
	}
	mcseTheta, err := diag.MCSEMean(theta0)
	if err != nil {
		t.Fatal(err)
	}
	var got float64
	for _, c := range theta0 {
		got += stat.Mean(c, nil) / chains
	}
	rng := rand.New(rand.NewPCG(8, 0))
	exact := make([]float64, 100000)
	comp := sas.Paper().Component(0)
	v := make([]float64, 1)
	for i := range exact {
		if err := comp.Sample(rng, v); err != nil {
			t.Fatal(err)
		}
		exact[i] = v[0]
	}
	m, sd := stat.MeanStdDev(exact, nil)
	se := math.Hypot(mcseTheta, sd/math.Sqrt(float64(len(exact))))
	if math.Abs(got-m) > 4*se {
		t.Errorf("mean of θ in model k=1: %.4f, exact draws %.4f (tolerance 4 × %.4f)", got, m, se)
	}
}

func TestExtendTransport(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 0))
	var draws [][]float64
	for i := 0; i < 500; i++ {
		draws = append(draws, []float64{math.Exp(rng.NormFloat64()), math.Exp(2 + 0.5*rng.NormFloat64())})
	}
	tr, err := fitLogAffine(draws)
	if err != nil {
		t.Fatal(err)
	}
	theta := []float64{0.7, 9}
	z := make([]float64, 2)
	ldF, err := tr.Forward(theta, z)
	if err != nil {
		t.Fatal(err)
	}
	back := make([]float64, 2)
	ldI, err := tr.Inverse(z, back)
	if err != nil {
		t.Fatal(err)
	}
	for i := range theta {
		if math.Abs(back[i]-theta[i]) > 1e-12*theta[i] {
			t.Errorf("round trip: %v → %v → %v", theta, z, back)
		}
	}
	if math.Abs(ldF+ldI) > 1e-12 {
		t.Errorf("log-dets %v and %v do not cancel", ldF, ldI)
	}
	// log|det J_T| against a finite-difference Jacobian.
	var jac mat.Dense
	jac.ReuseAs(2, 2)
	fd.Jacobian(&jac, func(dst, x []float64) {
		if _, err := tr.Forward(x, dst); err != nil {
			t.Fatal(err)
		}
	}, theta, &fd.JacobianSettings{Formula: fd.Central})
	if want := math.Log(math.Abs(mat.Det(&jac))); math.Abs(ldF-want) > 1e-6 {
		t.Errorf("log|det J| = %v, finite differences %v", ldF, want)
	}
	// Bad input is an error, not a NaN.
	if _, err := tr.Forward([]float64{-1, 1}, z); err == nil {
		t.Error("Forward accepted a negative θ")
	}
	if _, err := tr.Forward([]float64{1}, z); err == nil {
		t.Error("Forward accepted a short θ")
	}
	if _, err := fitLogAffine([][]float64{{1, 0}, {2, 1}}); err == nil {
		t.Error("fitLogAffine accepted a zero draw")
	}
}

// stdNormalTarget is N(μ, I) in n dimensions.
type stdNormalTarget struct {
	n  int
	mu float64
}

func (s stdNormalTarget) Dim() int { return s.n }

func (s stdNormalTarget) LogDensityGrad(x, grad []float64) (float64, error) {
	lp := 0.0
	for i, v := range x {
		lp -= 0.5 * (v - s.mu) * (v - s.mu)
		grad[i] = s.mu - v
	}
	return lp, nil
}

func TestExtendKernel(t *testing.T) {
	// Four MALA chains on N(1.5, I₃): the mean and the second moment of
	// every coordinate within 4 MCSE of the truth.
	const chains, warm, steps = 4, 200, 5000
	target := stdNormalTarget{n: 3, mu: 1.5}
	x := make([][][]float64, target.n) // coordinate → chain → draws
	for i := range x {
		x[i] = make([][]float64, chains)
	}
	for c := 0; c < chains; c++ {
		k, err := NewMALA(target, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		s, err := k.Init([]float64{-2, 0, 2})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(11, uint64(c)))
		accepted := 0
		for i := 0; i < warm+steps; i++ {
			var info MALAInfo
			s, info = k.Step(rng, s)
			if i < warm {
				continue
			}
			if info.Accepted {
				accepted++
			}
			for j, v := range s.Position {
				x[j][c] = append(x[j][c], v)
			}
		}
		if accepted == 0 || accepted == steps {
			t.Errorf("chain %d accepted %d of %d proposals", c, accepted, steps)
		}
	}
	for j := range x {
		checkMoment(t, fmt.Sprintf("E[x_%d]", j), x[j], func(v float64) float64 { return v }, 1.5)
		checkMoment(t, fmt.Sprintf("E[x_%d²]", j), x[j], func(v float64) float64 { return v * v }, 1+1.5*1.5)
	}
	if _, err := NewMALA(target, -1); err == nil {
		t.Error("NewMALA accepted a negative step size")
	}
}

// checkMoment compares the mean of f over draws[chain][i] with want, within
// 4 MCSE.
func checkMoment(t *testing.T, name string, draws [][]float64, f func(float64) float64, want float64) {
	t.Helper()
	fx := make([][]float64, len(draws))
	sum, n := 0.0, 0
	for c, d := range draws {
		for _, v := range d {
			fx[c] = append(fx[c], f(v))
			sum += f(v)
			n++
		}
	}
	mcse, err := diag.MCSEMean(fx)
	if err != nil {
		t.Fatal(err)
	}
	if got := sum / float64(n); math.Abs(got-want) > 4*mcse {
		t.Errorf("%s = %.4f ± %.4f, want %.4f", name, got, mcse, want)
	}
}
