package ppl

import (
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
)

// TestSharedNamesDiffer: WithShared refuses models whose shared coordinates
// are different parameters (x.1 would be carried to y.2), and accepts the
// same parameters whatever the models' own ones.
func TestSharedNamesDiffer(t *testing.T) {
	model := func(build func(b *Builder)) Model { return mustModel(t, build) }
	normal := func(name string, shape ...int) func(b *Builder) {
		return func(b *Builder) { b.Sample(Normal{Mu: 0, Sigma: 1}, b.Real(name, shape...)) }
	}
	both := func(fs ...func(b *Builder)) func(b *Builder) {
		return func(b *Builder) {
			for _, f := range fs {
				f(b)
			}
		}
	}
	xs := model(both(normal("a"), normal("x", 2)))    // a, x.1, x.2
	ys := model(both(normal("b", 2), normal("y", 2))) // b.1, b.2, y.1, y.2
	xa := model(both(normal("x", 2), normal("a")))    // the same parameters, in another order
	same := model(both(normal("c", 3), normal("x", 2)))
	simplex := func(b *Builder) { b.Simplex("p", 3) } // flat: 2 unconstrained coordinates p#1, p#2
	for _, c := range []struct {
		name   string
		models []Model
		n      int
		want   string
	}{
		{"other names", []Model{xs, ys}, 2, "[y.1 y.2] in model 1 (1) but [x.1 x.2] in model 0 (0)"},
		{"other order", []Model{xs, xa}, 1, "[a] in model 1 (1) but [x.2] in model 0"},
		{"same", []Model{xs, same}, 2, ""},
		{"one shared, names differ", []Model{xs, model(both(normal("x", 1), normal("z")))}, 1, "[z] in model 1"},
		{"transformed", []Model{model(both(normal("a"), simplex)), model(both(normal("b", 2), simplex))}, 2, ""},
	} {
		_, err := NewSpace(c.models, WithShared(c.n))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

// TestSharedNamesDifferViews: models of masked selection spaces (views of
// a saturated model) name their coordinates too, so WithShared refuses
// views whose shared coordinates are different parameters (sigma carried to
// tau), alone or beside a model built on its own, and accepts the same
// ones.
func TestSharedNamesDifferViews(t *testing.T) {
	view := func(shared string, idx ...int) Model {
		t.Helper()
		sp, err := NewMaskedSelectionSpace(2, func(b *Builder, mask *gorgonia.Node) error {
			beta := b.Real("beta", 2)
			s := b.Positive(shared)
			b.AddLogDensity(b.Check(gorgonia.HadamardProd(b.Check(Normal{Mu: 0.0, Sigma: 1.0}.LogProbs(beta)), mask)))
			b.Sample(Gamma{Shape: 2.0, Rate: 1.0}, s)
			return nil
		}, WithSelectionShared(1))
		if err != nil {
			t.Fatal(err)
		}
		tm, _ := NewTerms(2, idx...)
		m, err := sp.Model(tm)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	own := mustModel(t, func(b *Builder) {
		b.Sample(Normal{Mu: 0, Sigma: 1}, b.Real("beta", 1))
		b.Sample(Gamma{Shape: 2.0, Rate: 1.0}, b.Positive("tau"))
	})
	for _, c := range []struct {
		name   string
		models []Model
		want   string
	}{
		{"views, other names", []Model{view("sigma", 1), view("tau", 0, 1)}, "[tau] in model 1 (1) but [sigma] in model 0 (0)"},
		{"view and own model", []Model{view("sigma"), own}, "[tau] in model 1 (1) but [sigma] in model 0 (0)"},
		{"views, same", []Model{view("tau", 1), view("tau"), own}, ""},
	} {
		_, err := NewSpace(c.models, WithShared(1))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err = %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}
