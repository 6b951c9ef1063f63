package trj_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/trjgo/trj"
)

func TestPosteriorProbabilities(t *testing.T) {
	logZ := []float64{-10, -10 + math.Log(3), -40}
	se := []float64{0.1, 0.2, 0.05}
	p, pse, err := trj.PosteriorProbabilities(logZ, se, []float64{1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.25, 0.75, math.Exp(-30) / 4}
	for k := range p {
		if math.Abs(p[k]-want[k]) > 1e-12*want[k] {
			t.Errorf("p[%d] = %g, want %g", k, p[k], want[k])
		}
	}
	// Two models: sd(p₀) = p₀p₁·√(se₀² + se₁²); the third is negligible.
	if w := 0.25 * 0.75 * math.Hypot(0.1, 0.2); math.Abs(pse[0]-w) > 1e-9 {
		t.Errorf("se[0] = %g, want %g", pse[0], w)
	}
	// A rare model's relative SE is that of its log Z against the others'.
	if r, w := pse[2]/p[2], math.Sqrt(0.05*0.05+0.75*0.75*0.2*0.2+0.25*0.25*0.1*0.1); math.Abs(r-w) > 1e-9 {
		t.Errorf("relative se of the rare model %g, want %g", r, w)
	}
	// nil prior is uniform, nil SE exact, and the prior need not sum to 1.
	q, qse, err := trj.PosteriorProbabilities(logZ, nil, nil)
	if err != nil || math.Abs(q[1]-0.75) > 1e-12 || qse[0] != 0 {
		t.Errorf("uniform prior, exact: %v %v %v", q, qse, err)
	}
	q, _, err = trj.PosteriorProbabilities([]float64{0, 0}, nil, []float64{1, 3})
	if err != nil || math.Abs(q[1]-0.75) > 1e-12 {
		t.Errorf("prior 1:3: %v %v", q, err)
	}
	if q, _, err = trj.PosteriorProbabilities([]float64{0, math.Inf(-1)}, nil, nil); err != nil || q[0] != 1 || q[1] != 0 {
		t.Errorf("a model of zero evidence: %v %v", q, err)
	}
}

func TestPosteriorProbabilitiesBadInput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name            string
		logZ, se, prior []float64
	}{
		{"no models", nil, nil, nil},
		{"SE length", []float64{0, 1}, []float64{0.1}, nil},
		{"prior length", []float64{0, 1}, nil, []float64{1}},
		{"NaN log Z", []float64{0, nan}, nil, nil},
		{"+Inf log Z", []float64{0, inf}, nil, nil},
		{"all -Inf", []float64{-inf, -inf}, nil, nil},
		{"negative SE", []float64{0, 1}, []float64{0.1, -1}, nil},
		{"NaN SE", []float64{0, 1}, []float64{0.1, nan}, nil},
		{"zero prior", []float64{0, 1}, nil, []float64{0, 1}},
		{"NaN prior", []float64{0, 1}, nil, []float64{nan, 1}},
		{"Inf prior", []float64{0, 1}, nil, []float64{inf, 1}},
	} {
		if p, se, err := trj.PosteriorProbabilities(c.logZ, c.se, c.prior); err == nil {
			t.Errorf("%s: no error (%v, %v)", c.name, p, se)
		}
	}
}

// PosteriorProbabilities turns log marginal likelihoods from anywhere (here
// two models' log evidences with their standard errors) into model
// probabilities with standard errors.
func ExamplePosteriorProbabilities() {
	p, se, err := trj.PosteriorProbabilities([]float64{-903.21, -905.35}, []float64{0.05, 0.10}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for k := range p {
		fmt.Printf("model %d: %.3f ± %.3f\n", k, p[k], se[k])
	}
	// Output:
	// model 0: 0.895 ± 0.011
	// model 1: 0.105 ± 0.011
}

// TestPosteriorProbabilitiesHugeSE checks that standard errors whose
// squares overflow (1e200) still give the finite delta-method SE, computed
// scaled: SE(p_k) = √(Σ_j (p_k(δ_kj − p_j)·se_j)²), here for two equal
// models p = ½, so each term is ¼·se_j.
func TestPosteriorProbabilitiesHugeSE(t *testing.T) {
	for _, tc := range []struct{ se, want float64 }{
		{1e200, 0.25 * math.Sqrt2 * 1e200},
		{math.MaxFloat64, 0.25 * math.Sqrt2 * math.MaxFloat64},
	} {
		for _, se := range [][]float64{{tc.se, tc.se}, {tc.se, 0}} {
			want := tc.want
			if se[1] == 0 {
				want = 0.25 * tc.se
			}
			p, pse, err := trj.PosteriorProbabilities([]float64{0, 0}, se, nil)
			if err != nil {
				t.Fatalf("se %v: %v", se, err)
			}
			for k := range p {
				if p[k] != 0.5 || !(math.Abs(pse[k]-want) <= 1e-12*want) {
					t.Errorf("se %v: p[%d] = %v ± %v, want 0.5 ± %g", se, k, p[k], pse[k], want)
				}
			}
		}
	}
}
