package pipeline_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl/diag"
)

// ar1 returns n steps of a stationary AR(1) series with coefficient phi
// and unit marginal variance around mean mu.
func ar1(rng *rand.Rand, n int, phi, mu float64) []float64 {
	x := make([]float64, n)
	v := rng.NormFloat64()
	for i := range x {
		x[i] = mu + v
		v = phi*v + math.Sqrt(1-phi*phi)*rng.NormFloat64()
	}
	return x
}

// TestEstimateMeanUnequalLengths checks the branch of chains of different
// lengths (an interrupted run) against a direct computation of its rule:
// P over every step, the MCSE the larger of the step-weighted chains' own
// MCSEs and the spread of their means, R̂ and ESS on the chains cut to the
// shortest.
func TestEstimateMeanUnequalLengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := [][]float64{ar1(rng, 4000, 0.6, 0.3), ar1(rng, 700, 0.6, 0.3), ar1(rng, 1500, 0.6, 0.3)}
	e := pipeline.EstimateMean(x)

	var sum float64
	n := 0
	for _, c := range x {
		n += len(c)
		sum += floats(c)
	}
	var v float64
	means := make([]float64, len(x))
	cut := make([][]float64, len(x))
	for i, c := range x {
		se, err := diag.MCSEMean([][]float64{c})
		if err != nil {
			t.Fatal(err)
		}
		w := float64(len(c)) / float64(n)
		v += w * w * se * se
		means[i] = stat.Mean(c, nil)
		cut[i] = c[:700]
	}
	mcse := max(math.Sqrt(v), stat.StdDev(means, nil)/math.Sqrt(3))
	rhat, err := diag.Rhat(cut)
	if err != nil {
		t.Fatal(err)
	}
	ess, err := diag.ESSBulk(cut)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
	if !near(e.P, sum/float64(n)) || !near(e.MCSE, mcse) || !near(e.Rhat, rhat) || !near(e.ESS, ess) || e.Steps != n || !e.Mixed {
		t.Errorf("EstimateMean = %+v; direct: P %v, MCSE %v, R̂ %v, ESS %v, %d steps", e, sum/float64(n), mcse, rhat, ess, n)
	}
}

// TestEstimateMeanUnequalLengthsCovers: over independent replicates of
// chains of different lengths, P ± 2 MCSE covers the true mean at least
// as often as a 95% interval should, within 4 binomial standard errors.
func TestEstimateMeanUnequalLengthsCovers(t *testing.T) {
	const reps = 400
	rng := rand.New(rand.NewPCG(3, 4))
	covered := 0
	for range reps {
		e := pipeline.EstimateMean([][]float64{ar1(rng, 2000, 0.5, 0), ar1(rng, 300, 0.5, 0)})
		if math.Abs(e.P) <= 2*e.MCSE {
			covered++
		}
	}
	low := 0.954 - 4*math.Sqrt(0.954*0.046/reps)
	if got := float64(covered) / reps; got < low {
		t.Errorf("P ± 2 MCSE covered the mean in %.3f of %d replicates, want at least %.3f", got, reps, low)
	}
}

func floats(c []float64) float64 {
	var s float64
	for _, v := range c {
		s += v
	}
	return s
}
