package docs_test

// The pilot-method example of architecture.md, checked by
// TestExtendPilotAndMove with the within-model move of move_test.go.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/ppl"
)

// snippet:pilot
// gaussianPilots is a pilot method of one's own: independent draws from
// each model's known Gaussian posterior, N(Mean[k], diag(SD[k]²)), in
// unconstrained coordinates. Draws is the number of training draws, and
// of evaluation draws, per model.
type gaussianPilots struct {
	Mean, SD [][]float64
	Draws    int
}

func (gaussianPilots) Name() string { return "gaussian" }

// CheckSpace (trj.SpaceChecker) refuses, before any work, posteriors that
// do not fit the space.
func (g gaussianPilots) CheckSpace(space *ppl.Space) error {
	if len(g.Mean) != space.NumModels() || len(g.SD) != space.NumModels() {
		return fmt.Errorf("gaussianPilots: %d means and %d SDs for %d models", len(g.Mean), len(g.SD), space.NumModels())
	}
	for k := range g.Mean {
		if n := space.ModelDim(k); len(g.Mean[k]) != n || len(g.SD[k]) != n {
			return fmt.Errorf("gaussianPilots: model %d has dimension %d, its mean %d and SD %d", k, n, len(g.Mean[k]), len(g.SD[k]))
		}
	}
	if g.Draws < 40 {
		return fmt.Errorf("gaussianPilots: Draws = %d: need at least 40", g.Draws)
	}
	return nil
}

// Pilot draws model job.K's training draws and its evaluation draws in
// job.Groups groups (20 when zero), from a stream of its own: Run calls it
// for several models at once, and it changes nothing shared.
func (g gaussianPilots) Pilot(_ context.Context, job *trj.PilotJob) (*trj.Pilot, error) {
	rng := rand.New(rand.NewPCG(job.Seed, uint64(job.K)))
	draw := func() []float64 {
		x := make([]float64, len(g.Mean[job.K]))
		for i := range x {
			x[i] = g.Mean[job.K][i] + g.SD[job.K][i]*rng.NormFloat64()
		}
		return x
	}
	groups := job.Groups
	if groups == 0 {
		groups = 20
	}
	p := &trj.Pilot{Eval: make([][][]float64, groups)}
	for range g.Draws {
		p.Train = append(p.Train, draw())
	}
	for i := range g.Draws {
		p.Eval[i%groups] = append(p.Eval[i%groups], draw())
	}
	return p, nil
}

// endsnippet:pilot

// TestExtendPilotAndMove compares one shared mean of two data (model 0:
// y_j ~ N(θ, 1), θ ~ N(0, 1)) with two means (model 1: y_j ~ N(θ_j, 1),
// θ_j ~ N(0, 1)), whose posteriors and evidences are Gaussian, with
// gaussianPilots' exact posterior draws and coordinateMove's moves: the
// chains' and the bridge's π(two means | y) within 4 reported standard
// errors of the exact value.
func TestExtendPilotAndMove(t *testing.T) {
	y := []float64{1.2, -0.4}
	one := ppl.NewBuilder()
	theta := one.Real("theta", 1)
	one.Sample(ppl.Normal{Mu: 0.0, Sigma: 1.0}, theta)
	one.Sample(ppl.Normal{Mu: theta, Sigma: 1.0}, one.Data("y1", y[:1]))
	one.Sample(ppl.Normal{Mu: theta, Sigma: 1.0}, one.Data("y2", y[1:]))
	two := ppl.NewBuilder()
	thetas := two.Real("theta", 2)
	two.Sample(ppl.Normal{Mu: 0.0, Sigma: 1.0}, thetas)
	two.Sample(ppl.Normal{Mu: thetas, Sigma: 1.0}, two.Data("y", y))
	var models []ppl.Model
	for _, b := range []*ppl.Builder{one, two} {
		m, err := b.Model()
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
	}
	space, err := ppl.NewSpace(models, ppl.WithLabels("one mean", "two means"))
	if err != nil {
		t.Fatal(err)
	}
	// Posteriors: θ | y ~ N((y₁+y₂)/3, 1/3) and θ_j | y ~ N(y_j/2, 1/2).
	// Evidences: y ~ N(0, I + 11ᵀ) (determinant 3) and y ~ N(0, 2I).
	pilots := gaussianPilots{Draws: 1000,
		Mean: [][]float64{{(y[0] + y[1]) / 3}, {y[0] / 2, y[1] / 2}},
		SD:   [][]float64{{math.Sqrt(1.0 / 3)}, {math.Sqrt(0.5), math.Sqrt(0.5)}}}
	quad := (2*y[0]*y[0] + 2*y[1]*y[1] - 2*y[0]*y[1]) / 3
	logZ0 := -math.Log(2*math.Pi) - 0.5*math.Log(3) - quad/2
	logZ1 := -math.Log(4*math.Pi) - (y[0]*y[0]+y[1]*y[1])/4
	exact := 1 / (1 + math.Exp(logZ0-logZ1))

	s := &trj.Settings{Seed: 1, Pilot: trj.PilotSettings{Method: pilots}, Proposals: &trj.AffineTransports{},
		Chains: trj.ChainSettings{Chains: 4, Steps: 2000, Within: coordinateMove{Scale: 2}}}
	res, err := trj.Run(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exact %.4f\n%s", exact, res)
	if res.Pilot != "gaussian" {
		t.Errorf("the result's pilot method is %q, want gaussian", res.Pilot)
	}
	if c := res.Chain[1]; !c.Mixed || math.Abs(c.P-exact) > 4*c.MCSE {
		t.Errorf("chains: %.4f ± %.4f, exact %.4f", c.P, c.MCSE, exact)
	}
	if b, se := res.Bridge.Normalized[1], res.Bridge.NormalizedSE[1]; math.Abs(b-exact) > 4*se {
		t.Errorf("bridge: %.4f ± %.4f, exact %.4f", b, se, exact)
	}

	// The methods' own checks refuse bad settings before any work.
	bad := *s
	bad.Pilot.Method = gaussianPilots{Draws: 10, Mean: pilots.Mean, SD: pilots.SD}
	if _, err := trj.Run(context.Background(), space, &bad); err == nil || !strings.Contains(err.Error(), "Draws = 10") {
		t.Errorf("10 pilot draws: error %v", err)
	}
	bad = *s
	bad.Chains.Within = coordinateMove{Scale: -1}
	if _, err := trj.Run(context.Background(), space, &bad); err == nil || !strings.Contains(err.Error(), "Scale = -1") {
		t.Errorf("scale -1: error %v", err)
	}
}
