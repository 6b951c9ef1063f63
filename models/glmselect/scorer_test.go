package glmselect

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/ppl"
)

// scorerDesign is a regression of n rows on p columns in varied units,
// column 5 an exact copy of column 2 (up to scale and shift), y from
// columns 0, 2 and 7.
func scorerDesign(n, p int) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(5, 6))
	X := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := range n {
		for j := range p {
			X.Set(i, j, float64(j+1)*rng.NormFloat64()+float64(j))
		}
		X.Set(i, 5, 3*X.At(i, 2)-1)
		y[i] = 10 + 0.8*X.At(i, 0) - 0.4*X.At(i, 2) + 0.2*X.At(i, 7) + rng.NormFloat64()
	}
	return X, y
}

// TestScorerMatchesEvidence checks the scorer's kept-statistics values
// against Evidence's one model at a time: Score exactly (to rounding),
// Flips and Swaps to the fast logarithm's precision, and −Inf exactly
// where a model holds both copies.
func TestScorerMatchesEvidence(t *testing.T) {
	const n, p = 40, 12
	X, y := scorerDesign(n, p)
	for _, prior := range []GaussianPrior{GPrior{}, BRIC{}, GPrior{G: 3}} {
		t.Run(prior.String(), func(t *testing.T) {
			set := &Settings{Prior: prior}
			sp, err := Gaussian(X, y, set)
			if err != nil {
				t.Fatal(err)
			}
			e, err := NewEvidence(X, y, set)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := sp.NewScorer()
			if err != nil {
				t.Fatal(err)
			}
			ev := func(idx []int) float64 {
				tm, err := ppl.NewTerms(p, idx...)
				if err != nil {
					t.Fatal(err)
				}
				v, err := e.LogEvidence(tm)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			near := func(what string, got, want, tol float64) {
				t.Helper()
				if math.IsInf(want, -1) != math.IsInf(got, -1) || (!math.IsInf(want, -1) && math.Abs(got-want) > tol) {
					t.Errorf("%s = %v, Evidence %v", what, got, want)
				}
			}
			flip, row := make([]float64, p), make([]float64, p)
			for _, act := range [][]int{{}, {0}, {2, 7}, {0, 2, 7}, {1, 3, 4, 8, 9}, {0, 2, 3, 6, 7, 10, 11}} {
				self, err := sc.Score(act)
				if err != nil {
					t.Fatal(err)
				}
				near("Score", self, ev(act), 1e-9)
				sc.Flips(flip)
				for j := range p {
					nb := flipped(act, j)
					near("Flips", flip[j], ev(nb), 1e-6)
				}
				for r, out := range act {
					sc.Swaps(r, row)
					near("Swaps' own", row[out], self, 1e-6)
					for j := range p {
						if contains(act, j) {
							continue
						}
						nb := flipped(flipped(act, out), j)
						near("Swaps", row[j], ev(nb), 1e-6)
					}
				}
			}
		})
	}
}

func flipped(act []int, j int) []int {
	var out []int
	in := false
	for _, a := range act {
		if a == j {
			in = true
			continue
		}
		if !in && a > j {
			out = append(out, j)
			in = true
		}
		out = append(out, a)
	}
	if !in {
		out = append(out, j)
	}
	return out
}

func contains(act []int, j int) bool {
	for _, a := range act {
		if a == j {
			return true
		}
	}
	return false
}

// TestScorerDraws checks the scorer's exact posterior draws of one model
// against Evidence's closed-form posterior means and variances of its
// coefficients, within 4 standard errors of 20,000 draws.
func TestScorerDraws(t *testing.T) {
	const n, p, draws = 40, 12, 20000
	X, y := scorerDesign(n, p)
	sp, err := Gaussian(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEvidence(X, y, nil)
	if err != nil {
		t.Fatal(err)
	}
	act := []int{0, 2, 7}
	mean, vr := make([]float64, 3), make([]float64, 3)
	if _, err := e.fit(act, mean, vr); err != nil {
		t.Fatal(err)
	}
	sc, _ := sp.NewScorer()
	if _, err := sc.Score(act); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	theta := make([]float64, len(act)+2)
	var s, q [3]float64
	var ybar, ybar2 float64
	for range draws {
		if err := sc.Draw(rng, theta); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			s[i] += theta[1+i]
			q[i] += theta[1+i] * theta[1+i]
		}
		ybar += theta[0]
		ybar2 += theta[0] * theta[0]
	}
	for i := range 3 {
		m := s[i] / draws
		v := q[i]/draws - m*m
		if z := (m - mean[i]) / math.Sqrt(vr[i]/draws); math.Abs(z) > 4 {
			t.Errorf("coefficient %d: mean of draws %v, closed form %v (z = %.1f)", act[i], m, mean[i], z)
		}
		// The sample variance's standard error is about v√(2/draws).
		if z := (v - vr[i]) / (vr[i] * math.Sqrt(2.0/draws)); math.Abs(z) > 4 {
			t.Errorf("coefficient %d: variance of draws %v, closed form %v (z = %.1f)", act[i], v, vr[i], z)
		}
	}
	var want float64
	for _, v := range y {
		want += v
	}
	// The intercept's posterior mean is ȳ exactly.
	got := ybar / draws
	if z := (got - want/n) / math.Sqrt((ybar2/draws-got*got)/draws); math.Abs(z) > 4 {
		t.Errorf("intercept: mean of draws %v, ȳ %v (z = %.1f)", got, want/n, z)
	}
	if err := sc.Draw(rng, make([]float64, 2)); err == nil {
		t.Error("a draw into the wrong length was accepted")
	}
	if _, err := sc.Score([]int{2, 5}); err != nil {
		t.Fatal(err)
	}
	if err := sc.Draw(rng, make([]float64, 4)); err == nil {
		t.Error("a draw from a model outside the support was accepted")
	}
}
