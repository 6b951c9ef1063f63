package kernels

import (
	"context"
	"testing"
	"math"
)

func TestMineDbgZ(t *testing.T) {
	alpha := []float64{0.5, 1, 2, 5, 20}
	mean, vari := logGammaMoments(alpha)
	for _, mk := range []MetricKind{DiagMetric, DenseMetric, UnitMetric} {
	var zs []float64
	sum := 0.0
	for seed := uint64(1); seed < 21; seed++ {
		res, _ := Sample(context.Background(), func(int) (Target, error) { return logGamma{alpha}, nil }, nil, &SampleSettings{
			Chains: 4, Warmup: 1000, Draws: 5000, Seed: seed, NUTSAdapt: NUTSAdaptConfig{Metric: mk}})
		for j := range mean {
			m := pooledMoments(chainDraws(res), 5, j, mean[j])
			zs = append(zs, (m.mean-mean[j])/m.mcseMean, (m.vari-vari[j])/m.mcseVar)
			sum += (m.mean-mean[j])/m.mcseMean
		}
	}
	s2, mx := 0.0, 0.0
	for _, z := range zs { s2 += z*z; mx = max(mx, math.Abs(z)) }
	t.Logf("%v: rms z %.3f max %.3f mean z(mean) %.3f n %d", mk, math.Sqrt(s2/float64(len(zs))), mx, sum/100, len(zs))
	}
}
