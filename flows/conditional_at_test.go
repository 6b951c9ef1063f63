package flows

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestConditionalAt checks that the transport of a model given by its
// context and mask is the trained model's, and is a bijection with the
// right log-determinant for a context outside the training set.
func TestConditionalAt(t *testing.T) {
	cfg := RQMAConfig{Layers: 2, Bins: 8, HiddenPerDim: 4, SigmoidScale: 1}
	f := randomConditional(t, cfg, 3)
	spec := testSpec()
	rng := rand.New(rand.NewPCG(4, 5))
	xi, z, z2, back := make([]float64, 3), make([]float64, 3), make([]float64, 3), make([]float64, 3)
	for trial := range 12 {
		k := trial % 3
		at, err := f.At(spec.Contexts[k], spec.Active[k])
		if err != nil {
			t.Fatal(err)
		}
		for i := range xi {
			xi[i] = rng.NormFloat64()
		}
		ld1, err := f.Forward(k, xi, z)
		if err != nil {
			t.Fatal(err)
		}
		// interleave with another model so that the bindings change
		other, _ := f.At([]float64{0.5, 0.5, 0}, []bool{true, false, true})
		if _, err := other.Forward(xi, z2); err != nil {
			t.Fatal(err)
		}
		ld2, err := at.Forward(xi, z2)
		if err != nil {
			t.Fatal(err)
		}
		for i := range z {
			if z[i] != z2[i] {
				t.Fatalf("model %d: At gives %v, Forward %v", k, z2, z)
			}
		}
		if ld1 != ld2 {
			t.Fatalf("model %d: log-dets %v and %v", k, ld2, ld1)
		}
		ldF, _ := other.Forward(xi, z)
		ldI, err := other.Inverse(z, back)
		if err != nil {
			t.Fatal(err)
		}
		for i := range xi {
			if math.Abs(back[i]-xi[i]) > 1e-9*(1+math.Abs(xi[i])) || math.Abs(ldF+ldI) > 1e-8 {
				t.Fatalf("new context: inverse(forward(%v)) = %v, log-dets %v %v", xi, back, ldF, ldI)
			}
		}
		g := f.Clone()
		o2 := other.With(g)
		want := fdLogDet(t, func(out, in []float64) error { _, err := o2.Forward(in, out); return err }, xi)
		if math.Abs(want-ldF) > 1e-5*(1+math.Abs(want)) {
			t.Fatalf("new context: log-det %v, finite differences %v", ldF, want)
		}
	}
	if _, err := f.At([]float64{1}, []bool{true, true, true}); err == nil {
		t.Error("short context: no error")
	}
}
