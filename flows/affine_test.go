package flows

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/trjgo/trj/internal/training"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
)

func TestAffine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Correlated draws θ = μ + A z with weights.
	mu := []float64{1, -2, 0.5}
	a := [][]float64{{1, 0, 0}, {0.8, 0.5, 0}, {-0.3, 0.2, 2}}
	x := make([][]float64, 400)
	w := make([]float64, len(x))
	for r := range x {
		z := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		x[r] = make([]float64, 3)
		for i := range mu {
			x[r][i] = mu[i]
			for j := range z {
				x[r][i] += a[i][j] * z[j]
			}
		}
		w[r] = 0.5 + rng.Float64()
	}
	f, err := FitAffine(x, w)
	if err != nil {
		t.Fatal(err)
	}
	// The weighted mean of the pushed samples is 0 and their weighted
	// covariance the identity, up to the n−1 correction of the estimator.
	zs := make([]float64, 3)
	sum := make([]float64, 3)
	var sw float64
	for r, row := range x {
		if _, err := f.Forward(row, zs); err != nil {
			t.Fatal(err)
		}
		for i := range zs {
			sum[i] += w[r] * zs[i]
		}
		sw += w[r]
	}
	for i := range sum {
		if math.Abs(sum[i]/sw) > 1e-12 {
			t.Errorf("weighted mean of z[%d] = %v", i, sum[i]/sw)
		}
	}
	theta, z, back := []float64{0.3, 1, -1}, make([]float64, 3), make([]float64, 3)
	ldF, _ := f.Forward(theta, z)
	ldI, _ := f.Inverse(z, back)
	for i := range theta {
		if math.Abs(back[i]-theta[i]) > 1e-12 {
			t.Errorf("round trip %v → %v", theta, back)
		}
	}
	if math.Abs(ldF+ldI) > 1e-12 {
		t.Errorf("log-dets %v and %v", ldF, ldI)
	}
	want := fdLogDet(t, func(out, in []float64) error { _, err := f.Forward(in, out); return err }, theta)
	if math.Abs(ldF-want) > 1e-7 {
		t.Errorf("log|det J| = %v, finite differences %v", ldF, want)
	}
	if n := testing.AllocsPerRun(10, func() { f.Forward(theta, z); f.Inverse(z, back) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func TestAffineSingular(t *testing.T) {
	// Second coordinate is a multiple of the first.
	x := [][]float64{{1, 2}, {2, 4}, {3, 6}, {4, 8}}
	if _, err := FitAffine(x, nil); !errors.Is(err, ErrSingular) {
		t.Errorf("collinear samples: error %v, want ErrSingular", err)
	}
	if _, err := FitAffine([][]float64{{1, 2}, {3, 4}}, nil); !errors.Is(err, ErrSingular) {
		t.Errorf("too few samples: error %v, want ErrSingular", err)
	}
	if _, err := FitAffine([][]float64{{1}, {2}, {3}}, []float64{1, -1, 1}); err == nil {
		t.Error("negative weight accepted")
	}
}

// TestNormalisedWeights checks that only relative weights matter, so
// probability weights summing to one work.
func TestNormalisedWeights(t *testing.T) {
	x := smallData(200, 9)
	w := make([]float64, len(x))
	small := make([]float64, len(x))
	for r := range w {
		w[r] = 1 + float64(r%3)
		small[r] = w[r] / 400 // sums to 1
	}
	a1, err1 := FitAffine(x, w)
	a2, err2 := FitAffine(x, small)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	z1, z2 := make([]float64, 2), make([]float64, 2)
	l1, _ := a1.Forward([]float64{0.5, 1}, z1)
	l2, _ := a2.Forward([]float64{0.5, 1}, z2)
	if math.Abs(l1-l2) > 1e-12 || math.Abs(z1[0]-z2[0]) > 1e-12 {
		t.Errorf("affine depends on the weights' scale: %v %v vs %v %v", l1, z1, l2, z2)
	}
	m1, s1, err1 := training.Standardisation(x, w, nil)
	m2, s2, err2 := training.Standardisation(x, small, nil)
	if err1 != nil || err2 != nil || math.Abs(m1[0]-m2[0]) > 1e-12 || math.Abs(s1[1]-s2[1]) > 1e-12 {
		t.Errorf("standardisation depends on the weights' scale: %v %v vs %v %v (%v %v)", m1, s1, m2, s2, err1, err2)
	}
}

func TestFitAffineZeroWeights(t *testing.T) {
	x := [][]float64{{1}, {2}, {4}}
	_, err := FitAffine(x, []float64{0, 0, 0})
	if err == nil || !strings.Contains(err.Error(), "weights") {
		t.Errorf("all-zero weights: error %v, want one naming the weights", err)
	}
}

// TestAffineGraph checks the compiled maps against the affine formulas
// (Trsv and Trmv on the factor), inverse∘forward against the identity, the
// log-determinant against a finite-difference Jacobian, allocations, and
// clones evaluated concurrently.
func TestAffineGraph(t *testing.T) {
	for _, n := range []int{1, 2, 6, 21} {
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		a := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				a.Set(i, j, rng.NormFloat64())
			}
			a.Set(i, i, a.At(i, i)+2)
		}
		var cov mat.SymDense
		cov.SymOuterK(1, a)
		mean := make([]float64, n)
		for i := range mean {
			mean[i] = 3 * rng.NormFloat64()
		}
		f, err := NewAffine(mean, &cov)
		if err != nil {
			t.Fatal(err)
		}
		l := f.CholeskyFactor()
		tri := l.RawTriangular()
		theta := make([]float64, n)
		for i := range theta {
			theta[i] = mean[i] + 2*rng.NormFloat64()
		}
		// The previous formulas: z = L⁻¹(θ − μ) by Trsv, θ = Lz + μ by Trmv.
		want := make([]float64, n)
		for i := range want {
			want[i] = theta[i] - mean[i]
		}
		blas64.Trsv(blas.NoTrans, tri, vec(want))
		z := make([]float64, n)
		ld, err := f.Forward(theta, z)
		if err != nil {
			t.Fatal(err)
		}
		wantLd := 0.0
		for i := 0; i < n; i++ {
			wantLd -= math.Log(l.At(i, i))
		}
		if ld != wantLd {
			t.Errorf("n=%d: Forward log|det| = %v, want %v", n, ld, wantLd)
		}
		for i := range z {
			if math.Abs(z[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Errorf("n=%d: Forward z[%d] = %v, Trsv gives %v", n, i, z[i], want[i])
			}
		}
		back := append([]float64(nil), z...)
		blas64.Trmv(blas.NoTrans, tri, vec(back))
		for i := range back {
			back[i] += mean[i]
		}
		th := make([]float64, n)
		ldi, err := f.Inverse(z, th)
		if err != nil {
			t.Fatal(err)
		}
		if ldi != -wantLd {
			t.Errorf("n=%d: Inverse log|det| = %v, want %v", n, ldi, -wantLd)
		}
		for i := range th {
			if math.Abs(th[i]-back[i]) > 1e-12*(1+math.Abs(back[i])) {
				t.Errorf("n=%d: Inverse θ[%d] = %v, Trmv gives %v", n, i, th[i], back[i])
			}
			if math.Abs(th[i]-theta[i]) > 1e-11*(1+math.Abs(theta[i])) {
				t.Errorf("n=%d: inverse∘forward: θ[%d] = %v, want %v", n, i, th[i], theta[i])
			}
		}
		// log|det J| from a central-difference Jacobian of Forward.
		jac := mat.NewDense(n, n, nil)
		fd.Jacobian(jac, func(y, x []float64) {
			if _, err := f.Forward(x, y); err != nil {
				t.Fatal(err)
			}
		}, theta, &fd.JacobianSettings{Formula: fd.Central})
		var lu mat.LU
		lu.Factorize(jac)
		if lfd, _ := lu.LogDet(); math.Abs(lfd-ld) > 1e-6*(1+math.Abs(ld)) {
			t.Errorf("n=%d: log|det| %v, finite differences give %v", n, ld, lfd)
		}
		// In place, and without allocating.
		inPlace := append([]float64(nil), theta...)
		if _, err := f.Forward(inPlace, inPlace); err != nil || !slices.Equal(inPlace, z) {
			t.Errorf("n=%d: in-place Forward %v, want %v (%v)", n, inPlace, z, err)
		}
		if allocs := testing.AllocsPerRun(20, func() {
			_, _ = f.Forward(theta, z)
			_, _ = f.Inverse(z, th)
		}); allocs != 0 {
			t.Errorf("n=%d: Forward and Inverse allocate %v times", n, allocs)
		}
		// The original and clones on several goroutines give the
		// original's values, calls in place (which use a program's
		// buffers, one at a time) among them.
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for g := range errs {
			c := f
			if g%2 == 1 {
				c = f.Clone()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				zc, thc := make([]float64, n), make([]float64, n)
				for range 200 {
					if _, err := c.Forward(theta, zc); err != nil || !slices.Equal(zc, z) {
						errs[g] = fmt.Errorf("Forward %v, want %v (%v)", zc, z, err)
						return
					}
					if _, err := c.Inverse(z, thc); err != nil || !slices.Equal(thc, th) {
						errs[g] = fmt.Errorf("Inverse %v, want %v (%v)", thc, th, err)
						return
					}
					copy(zc, theta)
					if _, err := c.Forward(zc, zc); err != nil || !slices.Equal(zc, z) {
						errs[g] = fmt.Errorf("in-place Forward %v, want %v (%v)", zc, z, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Errorf("n=%d: %v", n, err)
			}
		}
	}
}

// TestAffineFileCompat loads an affine flow saved before Forward and
// Inverse ran compiled programs (main c5032a6's Save of
// NewAffine([1 −2], [[2 0.5] [0.5 1]])) and checks it against that code's
// Forward at one point.
func TestAffineFileCompat(t *testing.T) {
	const saved = "54524a464c4f570a010000000100000002000000000000000000f03f00000000000000c0cd3b7f669ea0f63f0000000000000000cc3b7f669ea0d63f493f6811eaeeed3f4dbe3c51"
	b, err := hex.DecodeString(saved)
	if err != nil {
		t.Fatal(err)
	}
	f, err := LoadAffine(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	z := make([]float64, 2)
	ld, err := f.Forward([]float64{0.5, 0.25}, z)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{-0.35355339059327373, 2.538981798168032}
	for i := range want {
		if math.Abs(z[i]-want[i]) > 1e-15*math.Abs(want[i]) {
			t.Errorf("z = %v, the saved flow gave %v", z, want)
		}
	}
	if ld != -0.2798078939677114 {
		t.Errorf("log|det| = %v, the saved flow gave -0.2798078939677114", ld)
	}
}

func TestAssess(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	draw := func() []float64 {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		return []float64{1 + 2*a, -1 + 0.5*a + 0.5*b}
	}
	x := make([][]float64, 5000)
	for r := range x {
		x[r] = draw()
	}
	held := make([][]float64, 2000)
	for r := range held {
		held[r] = draw()
	}
	f, err := FitAffine(x, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Exact log-density: θ1 = 1 + 2a, θ2 = −1 + a/2 + b/2, |det| = 1.
	logp := func(th []float64) (float64, error) {
		a := (th[0] - 1) / 2
		b := 2 * (th[1] + 1 - 0.5*a)
		return -0.5*a*a - 0.5*b*b - 2*halfLog2Pi - math.Log(2*0.5), nil
	}
	q, err := Assess(f, held, nil, logp, 4000, 1)
	if err != nil {
		t.Fatal(err)
	}
	exact := 0.0
	for _, th := range held {
		l, _ := logp(th)
		exact += l
	}
	exact /= float64(len(held))
	t.Logf("%+v, exact held-out mean %.4f", q, exact)
	if math.Abs(q.HeldOutLogLik-exact) > 0.01 {
		t.Errorf("held-out log-likelihood %.4f, exact %.4f", q.HeldOutLogLik, exact)
	}
	if q.ESSFraction < 0.95 || q.ESSFraction > 1 {
		t.Errorf("ESS fraction %.3f for an almost exact flow", q.ESSFraction)
	}
	if _, err := Assess(f, [][]float64{{1}}, nil, nil, 0, 1); err == nil {
		t.Error("wrong-length held-out sample accepted")
	}
}

func TestAssessEmpty(t *testing.T) {
	f, err := NewAffine([]float64{0}, mat.NewSymDense(1, []float64{1}))
	if err != nil {
		t.Fatal(err)
	}
	if q, err := Assess(f, [][]float64{}, nil, nil, 0, 1); err == nil {
		t.Errorf("empty held-out set: %+v, no error", q)
	}
	if _, err := Assess(f, nil, nil, nil, 0, 1); err == nil {
		t.Error("nothing to assess: no error")
	}
	if _, err := Assess(nil, [][]float64{{1}}, nil, nil, 0, 1); err == nil {
		t.Error("nil flow: no error")
	}
}
