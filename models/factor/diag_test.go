package factor

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/ppl"
)

// envInt and envFloat read a diagnostic override.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
		return v
	}
	return def
}

// TestDiagFlows measures the transports on the pilot draws: held-out
// log-likelihood and IS-ESS of affine and RQMA flows, and the TRJ jump
// acceptance on the evaluation draws. It runs only with FACTOR_DIAG=1
// (minutes of work); the knobs are FD_* environment variables.
func TestDiagFlows(t *testing.T) {
	if os.Getenv("FACTOR_DIAG") == "" {
		t.Skip("set FACTOR_DIAG=1")
	}
	ctx := context.Background()
	y := loadData(t)
	_, p := y.Dims()
	cfg := DefaultConfig()
	cfg.PilotDraws = envInt("FD_N", cfg.PilotDraws)
	cfg.RejuvenateSteps = envInt("FD_REJ", cfg.RejuvenateSteps)
	cache := fmt.Sprintf("/tmp/factor_pilot_%d_%d_%d.json", cfg.PilotDraws, cfg.RejuvenateSteps, cfg.Seed)
	var pl Pilot
	if b, err := os.ReadFile(cache); err == nil {
		if err := json.Unmarshal(b, &pl); err != nil {
			t.Fatal(err)
		}
	} else {
		t0 := time.Now()
		got, err := RunPilot(ctx, y, cfg.PilotDraws, cfg.SMC, cfg.RejuvenateSteps, cfg.Seed, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("pilot %v, mode weights %v", time.Since(t0), got.ModeWeight)
		pl = *got
		b, _ := json.Marshal(pl)
		_ = os.WriteFile(cache, b, 0o644)
	}
	cfg.RQMA.HiddenPerDim = envInt("FD_HID", cfg.RQMA.HiddenPerDim)
	cfg.RQMA.SigmoidScale = envFloat("FD_SIG", cfg.RQMA.SigmoidScale)
	cfg.RQMA.Bins = envInt("FD_BINS", cfg.RQMA.Bins)
	cfg.RQMA.Layers = envInt("FD_LAYERS", cfg.RQMA.Layers)
	cfg.Train.Iterations = envInt("FD_ITERS", cfg.Train.Iterations)
	cfg.Train.StopWindow = envInt("FD_STOP", cfg.Train.StopWindow)
	cfg.Train.LearningRate = envFloat("FD_LR", cfg.Train.LearningRate)
	cfg.Train.Decay1 = envFloat("FD_D1", cfg.Train.Decay1)
	cfg.Train.Decay2 = envFloat("FD_D2", cfg.Train.Decay2)
	cfg.Train.BatchSize = envInt("FD_BATCH", cfg.Train.BatchSize)
	cfg.Train.ValidationFraction = envFloat("FD_VAL", cfg.Train.ValidationFraction)
	cfg.Train.Workers = envInt("FD_WORKERS", 1)
	t.Logf("rqma %+v train iters %d stop %d lr %g d1 %g d2 %g batch %d", cfg.RQMA, cfg.Train.Iterations,
		cfg.Train.StopWindow, cfg.Train.LearningRate, cfg.Train.Decay1, cfg.Train.Decay2, cfg.Train.BatchSize)
	space, err := NewSpace(y)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{experiment.ProposalAffine, experiment.ProposalRQMA}
	if os.Getenv("FD_SKIP_AFFINE") != "" {
		kinds = kinds[1:]
	}
	for _, kind := range kinds {
		t0 := time.Now()
		set, err := FitProposals(ctx, kind, pl.Train, p, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		el := time.Since(t0)
		for k, nf := range factors {
			m, err := NewModel(y, nf)
			if err != nil {
				t.Fatal(err)
			}
			d := set.Transports()[k].(flows.Density)
			extra := ""
			if kind == experiment.ProposalRQMA {
				r := set.Reports[k]
				extra = fmt.Sprintf("iters %d stopped %v lastval %.3f", r.Iterations, r.EarlyStopped, r.ValidationLoss[len(r.ValidationLoss)-1])
			}
			q, err := flows.Assess(d, pl.Eval[k], nil, m.LogDensity, 4000, 7)
			if err != nil {
				t.Fatal(err)
			}
			qt, _ := flows.Assess(d, pl.Train[k], nil, nil, 0, 0)
			// Log evidence by importance sampling (not normalised by ESS).
			t.Logf("%s k=%d train LL %.3f heldout LL %.3f±%.3f ISESS %.1f/%d (%.3f) %s", kind, nf, qt.HeldOutLogLik, q.HeldOutLogLik, q.HeldOutSE, q.ESS, q.Draws, q.ESSFraction, extra)
		}
		// Jump acceptance on the evaluation draws.
		var acc [2][2]float64
		var cnt [2][2]int
		for rep := 0; rep < 3; rep++ {
			kern, err := set.New(space.Clone(), nil)
			if err != nil {
				t.Fatal(err)
			}
			recs, err := kernels.EvaluationJumps(experiment.Stream(9, "diag", rep), kern, pl.Eval)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				acc[r.From][r.To] += r.AcceptProb
				cnt[r.From][r.To]++
			}
			est, err := kernels.BartolucciBridge(recs, kernels.UniformJumps(2), nil)
			if err == nil {
				t.Logf("%s bridge rep %d π(2) = %.4f", kind, rep, est.Normalized[0])
			}
		}
		if os.Getenv("FD_CHAINS") != "" {
			diagChains(t, set, space, &pl, cfg)
		}
		a23, a32 := acc[0][1]/float64(cnt[0][1]), acc[1][0]/float64(cnt[1][0])
		t.Logf("%s fit %v: acceptance 2→3 %.4f, 3→2 %.4f, mean over jumps %.4f", kind, el, a23, a32,
			(acc[0][1]+acc[1][0])/float64(cnt[0][1]+cnt[1][0]))
		_ = math.NaN
	}
}

// diagChains runs the default chains and reports, per chain, P(2), the
// longest stay in one model and the state where it began.
func diagChains(t *testing.T, set *ProposalSet, space *ppl.Space, pl *Pilot, cfg Config) {
	cov, err := kernels.RandomWalkCovariances(pl.Train, cfg.RWScale)
	if err != nil {
		t.Fatal(err)
	}
	steps := envInt("FD_STEPS", cfg.Steps)
	for c := 0; c < cfg.Chains; c++ {
		rng := experiment.Stream(cfg.Seed, "chains-"+set.Kind, c)
		tg := space.Clone()
		within, err := kernels.NewModelRandomWalk(tg, cov)
		if err != nil {
			t.Fatal(err)
		}
		kern, err := set.New(tg, within)
		if err != nil {
			t.Fatal(err)
		}
		k0 := rng.IntN(tg.NumModels())
		s, err := kern.Init(k0, pl.Train[k0][rng.IntN(len(pl.Train[k0]))])
		if err != nil {
			t.Fatal(err)
		}
		in2, run, best, bestModel := 0, 0, 0, 0
		var bestStart []float64
		var start []float64
		acc := 0
		for i := 0; i < steps; i++ {
			prev := s.Model
			var info kernels.RJInfo
			s, info = kern.Step(rng, s)
			if info.JumpAccepted {
				acc++
			}
			if s.Model == 0 {
				in2++
			}
			if s.Model == prev && i > 0 {
				run++
			} else {
				run = 1
				start = append(start[:0], s.Theta...)
			}
			if run > best {
				best, bestModel = run, s.Model
				bestStart = append([]float64(nil), start...)
			}
		}
		t.Logf("chain %d: P(2) %.4f accepted jumps %d longest stay %d in model %d from %v", c,
			float64(in2)/float64(steps), acc, best, factors[bestModel], fmtVec(bestStart))
	}
}

func fmtVec(v []float64) string {
	s := ""
	for _, x := range v {
		s += fmt.Sprintf("%.2f ", x)
	}
	return s
}
