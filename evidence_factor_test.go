package trj_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/models/factor"
)

// TestModelEvidenceFactor compares, on the factor-analysis experiment's SMC
// pilots (factor.DefaultConfig, affine transports, short chains), the SMC
// log evidences with the per-model ones from the transports, which use the
// same pilot draws but not SMC's incremental weights. It logs, checks
// nothing, and is long (about 3 CPU-minutes): set TRJ_EVIDENCE_FACTOR_SEED
// to run it.
func TestModelEvidenceFactor(t *testing.T) {
	seed, _ := strconv.ParseUint(os.Getenv("TRJ_EVIDENCE_FACTOR_SEED"), 10, 64)
	if seed == 0 {
		t.Skip("set TRJ_EVIDENCE_FACTOR_SEED to run the comparison")
	}
	y, err := factor.DefaultData()
	if err != nil {
		t.Fatal(err)
	}
	cfg := factor.DefaultConfig()
	cfg.Seed = seed
	cfg.Chains, cfg.Steps = 2, 200
	space, s, err := factor.Settings(y, experiment.ProposalAffine, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := trj.Run(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", res)
	e, smc := res.ModelEvidence, res.Evidence
	if e == nil || smc == nil {
		t.Fatalf("no evidence: %s", res.ModelEvidenceError)
	}
	for k := range res.Labels {
		t.Logf("%s factors: SMC log Z %.3f ± %.3f, per-model %.3f ± %.3f, difference %.3f",
			res.Labels[k], smc.LogZ[k], smc.LogZSE[k], e.LogZ[k], e.LogZSE[k], smc.LogZ[k]-e.LogZ[k])
	}
}
