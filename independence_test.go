package trj_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/kernels"
)

// TestIndependenceExact runs the eight conjugate models with the default
// (normal) independence proposals: every chain probability within 4 MCSE
// and every bridge estimate within 4 SE of the exact value.
func TestIndependenceExact(t *testing.T) {
	skipInRacePass(t, "statistical; TestIndependenceUser runs the same proposals concurrently")
	space, exact, err := subsetSpace(40)
	if err != nil {
		t.Fatal(err)
	}
	s := smallSettings(1)
	s.Proposals = &trj.Independence{}
	res, fitted, err := trj.RunFitted(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, res, exact)
	for k, r := range res.Transports {
		if r.Kind != "independence" || !(r.Quality.ESSFraction > 0.2) {
			t.Errorf("model %s: transport report %+v", res.Labels[k], r)
		}
	}
	if res.Transport != "independence" || fitted.Transport(0) != nil {
		t.Errorf("result says transport %q, fitted transport %v", res.Transport, fitted.Transport(0))
	}
	if a, n := res.Acceptance(0); n == 0 || !(a > 0.1) {
		t.Errorf("jump acceptance from model 0: %.3f of %d", a, n)
	}
}

// noClone hides the Clone method of a proposal.
type noClone struct{ kernels.IndependenceProposal }

// TestIndependenceUser fits a user proposal without Clone: the function is
// called again for every goroutine, and the run is the same as with the
// clonable default.
func TestIndependenceUser(t *testing.T) {
	space := mustSubsetSpace(t, 40)
	s := smallSettings(2)
	s.Chains.Steps = 500
	s.Proposals = &trj.Independence{}
	want, err := trj.Run(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	s.Proposals = &trj.Independence{Proposal: func(k int, train [][]float64) (kernels.IndependenceProposal, error) {
		calls.Add(1)
		q, err := trj.NormalIndependence(k, train)
		return noClone{q}, err
	}}
	got, err := trj.Run(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	K := int64(space.NumModels())
	groups := int64(got.Bridge.Groups)
	if c := calls.Load(); c != K*(1+groups+int64(s.Chains.Chains)) {
		t.Errorf("%d calls of Independence, want K·(1 + groups + chains) = %d", c, K*(1+groups+int64(s.Chains.Chains)))
	}
	for k := range want.Chain {
		if want.Chain[k] != got.Chain[k] || want.Bridge.Normalized[k] != got.Bridge.Normalized[k] {
			t.Errorf("model %d: cloned %+v %v, refitted %+v %v", k, want.Chain[k], want.Bridge.Normalized[k], got.Chain[k], got.Bridge.Normalized[k])
		}
	}
}

// badProposal has the wrong dimension.
type badProposal struct{}

func (badProposal) Dim() int                              { return 99 }
func (badProposal) LogDensity([]float64) (float64, error) { return 0, nil }
func (badProposal) Sample(*rand.Rand, []float64) error    { return nil }

func TestIndependenceBadSettings(t *testing.T) {
	space := mustSubsetSpace(t, 40)
	fit := func(int, [][]float64) (kernels.IndependenceProposal, error) { return badProposal{}, nil }
	for _, c := range []struct {
		name string
		set  func(*trj.Settings)
		want string
	}{
		{"dimension", func(s *trj.Settings) { s.Proposals = &trj.Independence{Proposal: fit} }, "has dimension 99"},
	} {
		s := smallSettings(1)
		s.Pilot.Method = trj.NUTSPilots{Warmup: 50, Draws: 50}
		c.set(s)
		_, fitted, err := trj.RunFitted(context.Background(), space, s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if c.name == "dimension" && (fitted == nil || fitted.Pilots == nil) {
			t.Errorf("%s: the pilots are lost", c.name)
		}
	}
}
