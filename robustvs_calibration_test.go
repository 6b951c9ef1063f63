package trj_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/robustvs"
	"github.com/trjgo/trj/ppl"
)

// robustvsSettings are the settings of one proposal type on the robust
// variable-selection example: SMC pilots (the posteriors are multimodal),
// then TRJ with affine or RQMA flows, CTRJ with a conditional RQMA flow, or
// the independent-auxiliary proposal (CTRJ, identity map, ν the prior).
func robustvsSettings(d *robustvs.Data, kind string, seed uint64, from *trj.Result) (*ppl.Space, *trj.Settings, error) {
	ind := robustvs.Indicators()
	s := &trj.Settings{Seed: seed, Pilot: trj.PilotSettings{Method: trj.PilotSMC, From: from,
		Tempered: func(k int) (kernels.TemperedModel, error) {
			f, err := robustvs.TemperedFactory(d, ind[k])
			if err != nil {
				return nil, err
			}
			return f(0)
		}}}
	// Flow training shortened (the standard errors must hold for any
	// transport, and the study trains 20 flows per seed).
	train := flows.TrainOptions{Iterations: 150}
	s.Transport.Train = &train
	var opts []robustvs.SpaceOption
	switch kind {
	case "affine", "rqma":
		s.Transport.Kind = trj.TransportAffine
		if kind == "rqma" {
			s.Transport.Kind = trj.TransportRQMA
		}
		s.Chains.Permutations = robustvs.Permutations(ind)
	case "crqma":
		s.Transport.Kind = trj.TransportConditional
		s.Chains.Algorithm = trj.CTRJ
	case "indep-aux":
		s.Chains.Algorithm = trj.CTRJ
		s.Chains.Aux = kernels.NormalAux{SD: robustvs.PriorSD}
		opts = append(opts, ppl.WithAuxiliaryScale(robustvs.PriorSD))
	default:
		return nil, nil, fmt.Errorf("unknown proposal type %q", kind)
	}
	space, err := robustvs.NewSpace(d, opts...)
	return space, s, err
}

// TestRobustVSCalibration runs every proposal type on the robust
// variable-selection example over TRJ_CALIBRATION_SEEDS seeds (it is long:
// set the variable to run it) and checks that the z-scores against the
// exact model probabilities have a standard deviation in [0.7, 1.4].
func TestRobustVSCalibration(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TRJ_CALIBRATION_SEEDS"))
	if n == 0 {
		t.Skip("set TRJ_CALIBRATION_SEEDS (≥ 10) to run the calibration study")
	}
	d, err := robustvs.DefaultData()
	if err != nil {
		t.Fatal(err)
	}
	exact := robustvs.Truth()
	kinds := []string{"affine", "rqma", "crqma", "indep-aux"}
	if k := os.Getenv("TRJ_CALIBRATION_KINDS"); k != "" {
		kinds = []string{k}
	}
	zc, zb := map[string][]float64{}, map[string][]float64{}
	var ze []float64
	for seed := uint64(1); seed <= uint64(n); seed++ {
		var first *trj.Result
		for _, kind := range kinds {
			space, s, err := robustvsSettings(d, kind, seed, first)
			if err != nil {
				t.Fatal(err)
			}
			res, err := trj.Run(context.Background(), space, s)
			if err != nil {
				t.Fatalf("seed %d, %s: %v", seed, kind, err)
			}
			if first == nil {
				first = res
				for k, p := range exact {
					ze = append(ze, (res.Evidence.P[k]-p)/res.Evidence.SE[k])
				}
			}
			t.Logf("seed %d, %s:\n%s", seed, kind, res)
			for k, p := range exact {
				if c := res.Chain[k]; c.Mixed {
					zc[kind] = append(zc[kind], (c.P-p)/c.MCSE)
				}
				zb[kind] = append(zb[kind], (res.Bridge.Normalized[k]-p)/res.Bridge.NormalizedSE[k])
			}
		}
	}
	check := func(name string, z []float64) {
		mean, sd := stat.MeanStdDev(z, nil)
		t.Logf("%-22s %3d z-scores: mean %+.2f, sd %.2f, max |z| %.2f", name, len(z), mean, sd, maxAbs(z))
		if math.IsNaN(sd) || sd < 0.7 || sd > 1.4 {
			t.Errorf("%s: sd of z-scores %.2f outside [0.7, 1.4]", name, sd)
		}
	}
	check("SMC evidence", ze)
	for _, kind := range kinds {
		check(kind+" chains", zc[kind])
		check(kind+" bridge", zb[kind])
	}
}
