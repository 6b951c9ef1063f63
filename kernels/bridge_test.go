package kernels_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/sas"
)

// sasDraws returns n exact draws from each SAS model.
func sasDraws(tg *sas.Target, rng *rand.Rand, n int) [][][]float64 {
	out := make([][][]float64, tg.NumModels())
	for k := range out {
		for i := 0; i < n; i++ {
			x := make([]float64, tg.ModelDim(k))
			if err := tg.Component(k).Sample(rng, x); err != nil {
				panic(err)
			}
			out[k] = append(out[k], x)
		}
	}
	return out
}

func TestBridgeExactSAS(t *testing.T) {
	tg := sas.Paper()
	rng := rand.New(rand.NewPCG(21, 1))
	draws := sasDraws(tg, rng, 500)
	prop, _ := kernels.ProportionalJumps([]float64{0.25, 0.75})
	for name, j := range map[string][][]float64{"uniform": kernels.UniformJumps(2), "proportional": prop} {
		k, err := kernels.NewTRJ(kernels.TRJConfig{Target: tg, Transports: sasTransports(tg), Jump: j})
		if err != nil {
			t.Fatal(err)
		}
		recs, err := kernels.EvaluationJumps(rng, k, draws)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 1000 {
			t.Fatalf("%d records", len(recs))
		}
		e, err := kernels.BartolucciBridge(recs, j, []float64{0.25, 0.75})
		if err != nil {
			t.Fatal(err)
		}
		// Exact transports make every α deterministic, so the estimate is
		// exact up to rounding.
		for m, want := range []float64{0.25, 0.75} {
			if math.Abs(e.Raw[m]-want) > 1e-9 || math.Abs(e.Normalized[m]-want) > 1e-9 {
				t.Errorf("%s: π̂(%d) raw %v, normalised %v, want %v", name, m, e.Raw[m], e.Normalized[m], want)
			}
			if math.Abs(e.BayesFactor[0][1]-1) > 1e-9 {
				t.Errorf("%s: Bayes factor %v, want 1 (both components normalised)", name, e.BayesFactor[0][1])
			}
		}
		uni, _, err := e.Probabilities(nil)
		if err != nil || math.Abs(uni[0]-0.5) > 1e-9 {
			t.Errorf("%s: probabilities under a uniform prior %v, %v; want 1/2 each", name, uni, err)
		}
		ref, err := e.ReferenceProbabilities(1)
		if err != nil || math.Abs(ref[0]-0.25) > 1e-9 {
			t.Errorf("%s: reference-model estimate %v, %v", name, ref, err)
		}
	}
}

func TestBridgeFromChainRecords(t *testing.T) {
	// Imperfect transports: the records of an RJMCMC run give π̂ within
	// Monte Carlo error; the error bar comes from independent chains.
	tg := sas.Paper()
	j := kernels.UniformJumps(2)
	const reps = 8
	est := make([]float64, reps)
	for r := range est {
		rw, _ := kernels.NewModelRandomWalk(tg, nil2(2))
		k, err := kernels.NewTRJ(kernels.TRJConfig{Target: tg, Transports: imperfectSAS(), Jump: j, Within: rw, Alternate: true})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(22, uint64(r)))
		s, _ := k.Init(1, []float64{2, -1.5})
		var recs []kernels.JumpRecord
		for i := 0; i < 8000; i++ {
			var info kernels.RJInfo
			s, info = k.Step(rng, s)
			if info.Jumped && i >= 500 {
				recs = append(recs, info.Jump)
			}
		}
		e, err := kernels.BartolucciBridge(recs, j, nil)
		if err != nil {
			t.Fatal(err)
		}
		est[r] = e.Normalized[1]
	}
	m, sd := stat.MeanStdDev(est, nil)
	se := sd / math.Sqrt(reps)
	t.Logf("bridge from chains: π̂(k=2) = %.4f ± %.4f", m, se)
	if math.Abs(m-0.75) > 4*se {
		t.Errorf("π̂(k=2) = %v, want 0.75 ± 4·%v", m, se)
	}
}

// gaussDraws returns n exact draws from each model of g.
func gaussDraws(g *gaussModels, rng *rand.Rand, n int) [][][]float64 {
	out := make([][][]float64, len(g.tr))
	for k, tr := range g.tr {
		for i := 0; i < n; i++ {
			z := make([]float64, tr.Dim())
			for d := range z {
				z[d] = rng.NormFloat64()
			}
			x := make([]float64, tr.Dim())
			if _, err := tr.Inverse(z, x); err != nil {
				panic(err)
			}
			out[k] = append(out[k], x)
		}
	}
	return out
}

func TestBridgeImperfectTransportsOverSeeds(t *testing.T) {
	// Three Gaussian models (dimensions 1, 2, 2), prior (0.2, 0.3, 0.5),
	// mis-scaled and shifted affine transports, TRJ and CTRJ proposals.
	prob := []float64{0.2, 0.3, 0.5}
	g := newGaussModels(prob, []*affine{
		diagAffine([]float64{1}, []float64{2}),
		newAffine([]float64{0, 1}, []float64{1, 0, 0.6, 0.8}),
		diagAffine([]float64{-1, 3}, []float64{0.5, 1.5}),
	})
	bad := []kernels.Transport{
		diagAffine([]float64{1.5}, []float64{1.4}),
		newAffine([]float64{0.3, 0.8}, []float64{1.5, 0, 0, 1}),
		diagAffine([]float64{-0.8, 2.5}, []float64{0.7, 1.1}),
	}
	active := [][]bool{{true, false}, {true, true}, {true, true}}
	j := kernels.UniformJumps(3)
	reps, n := 30, 1000
	if testing.Short() {
		reps, n = 15, 600
	}
	kinds := map[string]func() kernels.JumpProposer{
		"TRJ": func() kernels.JumpProposer {
			k, err := kernels.NewTRJ(kernels.TRJConfig{Target: g, Transports: bad, Jump: j})
			if err != nil {
				t.Fatal(err)
			}
			return k
		},
		"CTRJ": func() kernels.JumpProposer {
			k, err := kernels.NewCTRJ(kernels.CTRJConfig{Target: g, Transport: newSaturated(bad, active), Active: active, Jump: j})
			if err != nil {
				t.Fatal(err)
			}
			return k
		},
	}
	for name, mk := range kinds {
		est := make([][]float64, 3)
		raw := make([][]float64, 3)
		meanAcc := 0.0
		for r := 0; r < reps; r++ {
			rng := rand.New(rand.NewPCG(23, uint64(r)))
			recs, err := kernels.EvaluationJumps(rng, mk(), gaussDraws(g, rng, n))
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range recs {
				meanAcc += rec.AcceptProb / float64(len(recs)*reps)
			}
			e, err := kernels.BartolucciBridge(recs, j, prob)
			if err != nil {
				t.Fatal(err)
			}
			for m := range est {
				est[m] = append(est[m], e.Normalized[m])
				raw[m] = append(raw[m], e.Raw[m])
			}
		}
		if meanAcc > 0.9 {
			t.Fatalf("%s: mean acceptance %v, transports too good to test", name, meanAcc)
		}
		for m := range est {
			for label, x := range map[string][]float64{"normalised": est[m], "raw": raw[m]} {
				mean, sd := stat.MeanStdDev(x, nil)
				se := sd / math.Sqrt(float64(reps))
				if math.Abs(mean-prob[m]) > 4*se {
					t.Errorf("%s %s: π̂(%d) = %v, want %v ± 4·%v", name, label, m, mean, prob[m], se)
				}
				if label == "normalised" {
					t.Logf("%s: mean α %.3f, π̂(%d) = %.4f ± %.4f (truth %v)", name, meanAcc, m, mean, se, prob[m])
				}
			}
		}
	}
}

func TestBridgeBadInput(t *testing.T) {
	j := kernels.UniformJumps(3)
	recs := []kernels.JumpRecord{{0, 1, 0.5}, {1, 0, 0.5}}
	if _, err := kernels.BartolucciBridge(recs, j, nil); !errors.Is(err, kernels.ErrNoJumps) {
		t.Errorf("missing pairs: %v", err)
	}
	for name, bad := range map[string][]kernels.JumpRecord{
		"self":     {{1, 1, 0.5}},
		"range":    {{0, 3, 0.5}},
		"α > 1":    {{0, 1, 1.5}},
		"α is NaN": {{0, 1, math.NaN()}},
	} {
		if _, err := kernels.BartolucciBridge(bad, j, nil); err == nil || errors.Is(err, kernels.ErrNoJumps) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := kernels.BartolucciBridge(recs, j, []float64{1, 0, 0}); err == nil {
		t.Error("zero prior accepted")
	}
	if _, err := kernels.BartolucciBridge(recs, [][]float64{{1, 0}}, nil); err == nil {
		t.Error("bad jump matrix accepted")
	}
	if _, err := kernels.EvaluationJumps(rand.New(rand.NewPCG(1, 0)), nil, [][][]float64{{{0}}}); err == nil {
		t.Error("EvaluationJumps: nil proposer accepted")
	}
}
