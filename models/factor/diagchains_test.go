package factor

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/models/experiment"
)

// TestDiagChains runs the RQMA proposal type once at DefaultConfig's sizes,
// then reruns its chains on the same pilots and flows with other seeds and
// jump probabilities, to compare the chains' spread with their MCSE. It
// runs only with FACTOR_DIAG=1 (minutes of work).
func TestDiagChains(t *testing.T) {
	if os.Getenv("FACTOR_DIAG") == "" {
		t.Skip("set FACTOR_DIAG=1")
	}
	ctx := context.Background()
	cfg := DefaultConfig()
	y, err := DefaultData()
	if err != nil {
		t.Fatal(err)
	}
	space, set, err := Settings(y, experiment.ProposalRQMA, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	first, fitted, err := trj.RunFitted(ctx, space, set)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seed 1, default jumps %v:\n%s", first.Jump, first)
	var saved bytes.Buffer
	if err := fitted.Save(&saved); err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct {
		seed uint64
		jump []float64
	}{{2, nil}, {3, nil}, {2, []float64{0.5, 0.5}}, {3, []float64{0.5, 0.5}}} {
		s := *set
		s.Seed = v.seed
		s.Pilot.From = fitted
		s.Proposals = &trj.LoadedTransports{From: bytes.NewReader(saved.Bytes()), Permutations: set.Proposals.(*trj.RQMATransports).Permutations}
		s.Chains.Jump = v.jump
		r, err := trj.Run(ctx, space, &s)
		if err != nil {
			t.Fatal(err)
		}
		var per []float64
		for _, c := range r.Chains.Chains {
			n := 0
			for _, m := range c.Models {
				if m == 0 {
					n++
				}
			}
			per = append(per, float64(n)/float64(len(c.Models)))
		}
		a, _ := r.Acceptance(0)
		t.Logf("chain seed %d, jumps %v: π(2) = %.4f ± %.4f (R̂ %.3f, ESS %.0f), per chain %.3f, acceptance from 2: %.3f",
			v.seed, r.Jump[0], r.Chain[0].P, r.Chain[0].MCSE, r.Chain[0].Rhat, r.Chain[0].ESS, per, a)
	}
}
