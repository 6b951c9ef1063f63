package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/sas"
)

func TestTRJWithNUTSWithin(t *testing.T) {
	// Imperfect transports, so the within-model moves matter; NUTS targets
	// are the normalised components, which omit log p(k). The error bar
	// comes from independent chains (NUTS with a coarse step is sticky in
	// the tails, where single-chain batch means understate the error).
	tg := sas.Paper()
	reps, n := checks.Size(6, 4), checks.Size(6000, 4000)
	est := make([]float64, reps)
	moved := 0
	for r := range est {
		var nuts []*kernels.NUTS
		for k := 0; k < 2; k++ {
			nk, err := kernels.NewNUTS(tg.Component(k).Clone(), 0.1, nil)
			if err != nil {
				t.Fatal(err)
			}
			nuts = append(nuts, nk)
		}
		w, err := kernels.NewNUTSWithin(nuts)
		if err != nil {
			t.Fatal(err)
		}
		k, s := startTRJ(t, kernels.TRJConfig{Target: tg, Transports: imperfectSAS(), Jump: kernels.UniformJumps(2), Within: w, Alternate: true}, 0, []float64{-3})
		rng := rand.New(rand.NewPCG(41, uint64(r)))
		in := 0
		for i := 0; i < n; i++ {
			var info kernels.RJInfo
			s, info = k.Step(rng, s)
			if info.WithinAccepted {
				moved++
			}
			if s.Model == 1 {
				in++
			}
			if i%997 == 0 {
				want, _ := tg.LogDensity(s.Model, s.Theta)
				if math.Abs(want-s.LogDensity) > 1e-8*(1+math.Abs(want)) {
					t.Fatalf("step %d: stored log π %v, recomputed %v", i, s.LogDensity, want)
				}
			}
		}
		est[r] = float64(in) / float64(n)
	}
	m, sd := stat.MeanStdDev(est, nil)
	se := sd / math.Sqrt(float64(reps))
	t.Logf("TRJ + NUTS: π̂(k=2) = %.4f ± %.4f over %d chains, within-model moves %d of %d", m, se, reps, moved, n*reps)
	if math.Abs(m-0.75) > 4*se {
		t.Errorf("π̂(k=2) = %v, want 0.75 ± 4·%v", m, se)
	}
	if moved < n*reps/2 {
		t.Errorf("NUTS moved only %d times in %d steps", moved, n*reps)
	}
}
