package ppl

import (
	"strings"
	"testing"
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
