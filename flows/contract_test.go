package flows

import (
	"errors"
	"math"
	"testing"
)

// The contracts of docs/architecture.md, restated so that this package
// checks it satisfies them without importing kernels.
type transport interface {
	Dim() int
	Forward(theta, z []float64) (logDet float64, err error)
	Inverse(z, theta []float64) (logDet float64, err error)
}

type conditionalTransport interface {
	MaxDim() int
	Forward(k int, xi, z []float64) (logDet float64, err error)
	Inverse(k int, z, xi []float64) (logDet float64, err error)
}

var (
	_ transport            = (*Affine)(nil)
	_ transport            = (*RQMA)(nil)
	_ conditionalTransport = (*ConditionalRQMA)(nil)
	_ Density              = (*Affine)(nil)
	_ Density              = (*RQMA)(nil)
)

// TestExtremeInputs checks that points so far out that the sigmoid saturates
// give ErrNonFinite, not a panic or a NaN without an error.
func TestExtremeInputs(t *testing.T) {
	f := randomRQMA(t, 2, PaperRQMAConfig(), 2)
	z := make([]float64, 2)
	for _, th := range [][]float64{{1e300, 0}, {-1e300, 0}, {0, 1e20}} {
		if _, err := f.Forward(th, z); !errors.Is(err, ErrNonFinite) {
			t.Errorf("Forward(%v): error %v, want ErrNonFinite", th, err)
		}
	}
	th := make([]float64, 2)
	if _, err := f.Inverse([]float64{1e10, 0}, th); !errors.Is(err, ErrNonFinite) {
		t.Errorf("Inverse far in the tail: error %v, want ErrNonFinite", err)
	}
	c := randomConditional(t, RQMAConfig{Layers: 1, Bins: 4, HiddenPerDim: 2}, 1)
	if _, err := c.Forward(0, []float64{1e300, 0, 0}, make([]float64, 3)); !errors.Is(err, ErrNonFinite) {
		t.Errorf("conditional Forward far out: error %v", err)
	}
}

// TestInPlace checks that Forward and Inverse accept the same slice as input
// and output.
func TestInPlace(t *testing.T) {
	a, r, c := testFlows(t)
	for name, f := range map[string]transport{"affine": a, "rqma": r} {
		x := []float64{0.3, -0.4}
		z := make([]float64, 2)
		l1, _ := f.Forward(x, z)
		v := append([]float64(nil), x...)
		l2, _ := f.Forward(v, v)
		if l1 != l2 || v[0] != z[0] || v[1] != z[1] {
			t.Errorf("%s: in-place Forward differs", name)
		}
		l3, _ := f.Inverse(v, v)
		if math.Abs(l3+l2) > 1e-9 || math.Abs(v[0]-x[0]) > 1e-9 || math.Abs(v[1]-x[1]) > 1e-9 {
			t.Errorf("%s: in-place Inverse gives %v (log-det %v), want %v (%v)", name, v, l3, x, -l2)
		}
	}
	xi := []float64{0.1, 0.5, -1}
	z := make([]float64, 3)
	l1, _ := c.Forward(1, xi, z)
	v := append([]float64(nil), xi...)
	l2, _ := c.Forward(1, v, v)
	if l1 != l2 || v[2] != z[2] {
		t.Error("conditional: in-place Forward differs")
	}
}
