package trj_test

import (
	"context"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/checks/conjugate"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
)

// evidenceSettings is smallSettings with short chains: the per-model
// evidence is made before the chains and does not use them.
func evidenceSettings(seed uint64) *trj.Settings {
	s := smallSettings(seed)
	s.Chains = trj.ChainSettings{Chains: 2, Steps: 200}
	return s
}

// runEvidence runs trj.Run with settings s and returns the result and its
// per-model evidence, failing the test without them.
func runEvidence(t *testing.T, space *ppl.Space, s *trj.Settings) (*trj.Result, *trj.ModelEvidence) {
	t.Helper()
	res, err := trj.Run(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	if res.ModelEvidence == nil {
		t.Fatalf("seed %d: no per-model evidence: %s", s.Seed, res.ModelEvidenceError)
	}
	return res, res.ModelEvidence
}

// TestModelEvidenceExact checks one run's per-model log evidences, their
// probabilities and a Bayes factor against the closed forms, each within 4
// reported standard errors.
func TestModelEvidenceExact(t *testing.T) {
	skipInRacePass(t, "statistical; the bridge's and chains' concurrency is TestRunExact's")
	x, y := regressionData(40)
	space, exact, logZ, err := allSubsets(x, y)
	if err != nil {
		t.Fatal(err)
	}
	res, e := runEvidence(t, space, evidenceSettings(1))
	table := res.String()
	t.Logf("\n%s", table)
	if !strings.Contains(table, "log Zₖ") || !strings.Contains(table, "per-model: ") {
		t.Errorf("no per-model columns or note in the table")
	}
	for k := range exact {
		if d := e.LogZ[k] - logZ[k]; !(math.Abs(d) <= 4*e.LogZSE[k]) || e.LogZSE[k] > 0.05 {
			t.Errorf("model %s: log Z %.4f ± %.4f, exact %.4f", res.Labels[k], e.LogZ[k], e.LogZSE[k], logZ[k])
		}
		if d := e.P[k] - exact[k]; !(math.Abs(d) <= 4*e.SE[k]) {
			t.Errorf("model %s: P %.5f ± %.5f, exact %.5f", res.Labels[k], e.P[k], e.SE[k], exact[k])
		}
	}
	bf, se := e.LogBayesFactor(3, 0)
	if d := bf - (logZ[3] - logZ[0]); !(math.Abs(d) <= 4*se) {
		t.Errorf("log B(110, 000) = %.4f ± %.4f, exact %.4f", bf, se, logZ[3]-logZ[0])
	}
	if bf, se := (*trj.ModelEvidence)(nil).LogBayesFactor(0, 1); !math.IsNaN(bf) || !math.IsNaN(se) {
		t.Errorf("nil evidence: %v ± %v, want NaN", bf, se)
	}
}

// TestModelEvidenceCalibration checks over 20 seeds that the per-model log
// evidences' standard errors are the size of their errors: the z-scores
// (log Ẑ_k − log Z_k)/SE_k of the eight models must have sd in [0.7, 1.4].
func TestModelEvidenceCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("20 runs")
	}
	skipInRacePass(t, "20 runs of the same code as TestModelEvidenceExact")
	x, y := regressionData(40)
	space, _, logZ, err := allSubsets(x, y)
	if err != nil {
		t.Fatal(err)
	}
	var z []float64
	for seed := uint64(1); seed <= 20; seed++ {
		_, e := runEvidence(t, space, evidenceSettings(seed))
		for k := range logZ {
			z = append(z, (e.LogZ[k]-logZ[k])/e.LogZSE[k])
		}
	}
	mean, sd := stat.MeanStdDev(z, nil)
	t.Logf("%d z-scores: mean %.2f, sd %.2f, max |z| %.2f", len(z), mean, sd, maxAbs(z))
	if sd < 0.7 || sd > 1.4 {
		t.Errorf("sd of z-scores %.2f outside [0.7, 1.4]", sd)
	}
}

// TestModelEvidenceRare checks every model's probability from the
// per-model evidences on 16 subset models whose probabilities range down
// to below 10⁻¹², within 4 reported standard errors of the exact value,
// and the relative error of the rare ones.
func TestModelEvidenceRare(t *testing.T) {
	skipInRacePass(t, "the code of TestModelEvidenceExact on 16 models")
	x, y := conjugate.RareData(100)
	space, exact, _, err := allSubsets(x, y)
	if err != nil {
		t.Fatal(err)
	}
	res, e := runEvidence(t, space, evidenceSettings(1))
	t.Logf("\n%s", res)
	for k, p := range exact {
		z := (e.P[k] - p) / e.SE[k]
		t.Logf("%s: exact %.3g, per-model %.3g ± %.2g (relative error %+.3f, z %+.2f)", res.Labels[k], p, e.P[k], e.SE[k], e.P[k]/p-1, z)
		if !(math.Abs(z) <= 4) {
			t.Errorf("model %s: P %.3g ± %.2g, exact %.3g", res.Labels[k], e.P[k], e.SE[k], p)
		}
	}
	// What the table says to read holds too, the rare models included.
	for k, rd := range res.Read() {
		if z := (rd.P - exact[k]) / rd.SE; !(math.Abs(z) <= 4) {
			t.Errorf("model %s: read %.3g ± %.2g (%s), exact %.3g", res.Labels[k], rd.P, rd.SE, rd.From, exact[k])
		}
	}
}

// TestModelEvidenceRareSeeds repeats TestModelEvidenceRare over
// TRJ_EVIDENCE_SEEDS seeds (it is long: set the variable to run it;
// TRJ_EVIDENCE_DEFAULTS=1 runs trj.Run's default settings rather than
// evidenceSettings) and checks that the z-scores of every model's
// probability from the per-model evidences, the rare models' included,
// have sd in [0.7, 1.4] (with 10 or more seeds); it logs the largest errors of the per-model, bridge
// (as the table reports it) and chain estimates.
func TestModelEvidenceRareSeeds(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TRJ_EVIDENCE_SEEDS"))
	if n == 0 {
		t.Skip("set TRJ_EVIDENCE_SEEDS to run the study")
	}
	x, y := conjugate.RareData(100)
	space, exact, logZ, err := allSubsets(x, y)
	if err != nil {
		t.Fatal(err)
	}
	var zP, zLogZ, zRare, relRare []float64
	for seed := uint64(1); seed <= uint64(n); seed++ {
		s := evidenceSettings(seed)
		if os.Getenv("TRJ_EVIDENCE_DEFAULTS") == "1" {
			s = &trj.Settings{Seed: seed}
		}
		res, e := runEvidence(t, space, s)
		bridge, _, _ := res.Bridge.Reported()
		var errE, errB, errC float64
		for k, p := range exact {
			z := (e.P[k] - p) / e.SE[k]
			zP = append(zP, z)
			zLogZ = append(zLogZ, (e.LogZ[k]-logZ[k])/e.LogZSE[k])
			if p < 1e-9 {
				zRare = append(zRare, z)
				relRare = append(relRare, e.P[k]/p-1)
			}
			errE = max(errE, math.Abs(e.P[k]-p))
			errB = max(errB, math.Abs(bridge[k]-p))
			errC = max(errC, math.Abs(res.Chain[k].P-p))
		}
		t.Logf("seed %d: largest |error| per-model %.2g, bridge %.2g, chains %.2g", seed, errE, errB, errC)
	}
	for _, c := range []struct {
		name string
		z    []float64
	}{{"P, all models", zP}, {"log Z", zLogZ}, {"P, models below 1e-9", zRare}} {
		mean, sd := stat.MeanStdDev(c.z, nil)
		t.Logf("%s: %d z-scores, mean %.2f, sd %.2f, max |z| %.2f", c.name, len(c.z), mean, sd, maxAbs(c.z))
		if n >= 10 && (sd < 0.7 || sd > 1.4) {
			t.Errorf("%s: sd of z-scores %.2f outside [0.7, 1.4]", c.name, sd)
		}
	}
	t.Logf("relative error of the models below 1e-9: largest %.4f", maxAbs(relRare))
}

// TestModelEvidenceKinds repeats TestModelEvidenceCalibration's runs with
// other pilots or transports over TRJ_EVIDENCE_SEEDS seeds (set it to run):
// TRJ_EVIDENCE_KIND=rqma (RQMA flows, 300 Adam steps) or smc (SMC pilots,
// whose own log Z z-scores it also logs). It checks the z-scores' sd is in
// [0.7, 1.4] with 5 or more seeds.
func TestModelEvidenceKinds(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TRJ_EVIDENCE_SEEDS"))
	kind := os.Getenv("TRJ_EVIDENCE_KIND")
	if n == 0 || kind == "" {
		t.Skip("set TRJ_EVIDENCE_SEEDS and TRJ_EVIDENCE_KIND (rqma, smc) to run the study")
	}
	x, y := regressionData(40)
	space, _, logZ, err := allSubsets(x, y)
	if err != nil {
		t.Fatal(err)
	}
	var z, zSMC []float64
	for seed := uint64(1); seed <= uint64(n); seed++ {
		s := evidenceSettings(seed)
		switch kind {
		case "rqma":
			s.Proposals = &trj.RQMATransports{Train: &flows.TrainOptions{Iterations: 300}}
		case "smc":
			s.Pilot = trj.PilotSettings{Method: trj.SMCPilots{}}
		default:
			t.Fatalf("TRJ_EVIDENCE_KIND %q: want rqma or smc", kind)
		}
		res, e := runEvidence(t, space, s)
		for k := range logZ {
			z = append(z, (e.LogZ[k]-logZ[k])/e.LogZSE[k])
			if s := res.Evidence; s != nil {
				zSMC = append(zSMC, (s.LogZ[k]-logZ[k])/s.LogZSE[k])
			}
		}
		t.Logf("seed %d: log Z SE %.4f", seed, e.LogZSE)
	}
	mean, sd := stat.MeanStdDev(z, nil)
	t.Logf("%s: %d z-scores, mean %.2f, sd %.2f, max |z| %.2f", kind, len(z), mean, sd, maxAbs(z))
	if n >= 5 && (sd < 0.7 || sd > 1.4) {
		t.Errorf("sd of z-scores %.2f outside [0.7, 1.4]", sd)
	}
	if len(zSMC) > 0 {
		mean, sd := stat.MeanStdDev(zSMC, nil)
		t.Logf("SMC's own log Z: %d z-scores, mean %.2f, sd %.2f, max |z| %.2f", len(zSMC), mean, sd, maxAbs(zSMC))
	}
}

// TestCheckModelEvidence: a per-model probability more than 4 combined
// standard errors from the chains' is named under the table and Read
// takes the chains; within them, nothing is said and Read takes the more
// precise estimate.
func TestCheckModelEvidence(t *testing.T) {
	res := &trj.Result{
		Labels: []string{"a", "b"},
		Chain:  []pipeline.Estimate{{P: 0.9, MCSE: 0.003, Mixed: true}, {P: 0.1, MCSE: 0.003, Mixed: true}},
		ModelEvidence: &trj.ModelEvidence{LogZ: []float64{0, 0}, LogZSE: []float64{0.01, 0.01},
			P: []float64{0.905, 0.095}, SE: []float64{0.002, 0.002}},
	}
	if err := res.CheckModelEvidence(); err != nil {
		t.Errorf("1.4 SE apart: %v", err)
	}
	if strings.Contains(res.String(), "disagrees") {
		t.Errorf("1.4 SE apart, the table warns:\n%s", res)
	}
	res.ModelEvidence.P = []float64{0.92, 0.08}
	err := res.CheckModelEvidence()
	if err == nil || !strings.Contains(err.Error(), "model a") || !strings.Contains(err.Error(), "z = 5.5") {
		t.Errorf("5.5 SE apart: %v", err)
	}
	if !strings.Contains(res.String(), "! the per-model estimate of model a") {
		t.Errorf("5.5 SE apart, the table does not warn:\n%s", res)
	}
	if rd := res.Read(); rd[0].From != "chains" || rd[1].From != "chains" {
		t.Errorf("per-model disagreeing with the chains, Read takes %+v", rd)
	}
	res.ModelEvidence.P = []float64{0.905, 0.095}
	if rd := res.Read(); rd[0].From != "per-model" || rd[0].P != 0.905 || rd[0].SE != 0.002 {
		t.Errorf("per-model agreeing and more precise, Read takes %+v", rd)
	}
	res.Chain[0].Mixed, res.Chain[1].Mixed = false, false
	res.ModelEvidence.P = []float64{0.92, 0.08}
	if rd := res.Read(); rd[1].From != "per-model" {
		t.Errorf("chains that never moved, Read takes %+v", rd)
	}
	if err := res.CheckModelEvidence(); err != nil {
		t.Errorf("chains that never moved: %v", err)
	}
	if err := (*trj.Result)(nil).CheckModelEvidence(); err != nil {
		t.Errorf("nil result: %v", err)
	}
}
