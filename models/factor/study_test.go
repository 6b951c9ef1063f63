package factor

import (
	"math"
	"strings"
	"testing"

	"github.com/trjgo/trj/models/experiment"
)

// pairWith returns a pair result whose rqma estimates of π(2) are v.
func pairWith(p int, v ...float64) *PairResult {
	b := &experiment.BridgeSummary{Replicates: len(v), EvalDraws: 100, MeanAcceptance: 0.1}
	for _, x := range v {
		b.NormReplicates = append(b.NormReplicates, map[string]experiment.Float{"2": experiment.Float(x), "3": experiment.Float(1 - x)})
		if math.IsNaN(x) {
			b.Failed++
		}
	}
	return &PairResult{Pair: p, Proposals: map[string]*PairProposal{"rqma": {Bridge: b}}, Seconds: map[string]experiment.Float{"total": 1}}
}

func TestMergeStudy(t *testing.T) {
	res, err := MergeStudy([]*PairResult{pairWith(2, 0.8, 0.9, math.NaN()), pairWith(1, 0.85, 0.95, 0.9)}, 2)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary["rqma"]
	near := func(got experiment.Float, want float64) bool { return math.Abs(float64(got)-want) < 1e-12 }
	// Pair means 0.9 and 0.85; within-pair variances 0.0025 and 0.005.
	switch {
	case res.Pairs[0].Pair != 1 || res.Replicates != 3 || res.PilotDraws != 100:
		t.Errorf("pairs %d…, %d replicates of %d draws", res.Pairs[0].Pair, res.Replicates, res.PilotDraws)
	case s.Estimates != 5 || s.Failed != 1:
		t.Errorf("%d estimates, %d failed", s.Estimates, s.Failed)
	case !near(s.Mean, 0.88) || !near(s.PairMeans[0], 0.9) || !near(s.PairMeans[1], 0.85):
		t.Errorf("mean %v, pair means %v", s.Mean, s.PairMeans)
	case !near(s.BetweenPairSD, math.Sqrt(0.00125)) || !near(s.WithinPairSD, math.Sqrt(0.00375)):
		t.Errorf("between-pair sd %v, within-pair sd %v", s.BetweenPairSD, s.WithinPairSD)
	case !near(s.RMSE, math.Sqrt((0.0064+0.0004+0.0009+0.0049+0.0004)/5)):
		t.Errorf("RMSE %v", s.RMSE)
	}
	var b strings.Builder
	if err := res.WriteTable(&b); err != nil || !strings.Contains(b.String(), "0.8800") {
		t.Errorf("table (%v):\n%s", err, b.String())
	}
	for _, c := range []struct {
		pairs []*PairResult
		want  string
	}{
		{[]*PairResult{pairWith(1, 0.9)}, "pairs 2 of 2 missing"},
		{[]*PairResult{pairWith(1, 0.9), pairWith(1, 0.9)}, "given twice"},
		{[]*PairResult{pairWith(1, 0.9), pairWith(3, 0.9)}, "pair 3 of a study of 2"},
		{[]*PairResult{pairWith(1, 0.9), pairWith(2, 0.9, 0.8)}, "estimates"},
	} {
		if _, err := MergeStudy(c.pairs, 2); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one mentioning %q", err, c.want)
		}
	}
}
