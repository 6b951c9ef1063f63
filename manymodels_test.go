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

// gaussModels is K models: model k has θ of dimension k%2 + 1, every
// coordinate with prior N(m_k, 1) and one datum y ~ N(θ_i, 1), m_k spread
// over [−1.5, 1.5]. Its evidence is N(y; m_k, 2) per coordinate, so the
// exact model probabilities (uniform prior) are known; draws gives exact
// posterior draws, in groups of n, for GivenPilots.
type gaussModels struct {
	K     int
	y     float64
	means []float64
}

func newGaussModels(K int, y float64) *gaussModels {
	g := &gaussModels{K: K, y: y}
	for k := range K {
		g.means = append(g.means, -1.5+3*float64(k)/float64(max(K-1, 1)))
	}
	return g
}

func (g *gaussModels) dim(k int) int { return k%2 + 1 }

func (g *gaussModels) space(t testing.TB) *ppl.Space {
	t.Helper()
	models := make([]ppl.Model, g.K)
	for k := range g.K {
		b := ppl.NewBuilder()
		d := g.dim(k)
		theta := b.Real("theta", d)
		b.Sample(ppl.Normal{Mu: g.means[k], Sigma: 1}, theta)
		ys := make([]float64, d)
		for i := range ys {
			ys[i] = g.y
		}
		b.Sample(ppl.Normal{Mu: theta, Sigma: 1}, b.Data("y", ys))
		m, err := b.Model()
		if err != nil {
			t.Fatal(err)
		}
		models[k] = m
	}
	space, err := ppl.NewSpace(models)
	if err != nil {
		t.Fatal(err)
	}
	return space
}

// exact returns the models' posterior probabilities.
func (g *gaussModels) exact() []float64 {
	l := make([]float64, g.K)
	top := math.Inf(-1)
	for k := range l {
		z := (g.y - g.means[k]) / math.Sqrt2
		l[k] = float64(g.dim(k)) * (-0.5*z*z - 0.5*math.Log(2*math.Pi*2))
		top = max(top, l[k])
	}
	var sum float64
	for k := range l {
		l[k] = math.Exp(l[k] - top)
		sum += l[k]
	}
	for k := range l {
		l[k] /= sum
	}
	return l
}

// draws returns groups groups of n exact posterior draws of every model:
// θ_i ~ N((m_k + y)/2, 1/2).
func (g *gaussModels) draws(seed uint64, groups, n int) [][][][]float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([][][][]float64, g.K)
	for k := range g.K {
		mu := (g.means[k] + g.y) / 2
		out[k] = make([][][]float64, groups)
		for gr := range groups {
			for range n {
				x := make([]float64, g.dim(k))
				for i := range x {
					x[i] = mu + math.Sqrt(0.5)*rng.NormFloat64()
				}
				out[k][gr] = append(out[k][gr], x)
			}
		}
	}
	return out
}

// TestBridgeManyModels: with 256 models and few evaluation draws per model
// (200 in 20 groups, under one proposal per model pair), one proposal per
// draw leaves pairs without proposals: the bridge fails, its error says
// what to change, the chains still run, and every accessor of the result
// works. The default makes enough proposals for every pair (29 per draw),
// and its estimate agrees with the exact probabilities (a long run: not
// with -short).
func TestBridgeManyModels(t *testing.T) {
	skipInRacePass(t, "256 models' bridge, one stage after another; the bridge's concurrency is TestRunExact's")
	g := newGaussModels(256, 0.3)
	space := g.space(t)
	exact := g.exact()
	settings := func(proposals int) *trj.Settings {
		return &trj.Settings{
			Seed:      1,
			Pilot:     trj.PilotSettings{Method: trj.GivenPilots{Draws: g.draws(1, 40, 10)}},
			Proposals: &trj.AffineTransports{},
			Bridge:    trj.BridgeSettings{Proposals: proposals},
			Chains:    trj.ChainSettings{Chains: 2, Steps: 100, MaxSteps: 100, Within: trj.RandomWalkMove{}},
		}
	}
	res, err := trj.Run(context.Background(), space, settings(1))
	if err != nil {
		t.Fatal(err)
	}
	if res.Bridge != nil || res.BridgeError == "" {
		t.Fatalf("one proposal per draw: bridge %v, error %q", res.Bridge != nil, res.BridgeError)
	}
	t.Logf("bridge error: %s", res.BridgeError)
	for _, want := range []string{"Bridge.Proposals", "evaluation draws"} {
		if !strings.Contains(res.BridgeError, want) {
			t.Errorf("bridge error %q does not mention %q", res.BridgeError, want)
		}
	}
	// Every accessor on the failed stage.
	if p, se, bal := res.Bridge.Reported(); p != nil || se != nil || bal {
		t.Errorf("nil bridge reported %v %v %v", p, se, bal)
	}
	if !res.Complete || res.Steps == 0 || !strings.Contains(res.String(), "failed") {
		t.Errorf("complete %v, %d steps", res.Complete, res.Steps)
	}
	res.Acceptance(0)

	if testing.Short() {
		t.Skip("the default bridge of 256 models makes 1.7 million proposals")
	}
	res, err = trj.Run(context.Background(), space, settings(0))
	if err != nil {
		t.Fatal(err)
	}
	b := res.Bridge
	if b == nil {
		t.Fatalf("default bridge failed: %s", res.BridgeError)
	}
	t.Logf("%d proposals per draw, %v", b.Proposals, res.Timings)
	// Jackknife z-scores over 20 groups are t-like with 19 degrees of
	// freedom: mean square 19/17 = 1.12.
	p, se, _ := b.Reported()
	worst, ms := 0.0, 0.0
	for k := range exact {
		z := (p[k] - exact[k]) / se[k]
		worst = max(worst, math.Abs(z))
		ms += z * z / float64(len(exact))
	}
	t.Logf("z-scores against the exact probabilities over 256 models: mean square %.2f, largest |z| %.2f", ms, worst)
	if !(ms < 2) {
		t.Errorf("bridge estimate: z-scores' mean square %.2f", ms)
	}
}

// gaussSpace is two normalised Gaussian models, N(0, 1) on R and
// N((1, −2), diag(0.5², 2²)) on R², with prior (0.3, 0.7), and groups of
// exact draws of each for GivenPilots.
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
		Pilot:     trj.PilotSettings{Method: trj.GivenPilots{Draws: given}},
		Proposals: &trj.AffineTransports{},
		Chains:    trj.ChainSettings{Chains: 4, Steps: 2000, Jump: []float64{0.3, 0.7}, Within: trj.RandomWalkMove{}},
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
		"rw scale":      {func(c *trj.ChainSettings) { c.Within = trj.RandomWalkMove{Scale: -1} }, "random-walk scale -1"},
		"rw scale +Inf": {func(c *trj.ChainSettings) { c.Within = &trj.RandomWalkMove{Scale: math.Inf(1)} }, "random-walk scale +Inf"},
	} {
		s := &trj.Settings{Pilot: trj.PilotSettings{Method: trj.GivenPilots{Draws: given}}, Proposals: &trj.AffineTransports{}}
		c.mod(&s.Chains)
		_, err := trj.Run(context.Background(), space, s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to say %q", name, err, c.want)
		}
	}
	if (trj.RandomWalkMove{}).Name() != "random walk" || (trj.NUTSMove{}).Name() != "NUTS" {
		t.Error("within-move names")
	}
}
