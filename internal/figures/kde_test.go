package figures

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/integrate"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot/plotter"
)

// TestKDEIntegratesToOne checks the density helper against the two moments a
// Gaussian KDE must reproduce: total mass 1 and mean equal to the sample mean.
func TestKDEIntegratesToOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 0))
	for _, n := range []int{2, 7, 200} {
		data := make([]float64, n)
		for i := range data {
			// A skewed, bimodal sample so the test is not just a Gaussian.
			if i%3 == 0 {
				data[i] = 3 + 0.2*rng.NormFloat64()
			} else {
				data[i] = rng.ExpFloat64()
			}
		}
		sort.Float64s(data)
		h := silverman(data)
		if !(h > 0) {
			t.Fatalf("n=%d: bandwidth %v", n, h)
		}
		// ±10 bandwidths past the data leaves mass < 1e-22 outside.
		grid := make([]float64, 20001)
		floats.Span(grid, data[0]-10*h, data[n-1]+10*h)
		dens := make([]float64, len(grid))
		gaussianKDE(dens, grid, data, h)
		mass := integrate.Trapezoidal(grid, dens)
		if math.Abs(mass-1) > 1e-6 {
			t.Errorf("n=%d: ∫KDE = %v, want 1", n, mass)
		}
		yf := make([]float64, len(grid))
		for i := range yf {
			yf[i] = grid[i] * dens[i]
		}
		if m, want := integrate.Trapezoidal(grid, yf), stat.Mean(data, nil); math.Abs(m-want) > 1e-6 {
			t.Errorf("n=%d: ∫y·KDE = %v, want sample mean %v", n, m, want)
		}
	}
}

func TestSilverman(t *testing.T) {
	if h := silverman([]float64{1}); h != 0 {
		t.Errorf("one point: h = %v, want 0", h)
	}
	if h := silverman([]float64{2, 2, 2}); h != 0 {
		t.Errorf("constant: h = %v, want 0", h)
	}
	// For a standard normal sample σ̂ ≈ 1 < IQR/1.34 ≈ 1.0067, so
	// h ≈ 0.9·n^(-1/5); σ̂ has relative standard error 1/√(2n).
	const n = 10000
	rng := rand.New(rand.NewPCG(1, 1))
	data := make([]float64, n)
	for i := range data {
		data[i] = rng.NormFloat64()
	}
	sort.Float64s(data)
	h := silverman(data)
	want := 0.9 * math.Pow(n, -0.2)
	if tol := 4 / math.Sqrt(2*n); math.Abs(h/want-1) > tol {
		t.Errorf("normal sample: h = %v, want %v within %.3g relative", h, want, tol)
	}
	// Scale equivariance: h(a·x) = a·h(x).
	scaled := make([]float64, n)
	floats.ScaleTo(scaled, 3, data)
	if hs := silverman(scaled); math.Abs(hs-3*h) > 1e-12*hs {
		t.Errorf("scaled: h = %v, want %v", hs, 3*h)
	}
	// A heavy-tailed sample with an outlier uses IQR/1.34 instead of σ̂.
	x := []float64{-1, -0.5, 0, 0.5, 1, 100}
	iqr := stat.Quantile(0.75, stat.LinInterp, x, nil) - stat.Quantile(0.25, stat.LinInterp, x, nil)
	if got, want := silverman(x), 0.9*iqr/1.34*math.Pow(6, -0.2); math.Abs(got-want) > 1e-12 {
		t.Errorf("outlier: h = %v, want %v", got, want)
	}
}

// TestKDE2IntegratesToOne checks that the bivariate density behind the
// scatter contours has total mass 1, with a correlated sample so that the
// off-diagonal bandwidth term matters.
func TestKDE2IntegratesToOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	xys := make(plotter.XYs, 150)
	for i := range xys {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		xys[i] = plotter.XY{X: 2 * a, Y: 0.5 * (0.9*a + math.Sqrt(1-0.81)*b)}
	}
	k, err := newGaussianKDE2(xys)
	if err != nil {
		t.Fatal(err)
	}
	xmin, xmax, ymin, ymax := plotter.XYRange(xys)
	const m = 150
	xs, ys := make([]float64, m), make([]float64, m)
	floats.Span(xs, xmin-3, xmax+3) // > 8 kernel standard deviations past the data
	floats.Span(ys, ymin-1, ymax+1)
	row := make([]float64, m)
	col := make([]float64, m)
	for r, y := range ys {
		for c, x := range xs {
			row[c] = k.at(x, y)
		}
		col[r] = integrate.Trapezoidal(xs, row)
	}
	if mass := integrate.Trapezoidal(ys, col); math.Abs(mass-1) > 1e-3 {
		t.Errorf("∫∫KDE = %v, want 1", mass)
	}
}
