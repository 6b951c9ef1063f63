package selection

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
)

// tinySpace is a Gaussian selection over p terms of 20 rows, with the
// model prior q (nil: the default).
func tinySpace(tb testing.TB, p int, q ppl.ModelPrior) *ppl.SelectionSpace {
	tb.Helper()
	X, y := selectData(20, p, 3)
	sp, err := glmselect.Gaussian(X, y, &glmselect.Settings{ModelPrior: q})
	if err != nil {
		tb.Fatal(err)
	}
	return sp
}

// TestSettingsBounds checks that settings out of bounds are refused by
// Validate and by Run before any step, with an error naming the setting:
// counts that overflow or cannot fit in memory, Top sizing a slice, and
// shards (before, MaxInt chains or Top panicked, 1e9 steps died of
// out-of-memory and Warmup = MaxInt gave a result of no steps).
func TestSettingsBounds(t *testing.T) {
	sp := tinySpace(t, 3, nil)
	for _, c := range []struct {
		name   string
		s      Settings
		want   string
		tooBig bool // errors.Is(err, kernels.ErrTooLarge), where the machine's memory is known
	}{
		{name: "steps 1e9", s: Settings{Steps: 1e9}, want: "Settings.Steps = 1000000000", tooBig: true},
		{name: "steps MaxInt", s: Settings{Steps: math.MaxInt}, want: "Settings.Steps = 9223372036854775807"},
		{name: "chains MaxInt", s: Settings{Chains: math.MaxInt}, want: "Settings.Chains = 9223372036854775807: at most 65536 chains"},
		{name: "chains 1e5 of one step", s: Settings{Chains: 1e5, Steps: 1}, want: "Settings.Chains = 100000"},
		{name: "top MaxInt", s: Settings{Top: math.MaxInt}, want: "Settings.Top = 9223372036854775807"},
		{name: "warm-up MaxInt", s: Settings{Warmup: math.MaxInt}, want: "Settings.Warmup = 9223372036854775807 + Settings.Steps = 40000 overflow"},
		{name: "negative chains", s: Settings{Chains: -1}, want: "Settings.Chains = -1: need at least 1"},
		{name: "negative steps", s: Settings{Steps: -1}, want: "Settings.Steps = -1"},
		{name: "negative top", s: Settings{Top: -1}, want: "Settings.Top = -1"},
		{name: "shard out of range", s: Settings{Chains: 2, Shard: []int{2}}, want: "Settings.Shard holds chain 2"},
		{name: "shard negative", s: Settings{Chains: 2, Shard: []int{-1}}, want: "Settings.Shard holds chain -1"},
		{name: "shard twice", s: Settings{Chains: 2, Shard: []int{1, 1}}, want: "holds chain 1 twice"},
		{name: "shard empty", s: Settings{Shard: []int{}}, want: "Settings.Shard is empty"},
	} {
		if c.tooBig && runs.MemoryLimit() == 0 {
			continue // nothing to refuse where the machine's memory is not known
		}
		check := func(how string, err error) {
			t.Helper()
			switch {
			case err == nil || !strings.HasPrefix(err.Error(), "selection: ") || !strings.Contains(err.Error(), c.want):
				t.Errorf("%s: %s: err = %v, want one starting \"selection: \" and saying %q", c.name, how, err, c.want)
			case c.tooBig && !errors.Is(err, kernels.ErrTooLarge):
				t.Errorf("%s: %s: err = %v, want kernels.ErrTooLarge", c.name, how, err)
			}
		}
		s := c.s
		check("Validate", s.Validate())
		s.Progress = func(pipeline.Progress) { t.Fatalf("%s: Run made a step", c.name) }
		res, err := Run(context.Background(), sp, &s)
		check("Run", err)
		if res != nil {
			t.Errorf("%s: Run returned a result of %d steps", c.name, res.Steps)
		}
	}
}

// nanPrior is the uniform prior over models but for those of size Size
// (and, when Full, the model of every term), whose log p(γ) is Bad.
type nanPrior struct {
	Size int
	Full bool
	Bad  float64
}

func (q nanPrior) LogModelPrior(t ppl.Terms) float64 {
	if t.Count() == q.Size || (q.Full && t.Count() == t.P()) {
		return q.Bad
	}
	return ppl.UniformModels{}.LogModelPrior(t)
}

func (nanPrior) String() string { return "nan" }

// TestNaNModelPrior checks that a model prior giving NaN (or +Inf) is
// refused with an error naming the model: before the run for the empty,
// full and start models, else at the first step that meets it (before, it
// was accepted and gave NaN acceptance ratios silently).
func TestNaNModelPrior(t *testing.T) {
	start, _ := ppl.NewTerms(4, 0, 2)
	for _, c := range []struct {
		name    string
		q       nanPrior
		start   *ppl.Terms
		upFront bool
		want    string
	}{
		{name: "empty model", q: nanPrior{Size: 0, Bad: math.NaN()}, upFront: true, want: "model {} log p(γ) = NaN"},
		{name: "full model", q: nanPrior{Size: -1, Full: true, Bad: math.NaN()}, upFront: true, want: "model {x1, x2, x3, x4} log p(γ) = NaN"},
		{name: "start model", q: nanPrior{Size: 2, Bad: math.NaN()}, start: &start, upFront: true, want: "model {x1, x3} log p(γ) = NaN"},
		{name: "+Inf", q: nanPrior{Size: 0, Bad: math.Inf(1)}, upFront: true, want: "log p(γ) = +Inf"},
		{name: "models of size 2", q: nanPrior{Size: 2, Bad: math.NaN()}, want: "log p(γ) = NaN"},
	} {
		sp := tinySpace(t, 4, c.q)
		var stepped bool
		s := &Settings{Chains: 1, Warmup: 10, Steps: 2000, Start: c.start, Progress: func(pipeline.Progress) { stepped = true }}
		res, err := Run(context.Background(), sp, s)
		switch {
		case err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "ModelPrior"):
			t.Errorf("%s: err = %v, want one saying %q", c.name, err, c.want)
		case res != nil:
			t.Errorf("%s: a result of %d steps", c.name, res.Steps)
		case c.upFront && stepped:
			t.Errorf("%s: refused only after steps were made", c.name)
		}
		// -Inf excludes a model: accepted.
		if c.name == "models of size 2" {
			c.q.Bad = math.Inf(-1)
			if _, err := Run(context.Background(), tinySpace(t, 4, c.q), &Settings{Chains: 1, Warmup: 10, Steps: 200}); err != nil {
				t.Errorf("a prior of −Inf for models of size 2: %v", err)
			}
		}
	}
}

// TestNoWarmup checks the warm-up rule of every trj settings struct: 0 is
// the default and a negative Warmup asks for none (trj select -warmup 0
// sends -1), which the result records as 0.
func TestNoWarmup(t *testing.T) {
	sp := tinySpace(t, 3, nil)
	res, err := Run(context.Background(), sp, &Settings{Seed: 1, Chains: 1, Warmup: -1, Steps: 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.Warmup != 0 || res.Steps != 20 {
		t.Errorf("Warmup -1: result has warm-up %d and %d kept steps, want 0 and 20", res.Warmup, res.Steps)
	}
}
