package kernels_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/kernels"
)

// scaledGaussian is p̃(θ) = exp(logC)·N(θ; mean, diag(sd²)), whose evidence
// is exp(logC).
type scaledGaussian struct {
	mean, sd []float64
	logC     float64
}

func (g scaledGaussian) Dim() int { return len(g.mean) }

func (g scaledGaussian) LogDensityGrad(x, grad []float64) (float64, error) {
	lp := g.logC
	for i, m := range g.mean {
		d := (x[i] - m) / g.sd[i]
		lp += -0.5*d*d - math.Log(g.sd[i]) - 0.5*math.Log(2*math.Pi)
		grad[i] = -d / g.sd[i]
	}
	return lp, nil
}

// evDiagAffine is the transport z = (θ − mean)/sd.
type evDiagAffine struct{ mean, sd []float64 }

func (a evDiagAffine) Dim() int { return len(a.mean) }

func (a evDiagAffine) Forward(theta, z []float64) (float64, error) {
	var ld float64
	for i := range z {
		z[i] = (theta[i] - a.mean[i]) / a.sd[i]
		ld -= math.Log(a.sd[i])
	}
	return ld, nil
}

func (a evDiagAffine) Inverse(z, theta []float64) (float64, error) {
	var ld float64
	for i := range z {
		theta[i] = a.mean[i] + a.sd[i]*z[i]
		ld += math.Log(a.sd[i])
	}
	return ld, nil
}

// ar1Groups returns groups of consecutive draws of a stationary AR(1) chain
// (coefficient rho) whose margin is g's normal: autocorrelated draws like
// a pilot chain's, in batches like the pilot's evaluation groups.
func ar1Groups(rng *rand.Rand, g scaledGaussian, groups, per int, rho float64) [][][]float64 {
	n := len(g.mean)
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	out := make([][][]float64, groups)
	for b := range out {
		for range per {
			d := make([]float64, n)
			for i := range x {
				x[i] = rho*x[i] + math.Sqrt(1-rho*rho)*rng.NormFloat64()
				d[i] = g.mean[i] + g.sd[i]*x[i]
			}
			out[b] = append(out[b], d)
		}
	}
	return out
}

// TestTransportEvidenceCalibration checks the estimate and its jackknife
// standard error against the exact evidence over 20 seeds: with a
// transport off in location and scale (the fitted transports' errors, made
// larger) and autocorrelated target draws (ρ = 0.8, an ESS about a ninth of
// the draws), the z-scores (log Ẑ − log Z)/SE must have sd in [0.7, 1.4]
// and mean within 3 of their standard errors of 0.
func TestTransportEvidenceCalibration(t *testing.T) {
	g := scaledGaussian{mean: []float64{1, -2, 0.5}, sd: []float64{0.5, 2, 1}, logC: -37.25}
	q := evDiagAffine{mean: []float64{1.2, -1.5, 0.5}, sd: []float64{0.7, 1.6, 1.3}}
	var z []float64
	var se float64
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 26))
		draws := ar1Groups(rng, g, 20, 100, 0.8)
		e, err := kernels.TransportEvidence(rng, g, q, draws, nil)
		if err != nil {
			t.Fatal(err)
		}
		if e.NumPost != 2000 || e.NumRef != 2000 || e.Groups != 20 || e.RefOutside != 0 {
			t.Fatalf("seed %d: counts %+v", seed, e)
		}
		z = append(z, (e.LogZ-g.logC)/e.SE)
		se += e.SE / 20
	}
	mean, sd := stat.MeanStdDev(z, nil)
	t.Logf("20 seeds: z mean %.2f, sd %.2f, max |z| %.2f; mean SE %.4f", mean, sd, maxAbsZ(z), se)
	if sd < 0.7 || sd > 1.4 {
		t.Errorf("sd of z-scores %.2f outside [0.7, 1.4]", sd)
	}
	if math.Abs(mean) > 3*sd/math.Sqrt(20) {
		t.Errorf("mean z-score %.2f: biased", mean)
	}
}

// TestTransportEvidenceExact checks one seed to within 4 SE, with the
// exact transport (q the normalised target: every log-ratio log Z, so the
// estimate is exact) and with a poor one.
func TestTransportEvidenceExact(t *testing.T) {
	g := scaledGaussian{mean: []float64{0, 3}, sd: []float64{1, 0.1}, logC: 12.5}
	rng := rand.New(rand.NewPCG(3, 26))
	draws := ar1Groups(rng, g, 10, 200, 0.5)
	e, err := kernels.TransportEvidence(rng, g, evDiagAffine{mean: g.mean, sd: g.sd}, draws, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(e.LogZ-g.logC) > 1e-9 || e.SE > 1e-9 {
		t.Errorf("exact transport: log Z %v ± %v, want %v ± 0", e.LogZ, e.SE, g.logC)
	}
	e, err = kernels.TransportEvidence(rng, g, evDiagAffine{mean: []float64{0.5, 2.9}, sd: []float64{2, 0.05}}, draws, &kernels.EvidenceSettings{RefDraws: 400})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("poor transport: log Z %.4f ± %.4f (exact %.4f), %d iterations", e.LogZ, e.SE, g.logC, e.Iterations)
	if d := math.Abs(e.LogZ - g.logC); d > 4*e.SE || e.NumRef != 4000 {
		t.Errorf("poor transport: log Z %v ± %v, exact %v; %d reference draws", e.LogZ, e.SE, g.logC, e.NumRef)
	}
}

func TestMengWongEvidenceBadInput(t *testing.T) {
	good := kernels.EvidenceGroup{Post: []float64{0, 0.1}, Ref: []float64{0.2, math.Inf(-1)}}
	for name, gs := range map[string][]kernels.EvidenceGroup{
		"one group":   {good},
		"empty ref":   {good, {Post: []float64{1}}},
		"NaN":         {good, {Post: []float64{math.NaN()}, Ref: []float64{0}}},
		"+Inf in ref": {good, {Post: []float64{0}, Ref: []float64{math.Inf(1)}}},
		"disjoint":    {{Post: []float64{0}, Ref: []float64{math.Inf(-1)}}, {Post: []float64{0}, Ref: []float64{math.Inf(-1)}}},
	} {
		if _, err := kernels.MengWongEvidence(gs, nil); !errors.Is(err, kernels.ErrEvidence) {
			t.Errorf("%s: error %v, want ErrEvidence", name, err)
		}
	}
	e, err := kernels.MengWongEvidence([]kernels.EvidenceGroup{good, good}, nil)
	if err != nil || e.RefOutside != 2 {
		t.Errorf("good input: %+v, %v", e, err)
	}
	g := scaledGaussian{mean: []float64{0}, sd: []float64{1}}
	if _, err := kernels.TransportEvidence(rand.New(rand.NewPCG(1, 1)), g, evDiagAffine{mean: []float64{0, 0}, sd: []float64{1, 1}}, [][][]float64{{{0}}, {{0}}}, nil); !errors.Is(err, kernels.ErrDimension) {
		t.Errorf("dimension mismatch: %v", err)
	}
}

func maxAbsZ(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}
