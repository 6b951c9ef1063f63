package checks

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/models/datasets"
)

// Grad returns f's value at x and writes its gradient into grad, ending
// the test on an error.
func Grad(tb testing.TB, f func(x, grad []float64) (float64, error), x, grad []float64) float64 {
	tb.Helper()
	v, err := f(x, grad)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// CentralGradient is the central-difference gradient of f at x with the
// given step (0: gonum's default); a point where f fails counts as NaN.
func CentralGradient(f func(x []float64) (float64, error), x []float64, step float64) []float64 {
	return fd.Gradient(nil, func(x []float64) float64 {
		v, err := f(x)
		if err != nil {
			return math.NaN()
		}
		return v
	}, x, &fd.Settings{Formula: fd.Central, Step: step})
}

// Bijection is a map with a log-determinant both ways, as flows and
// transports have.
type Bijection interface {
	Forward(x, z []float64) (float64, error)
	Inverse(z, x []float64) (float64, error)
}

// RoundTrip maps x forward into z and z back into back, returning the two
// log-determinants; an error ends the test.
func RoundTrip(tb testing.TB, f Bijection, x, z, back []float64) (ldForward, ldInverse float64) {
	tb.Helper()
	ldForward, err := f.Forward(x, z)
	if err != nil {
		tb.Fatal(err)
	}
	ldInverse, err = f.Inverse(z, back)
	if err != nil {
		tb.Fatal(err)
	}
	return ldForward, ldInverse
}

// Size is the size of a statistical test (draws, steps, replications):
// long normally, short under go test -short.
func Size(long, short int) int {
	if testing.Short() {
		return short
	}
	return long
}

// CorrelatedGaussian returns rows draws of θ_i = z_i + 0.5·z_{i−1}, z
// standard normal: stand-ins for posterior draws of dimension n.
func CorrelatedGaussian(n, rows int, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([][]float64, rows)
	for r := range x {
		x[r] = make([]float64, n)
		prev := 0.0
		for i := range x[r] {
			z := rng.NormFloat64()
			x[r][i] = z + 0.5*prev
			prev = z
		}
	}
	return x
}

// ConfigDataLoads checks an experiment's data loader, datasets.Load of the
// embedded file named embedded: a copy of that file on disk and the
// embedded file read the same, each is named as what it is, and an absent
// file is an error.
func ConfigDataLoads[T any](t *testing.T, embedded string, load func(path string) (T, string, error)) {
	t.Helper()
	raw, err := datasets.ReadFile(embedded)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "data.csv")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile, name, err := load(path)
	if err != nil || name != path {
		t.Fatalf("from file: %v, name %q", err, name)
	}
	fromEmbedded, name, err := load("")
	if err != nil || name != "embedded:"+embedded {
		t.Fatalf("embedded: %v, name %q", err, name)
	}
	if !reflect.DeepEqual(fromFile, fromEmbedded) {
		t.Error("file and embedded data differ")
	}
	if _, _, err := load(filepath.Join(t.TempDir(), "absent.csv")); err == nil {
		t.Error("absent file: no error")
	}
}

// UTF16 encodes s as UTF-16 little-endian with a byte-order mark, as
// spreadsheet programs save "Unicode text": the data-file tests check that
// readers refuse it by name. Runes beyond one byte are not needed there.
func UTF16(s string) string {
	b := []byte{0xFF, 0xFE}
	for _, r := range s {
		b = append(b, byte(r), 0)
	}
	return string(b)
}

// SameDensity checks that two log-densities with gradients agree at x,
// value and every gradient entry within tol relative to max(1, |b|), and
// returns a's value and gradient (ga). label names the pair in errors.
func SameDensity(tb testing.TB, label string, a, b func(x, grad []float64) (float64, error), x, ga []float64, tol float64) float64 {
	tb.Helper()
	gb := make([]float64, len(ga))
	la, lb := Grad(tb, a, x, ga), Grad(tb, b, x, gb)
	if math.Abs(la-lb) > tol*math.Max(1, math.Abs(lb)) {
		tb.Errorf("%s: log-density %.15g, other %.15g", label, la, lb)
	}
	for i := range ga {
		if math.Abs(ga[i]-gb[i]) > tol*math.Max(1, math.Abs(gb[i])) {
			tb.Errorf("%s: ∂/∂x%d = %.15g, other %.15g", label, i, ga[i], gb[i])
		}
	}
	return la
}

// LogMeanExp is the estimate trj's SMC pilots report from independent
// runs' log evidences lz: the log of their mean evidence and its
// delta-method standard error.
func LogMeanExp(lz []float64) (float64, float64) {
	top := lz[0]
	for _, v := range lz {
		top = max(top, v)
	}
	w := make([]float64, len(lz))
	for i, v := range lz {
		w[i] = math.Exp(v - top)
	}
	m, sd := stat.MeanStdDev(w, nil)
	return top + math.Log(m), sd / math.Sqrt(float64(len(w))) / m
}
