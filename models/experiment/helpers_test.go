package experiment_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"

	"github.com/trjgo/trj/models/experiment"
)

func TestFigureWriterKeepsGoingAfterAFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "figs")
	w, err := experiment.NewFigureWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	w.Write("bad", func(path string) error {
		if strings.HasSuffix(path, ".png") {
			return boom
		}
		return os.WriteFile(path, nil, 0o644)
	})
	w.Write("good", func(path string) error { return os.WriteFile(path, nil, 0o644) })
	want := []string{filepath.Join(dir, "bad.svg"), filepath.Join(dir, "good.png"), filepath.Join(dir, "good.svg")}
	if got := w.Files(); !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	if err := w.Err(); !errors.Is(err, boom) || !strings.Contains(err.Error(), filepath.Join(dir, "bad.png")) {
		t.Errorf("error %v, want boom naming bad.png", err)
	}
	for _, f := range want {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
}

func TestProposalNamesAndAnyFinite(t *testing.T) {
	n := experiment.ProposalNames{"rqma": "RQMA-NF"}
	if n.Name("rqma") != "RQMA-NF" || n.Name("affine") != "affine" {
		t.Errorf("names %q %q", n.Name("rqma"), n.Name("affine"))
	}
	if experiment.AnyFinite(nil) || experiment.AnyFinite([]float64{math.NaN(), math.Inf(1), math.Inf(-1)}) {
		t.Error("AnyFinite true without a finite value")
	}
	if !experiment.AnyFinite([]float64{math.NaN(), 0.5}) {
		t.Error("AnyFinite false with a finite value")
	}
}

func TestCheckProposals(t *testing.T) {
	known := []string{"affine", "rqma"}
	for _, c := range []struct {
		list []string
		want string
	}{
		{nil, ""},
		{[]string{"rqma", "affine"}, ""},
		{[]string{"affine", "exact"}, `x: unknown proposal type "exact" (want one of [affine rqma])`},
		{[]string{"rqma", "rqma"}, `x: proposal type "rqma" listed twice`},
	} {
		got := ""
		if err := experiment.CheckProposals("x", c.list, known); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%v: error %q, want %q", c.list, got, c.want)
		}
	}
}

// gaussian is log N(u; m, s²I) up to a constant.
type gaussian struct {
	m, s float64
	n    int
}

func (g gaussian) Dim() int { return g.n }
func (g gaussian) LogDensity(u []float64) (float64, error) {
	return g.LogDensityGrad(u, make([]float64, len(u)))
}
func (g gaussian) LogDensityGrad(u, grad []float64) (float64, error) {
	var l float64
	for i, x := range u {
		r := (x - g.m) / g.s
		l -= r * r / 2
		grad[i] = -r / g.s
	}
	return l, nil
}

func TestLikelihoodIsPosteriorMinusPrior(t *testing.T) {
	post, prior := gaussian{m: 1, s: 0.5, n: 3}, gaussian{m: 0, s: 2, n: 3}
	l, err := experiment.NewLikelihood(post, prior)
	if err != nil {
		t.Fatal(err)
	}
	u := []float64{0.3, -1.2, 2.5}
	g := make([]float64, 3)
	got, err := l.LogDensityGrad(u, g)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := post.LogDensity(u)
	b, _ := prior.LogDensity(u)
	if v, _ := l.LogDensity(u); math.Abs(got-(a-b)) > 1e-12 || v != got {
		t.Errorf("log-likelihood %g (LogDensity %g), want %g", got, v, a-b)
	}
	want := fd.Gradient(nil, func(x []float64) float64 { v, _ := l.LogDensity(x); return v }, u, nil)
	for i := range g {
		if math.Abs(g[i]-want[i]) > 1e-6*(1+math.Abs(want[i])) {
			t.Errorf("gradient[%d] %g, finite differences %g", i, g[i], want[i])
		}
	}
	if _, err := experiment.NewLikelihood(post, gaussian{n: 2, s: 1}); err == nil {
		t.Error("dimension mismatch accepted")
	}
}
