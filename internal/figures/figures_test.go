package figures

import (
	"bytes"
	"errors"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/integrate"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// runningMeans returns n running means of Bernoulli(p) draws from seed, a
// stand-in for a chain's running model-probability estimate.
func runningMeans(seed uint64, n int, p float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	var s float64
	for i := range out {
		if rng.Float64() < p {
			s++
		}
		out[i] = s / float64(i+1)
	}
	return out
}

func testSeries() map[string][][]float64 {
	series := make(map[string][][]float64)
	for t, name := range []string{"affine", "rqma", "exact"} {
		for c := 0; c < 5; c++ {
			series[name] = append(series[name], runningMeans(uint64(10*t+c), 5000, 0.75))
		}
	}
	return series
}

func testGroups(seed uint64) []Group {
	rng := rand.New(rand.NewPCG(seed, 2))
	var gs []Group
	for i, name := range []string{"indep. RJ", "affine TRJ", "RQMA-NF TRJ", "RQMA-CNF CTRJ"} {
		sd := 0.08 / float64(i+1)
		vals := make([]float64, 200)
		for j := range vals {
			vals[j] = 0.88 + sd*rng.NormFloat64()
		}
		gs = append(gs, Group{Name: name, Values: vals})
	}
	return gs
}

func testScatterPanels() []ScatterPanel {
	rng := rand.New(rand.NewPCG(7, 3))
	cloud := func(n int, sx, sy, rho float64) []Point {
		pts := make([]Point, n)
		for i := range pts {
			a, b := rng.NormFloat64(), rng.NormFloat64()
			pts[i] = Point{X: sx * a, Y: sy * (rho*a + math.Sqrt(1-rho*rho)*b)}
		}
		return pts
	}
	exact := cloud(1500, 1, 1, 0.6)
	return []ScatterPanel{
		{Title: "source (2 factors)", XLabel: "β₂₁", YLabel: "β₃₁", Layers: []ScatterLayer{{Name: "source", Points: cloud(300, 1, 1, 0.6)}}},
		{Title: "independence RJ", XLabel: "β₂₁", YLabel: "β₃₁", Background: exact, BackgroundName: "exact", Layers: []ScatterLayer{{Name: "proposed", Points: cloud(1500, 2, 2, 0)}}},
		{Title: "affine TRJ", XLabel: "β₂₁", YLabel: "β₃₁", Background: exact, BackgroundName: "exact", Layers: []ScatterLayer{{Name: "proposed", Points: cloud(1500, 1.2, 1.2, 0.5)}}},
		{Title: "RQMA-NF TRJ", XLabel: "β₂₁", YLabel: "β₃₁", Background: exact, BackgroundName: "exact", Contours: true, Layers: []ScatterLayer{{Name: "proposed", Points: cloud(1500, 1, 1, 0.6)}}},
	}
}

// checkPNG decodes the PNG at path and checks its pixel size.
func checkPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Errorf("%s: size %dx%d, want %dx%d", path, b.Dx(), b.Dy(), w, h)
	}
}

func checkSVG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || !bytes.Contains(b, []byte("<svg")) || !bytes.HasSuffix(bytes.TrimSpace(b), []byte("</svg>")) {
		t.Errorf("%s: not a complete SVG document (%d bytes)", path, len(b))
	}
}

// sized are the options every rendering test uses: 6in×4in at 100 dpi is
// 600×400 pixels.
var sized = []Option{WithSize(6*vg.Inch, 4*vg.Inch), WithDPI(100)}

// render calls draw for a PNG and an SVG in a temporary directory and checks
// both files.
func render(t *testing.T, name string, draw func(path string) (int, error)) (png, svg string) {
	t.Helper()
	dir := t.TempDir()
	png, svg = filepath.Join(dir, name+".png"), filepath.Join(dir, name+".SVG")
	for _, p := range []string{png, svg} {
		n, err := draw(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if n != 0 {
			t.Errorf("%s: skipped %d values, want 0", p, n)
		}
	}
	checkPNG(t, png, 600, 400)
	checkSVG(t, svg)
	return png, svg
}

func TestRunningEstimates(t *testing.T) {
	series := testSeries()
	render(t, "panels", func(p string) (int, error) {
		return RunningEstimates(p, "π(k=2 | y): running estimates", series, 0.75, append(sized, WithOrder("affine", "rqma"))...)
	})
	render(t, "overlay", func(p string) (int, error) {
		return RunningEstimates(p, "", series, 0.75, append(sized, Overlay(), WithYLabel("π̂(k=2)"))...)
	})
	render(t, "notruth", func(p string) (int, error) {
		return RunningEstimates(p, "no truth", series, math.NaN(), append(sized, WithColumns(3))...)
	})
}

func TestViolins(t *testing.T) {
	render(t, "violins", func(p string) (int, error) {
		return Violins(p, "two-factor model probability (BBE)", testGroups(1), 0.88, sized...)
	})
	panels := make([]ViolinPanel, 4)
	for i := range panels {
		panels[i] = ViolinPanel{Title: "k = " + string(rune('A'+i)), Groups: testGroups(uint64(i)), Truth: 0.88}
	}
	panels[3].Truth = math.NaN()
	// A constant group and a single-value group have no density but must draw.
	panels[2].Groups = append(panels[2].Groups, Group{Name: "constant", Values: []float64{0.9, 0.9, 0.9}}, Group{Name: "one", Values: []float64{0.85}})
	render(t, "panels", func(p string) (int, error) {
		return ViolinPanels(p, "model probabilities", panels, sized...)
	})
}

func TestScatter(t *testing.T) {
	render(t, "scatter", func(p string) (int, error) {
		return Scatter(p, "2 → 3 factor proposals", testScatterPanels(), sized...)
	})
}

// TestDefaultSize checks that without WithSize the figure grows with the
// panel grid at the default resolution.
func TestDefaultSize(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.png")
	if _, err := Scatter(p, "", testScatterPanels()[:2], WithColumns(2)); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, p, int(math.Round(2*3.6*DefaultDPI)), int(math.Round(3.4*DefaultDPI)))
}

// TestSkipsNonFinite checks that non-finite values are skipped and counted.
func TestSkipsNonFinite(t *testing.T) {
	dir := t.TempDir()
	series := testSeries()
	series["affine"][0][10] = math.NaN()
	series["affine"][1][4999] = math.Inf(1)
	series["exact"][2][0] = math.NaN()
	n, err := RunningEstimates(filepath.Join(dir, "r.png"), "", series, 0.75, sized...)
	if err != nil || n != 3 {
		t.Errorf("RunningEstimates: skipped %d, err %v; want 3, nil", n, err)
	}
	gs := testGroups(1)
	gs[0].Values[3] = math.NaN()
	gs[2].Values[0] = math.Inf(-1)
	n, err = Violins(filepath.Join(dir, "v.svg"), "", gs, 0.88, sized...)
	if err != nil || n != 2 {
		t.Errorf("Violins: skipped %d, err %v; want 2, nil", n, err)
	}
	ps := testScatterPanels()
	// The background is shared by three panels: one NaN counts three times.
	ps[1].Background[5].Y = math.NaN()
	ps[3].Layers[0].Points[0].X = math.Inf(1)
	n, err = Scatter(filepath.Join(dir, "s.png"), "", ps, sized...)
	if err != nil || n != 4 {
		t.Errorf("Scatter: skipped %d, err %v; want 4, nil", n, err)
	}
}

// TestDeterministic checks that the same input gives byte-identical files.
func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	figs := map[string]func(string) (int, error){
		"running": func(p string) (int, error) { return RunningEstimates(p, "t", testSeries(), 0.75, sized...) },
		"violins": func(p string) (int, error) { return Violins(p, "t", testGroups(3), 0.88, sized...) },
		"scatter": func(p string) (int, error) { return Scatter(p, "t", testScatterPanels(), sized...) },
	}
	for _, c := range []struct{ fig, ext string }{{"running", ".png"}, {"running", ".svg"}, {"violins", ".png"}, {"violins", ".svg"}, {"scatter", ".png"}, {"scatter", ".svg"}} {
		ext := c.fig + c.ext
		var out [2][]byte
		for i := range out {
			p := filepath.Join(dir, string(rune('0'+i))+ext)
			if _, err := figs[c.fig](p); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = b
		}
		if !bytes.Equal(out[0], out[1]) {
			t.Errorf("%s output differs between identical calls", ext)
		}
	}
}

// TestConcurrent draws figures from several goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ext := []string{".png", ".svg"}[i%2]
			_, errs[i] = Violins(filepath.Join(dir, "c"+string(rune('0'+i))+ext), "c", testGroups(uint64(i)), 0.88, sized...)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("goroutine %d: %v", i, err)
		}
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "x.png")
	nanChain := map[string][][]float64{"a": {{math.NaN(), math.NaN()}}}
	tests := []struct {
		name string
		call func() (int, error)
		want error  // nil: any error
		msg  string // substring of the message
	}{
		{"unknown ext", func() (int, error) { return Violins(filepath.Join(dir, "x.pdf"), "", testGroups(1), 0.5) }, ErrUnknownFormat, "x.pdf"},
		{"no ext", func() (int, error) { return Scatter(filepath.Join(dir, "x"), "", testScatterPanels()) }, ErrUnknownFormat, ""},
		{"empty series", func() (int, error) { return RunningEstimates(png, "", nil, 0.5) }, ErrEmpty, "no series"},
		{"no chains", func() (int, error) { return RunningEstimates(png, "", map[string][][]float64{"a": nil}, 0.5) }, ErrEmpty, `"a" has no chains`},
		{"empty chain", func() (int, error) { return RunningEstimates(png, "", map[string][][]float64{"a": {{}}}, 0.5) }, ErrEmpty, "chain 0"},
		{"all-NaN chain", func() (int, error) { return RunningEstimates(png, "", nanChain, 0.5) }, ErrEmpty, "no finite value"},
		{"empty name", func() (int, error) { return RunningEstimates(png, "", map[string][][]float64{"": {{1}}}, 0.5) }, nil, "empty proposal name"},
		{"inf truth", func() (int, error) { return RunningEstimates(png, "", testSeries(), math.Inf(1)) }, nil, "truth is +Inf"},
		{"bad order", func() (int, error) { return RunningEstimates(png, "", testSeries(), 0.5, WithOrder("afine")) }, nil, `"afine"`},
		{"no groups", func() (int, error) { return Violins(png, "", nil, 0.5) }, ErrEmpty, "no groups"},
		{"no panels", func() (int, error) { return ViolinPanels(png, "", nil) }, ErrEmpty, "no panels"},
		{"NaN group", func() (int, error) {
			return Violins(png, "", []Group{{Name: "a", Values: []float64{math.NaN()}}}, 0.5)
		}, ErrEmpty, `group "a"`},
		{"unnamed group", func() (int, error) { return Violins(png, "", []Group{{Values: []float64{1}}}, 0.5) }, nil, "empty name"},
		{"no scatter panels", func() (int, error) { return Scatter(png, "", nil) }, ErrEmpty, "no panels"},
		{"empty scatter panel", func() (int, error) {
			return Scatter(png, "", []ScatterPanel{{Title: "p", Layers: []ScatterLayer{{Points: []Point{{math.NaN(), 1}}}}}})
		}, ErrEmpty, `panel 0 ("p")`},
		{"collinear contours", func() (int, error) {
			line := []Point{{0, 0}, {1, 2}, {2, 4}, {3, 6}}
			return Scatter(png, "", []ScatterPanel{{Title: "p", Background: line, Contours: true}})
		}, nil, "singular covariance"},
		{"bad size", func() (int, error) { return Violins(png, "", testGroups(1), 0.5, WithSize(0, 1)) }, nil, "size"},
		{"bad dpi", func() (int, error) { return Violins(png, "", testGroups(1), 0.5, WithDPI(-1)) }, nil, "dpi"},
		{"bad columns", func() (int, error) { return Violins(png, "", testGroups(1), 0.5, WithColumns(0)) }, nil, "columns"},
		{"bad max points", func() (int, error) { return Violins(png, "", testGroups(1), 0.5, WithMaxLinePoints(1)) }, nil, "max line points"},
		{"missing dir", func() (int, error) { return Violins(filepath.Join(dir, "no", "x.png"), "", testGroups(1), 0.5) }, nil, "no such file"},
	}
	for _, tt := range tests {
		_, err := tt.call()
		switch {
		case err == nil:
			t.Errorf("%s: no error", tt.name)
		case tt.want != nil && !errors.Is(err, tt.want):
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.want)
		case !strings.Contains(err.Error(), tt.msg):
			t.Errorf("%s: error %q does not mention %q", tt.name, err, tt.msg)
		}
	}
	if _, err := os.Stat(png); !os.IsNotExist(err) {
		t.Errorf("a failed call left %s behind (stat: %v)", png, err)
	}
}

func TestMarginal(t *testing.T) {
	pts, err := Marginal([][]float64{{1, 2, 3}, {4, 5, 6}}, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Point{{3, 1}, {6, 4}}; pts[0] != want[0] || pts[1] != want[1] {
		t.Errorf("Marginal = %v, want %v", pts, want)
	}
	if _, err := Marginal([][]float64{{1, 2}}, 0, 2); err == nil {
		t.Error("Marginal out of range: no error")
	}
	if _, err := Marginal([][]float64{{1, 2}}, -1, 0); err == nil {
		t.Error("Marginal negative: no error")
	}
}

func TestThin(t *testing.T) {
	idx := thin(100000, 2000)
	if len(idx) != 2000 || idx[0] != 0 || idx[len(idx)-1] != 99999 {
		t.Fatalf("thin: len %d, first %d, last %d", len(idx), idx[0], idx[len(idx)-1])
	}
	for i := 1; i < len(idx); i++ {
		if idx[i] <= idx[i-1] {
			t.Fatalf("thin: not increasing at %d", i)
		}
	}
	if got := thin(5, 2000); len(got) != 5 {
		t.Errorf("thin(5) has %d indices", len(got))
	}
	pts := make([]Point, 12000)
	xys, bad := finitePoints(pts, 5000)
	if bad != 0 || len(xys) > 5000 || len(xys) < 2500 {
		t.Errorf("finitePoints: %d points, %d bad", len(xys), bad)
	}
}

// TestOverflowingSpan checks that finite data whose span overflows float64
// is an error: gonum/plot's tick search would otherwise never return.
func TestOverflowingSpan(t *testing.T) {
	dir := t.TempDir()
	huge := []float64{1e308, -1e308, 0}
	if _, err := Violins(filepath.Join(dir, "v.png"), "", []Group{{Name: "a", Values: huge}}, math.NaN()); err == nil {
		t.Error("Violins: overflowing span accepted")
	}
	if _, err := RunningEstimates(filepath.Join(dir, "r.png"), "", map[string][][]float64{"a": {huge}}, math.NaN()); err == nil {
		t.Error("RunningEstimates: overflowing span accepted")
	}
	pts := []Point{{X: 1e308, Y: 0}, {X: -1e308, Y: 1}}
	if _, err := Scatter(filepath.Join(dir, "s.png"), "", []ScatterPanel{{Layers: []ScatterLayer{{Points: pts}}}}); err == nil {
		t.Error("Scatter: overflowing span accepted")
	}
}

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
