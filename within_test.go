package trj_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/ppl"
)

// gaussSpace is two normalised Gaussian models, N(0, 1) on R and
// N((1, −2), diag(0.5², 2²)) on R², with prior (0.3, 0.7), and groups of
// exact draws of each for PilotGiven.
func gaussSpace(t *testing.T, groups, perGroup int) (*ppl.Space, [][][][]float64) {
	t.Helper()
	mu, sd := [][]float64{{0}, {1, -2}}, [][]float64{{1}, {0.5, 2}}
	var models []ppl.Model
	for k := range mu {
		b := ppl.NewBuilder()
		x := b.Real("x", len(mu[k]))
		b.Sample(ppl.Normal{Mu: b.Data("mu", mu[k]), Sigma: b.Data("sd", sd[k])}, x)
		m, err := b.Model()
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
	}
	space, err := ppl.NewSpace(models, ppl.WithLogPrior([]float64{math.Log(0.3), math.Log(0.7)}))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	given := make([][][][]float64, 2)
	for k := range given {
		for range groups {
			var g [][]float64
			for range perGroup {
				x := make([]float64, len(mu[k]))
				for i := range x {
					x[i] = mu[k][i] + sd[k][i]*rng.NormFloat64()
				}
				g = append(g, x)
			}
			given[k] = append(given[k], g)
		}
	}
	return space, given
}

// TestFixedJumpRandomWalk runs chains with fixed jump probabilities equal to
// the model probabilities and the random-walk within-model move: with the
// affine transports exact for Gaussians every jump is accepted, and the
// visit frequencies match the prior within their MCSE.
func TestFixedJumpRandomWalk(t *testing.T) {
	space, given := gaussSpace(t, 8, 200)
	s := &trj.Settings{
		Seed:      1,
		Pilot:     trj.PilotSettings{Method: trj.PilotGiven, Given: given},
		Proposals: &trj.AffineTransports{},
		Chains:    trj.ChainSettings{Chains: 4, Steps: 2000, Jump: []float64{0.3, 0.7}, Within: trj.WithinRandomWalk},
	}
	res, fitted, err := trj.RunFitted(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Jump {
		if row[0] != 0.3 || row[1] != 0.7 {
			t.Errorf("jump matrix %v, want rows (0.3, 0.7)", res.Jump)
		}
	}
	for k, p := range []float64{0.3, 0.7} {
		c := res.Chain[k]
		if !c.Mixed || math.Abs(c.P-p) > 4*c.MCSE {
			t.Errorf("model %d: chains %.4f ± %.4f, want %.1f", k, c.P, c.MCSE, p)
		}
		// The affine fit to 800 draws is close to exact, not exact.
		if a, n := res.Acceptance(k); n == 0 || a < 0.9 {
			t.Errorf("model %d: jump acceptance %.3f of %d", k, a, n)
		}
		if fitted.Pilots[k].Metric != nil {
			t.Errorf("model %d: a NUTS kernel was adapted for a random-walk run", k)
		}
	}
}

func TestWithinSettingsErrors(t *testing.T) {
	space, given := gaussSpace(t, 2, 5)
	for name, c := range map[string]struct {
		mod  func(*trj.ChainSettings)
		want string
	}{
		"jump length":   {func(c *trj.ChainSettings) { c.Jump = []float64{1} }, "1 fixed jump probabilities for 2 models"},
		"jump zero":     {func(c *trj.ChainSettings) { c.Jump = []float64{0, 1} }, "probability 0 is 0"},
		"jump NaN":      {func(c *trj.ChainSettings) { c.Jump = []float64{math.NaN(), 1} }, "probability 0 is NaN"},
		"jump sum":      {func(c *trj.ChainSettings) { c.Jump = []float64{0.5, 0.6} }, "sum to 1.1"},
		"within kind":   {func(c *trj.ChainSettings) { c.Within = 7 }, "unknown within-model kind 7"},
		"rw scale":      {func(c *trj.ChainSettings) { c.RWScale = -1 }, "random-walk scale -1"},
		"rw scale +Inf": {func(c *trj.ChainSettings) { c.RWScale = math.Inf(1) }, "random-walk scale +Inf"},
	} {
		s := &trj.Settings{Pilot: trj.PilotSettings{Method: trj.PilotGiven, Given: given}, Proposals: &trj.AffineTransports{}}
		c.mod(&s.Chains)
		_, err := trj.Run(context.Background(), space, s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to say %q", name, err, c.want)
		}
	}
	if trj.WithinRandomWalk.String() != "random walk" || trj.WithinNUTS.String() != "NUTS" || trj.WithinKind(9).String() != "WithinKind(9)" {
		t.Error("WithinKind names")
	}
}
