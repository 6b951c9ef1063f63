package ppl

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
)

// here returns "ppl/<file>:<line>" of its caller's line plus delta.
func here(delta int) string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("ppl/%s:%d", file[strings.LastIndex(file, "/")+1:], line+delta)
}

func TestFirstErrorNamesCaller(t *testing.T) {
	cases := []struct {
		name  string
		build func(b *Builder) string // returns the expected location
	}{
		{"duplicate-name", func(b *Builder) string {
			b.Real("x")
			b.Real("x")
			return here(-1)
		}},
		{"check", func(b *Builder) string {
			x := b.Real("x", 2)
			y := b.Real("y", 3)
			b.Check(gorgonia.Add(x, y))
			return here(-1)
		}},
		{"distribution", func(b *Builder) string { // the error arises in dist.go
			x := b.Real("x", 2)
			b.Sample(Normal{Mu: []float64{0, 0, 0}, Sigma: 1}, x)
			return here(-1)
		}},
		{"no-parameters", func(b *Builder) string {
			b.Sample(Normal{Mu: 0, Sigma: 1}, 0.5)
			return "" // the error names the Model call
		}},
		{"deprecated-alias", func(b *Builder) string {
			b.Real("x")
			b.Must(nil, errors.New("boom"))
			return here(-1)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuilder()
			want := c.build(b)
			_, err := b.Model()
			if want == "" {
				want = here(-2)
			}
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), want+": ppl: ") {
				t.Errorf("error %q does not start with %q", err, want+": ppl: ")
			}
		})
	}
}

func TestDeprecatedAliases(t *testing.T) {
	b := NewBuilder()
	x := b.Real("x")
	b.Add(b.Must(gorgonia.Neg(b.Must(gorgonia.Square(x)))))
	m, err := b.Model()
	if err != nil {
		t.Fatal(err)
	}
	lp, err := m.LogDensity([]float64{3})
	if err != nil || lp != -9 {
		t.Errorf("log-density %v, %v; want -9", lp, err)
	}
}
