package factor

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/flows"
)

// TestLoadingScale checks that the β_jj-scale wrapper inverts exactly,
// that its log-determinant matches finite differences of Forward, that its
// density is consistent with Forward, and that a proposal with β_jj ≤ 0
// is an error.
func TestLoadingScale(t *testing.T) {
	lay := NewLayout(6, 2)
	n := lay.Dim()
	rng := rand.New(rand.NewPCG(3, 4))
	draws := make([][]float64, 400)
	for i := range draws {
		draws[i] = make([]float64, n)
		if err := SamplePrior(rng, lay, draws[i]); err != nil {
			t.Fatal(err)
		}
	}
	a, err := flows.FitAffine(toLoadingScale(draws, lay.LogDiag), nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := newLoadingScale(a, lay.LogDiag)
	u := draws[0]
	z, back := make([]float64, n), make([]float64, n)
	ldF, err := tr.Forward(u, z)
	if err != nil {
		t.Fatal(err)
	}
	ldI, err := tr.Inverse(z, back)
	if err != nil {
		t.Fatal(err)
	}
	for i := range u {
		if math.Abs(back[i]-u[i]) > 1e-9 {
			t.Fatalf("round trip: coordinate %d %v → %v", i, u[i], back[i])
		}
	}
	if math.Abs(ldF+ldI) > 1e-9 {
		t.Errorf("log-determinants %v and %v do not cancel", ldF, ldI)
	}
	jac := mat.NewDense(n, n, nil)
	out := make([]float64, n)
	fd.Jacobian(jac, func(dst, x []float64) {
		if _, err := tr.Forward(x, out); err != nil {
			t.Fatal(err)
		}
		copy(dst, out)
	}, u, &fd.JacobianSettings{Formula: fd.Central})
	var lu mat.LU
	lu.Factorize(jac)
	ld, _ := lu.LogDet()
	if math.Abs(ld-ldF) > 1e-5 {
		t.Errorf("log|det J| %v, finite differences %v", ldF, ld)
	}
	lq, err := tr.LogDensity(u)
	if err != nil {
		t.Fatal(err)
	}
	want := ldF
	for _, v := range z {
		want -= v*v/2 + 0.5*math.Log(2*math.Pi)
	}
	if math.Abs(lq-want) > 1e-9 {
		t.Errorf("log-density %v, want %v", lq, want)
	}
	// Find z whose inverse has β_11 ≤ 0: push the first diagonal loading far
	// below its mean.
	for i := range z {
		z[i] = 0
	}
	z[lay.LogDiag[0]] = -50
	if _, err := tr.Inverse(z, back); err == nil {
		t.Error("no error for β_11 ≤ 0")
	}
}
