package ppl

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// mvtRef is the multivariate Student-t log-density written with gonum mat.
type mvtRef struct {
	nu float64
	mu []float64
	ch *mat.Cholesky
}

func (r mvtRef) LogProb(x []float64) float64 {
	n := float64(len(x))
	d := mat.NewVecDense(len(x), nil)
	d.SubVec(mat.NewVecDense(len(x), x), mat.NewVecDense(len(x), r.mu))
	var z mat.VecDense
	if err := r.ch.SolveVecTo(&z, d); err != nil {
		panic(err)
	}
	q := mat.Dot(d, &z)
	return lg((r.nu+n)/2) - lg(r.nu/2) - n/2*math.Log(r.nu*math.Pi) - 0.5*r.ch.LogDet() - (r.nu+n)/2*math.Log1p(q/r.nu)
}

func TestMvStudentT(t *testing.T) {
	mu := []float64{0.5, -1, 2}
	cov := mat.NewSymDense(3, []float64{2, 0.6, -0.3, 0.6, 1.5, 0.4, -0.3, 0.4, 1})
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		t.Fatal("not SPD")
	}
	var l mat.TriDense
	ch.LTo(&l)
	rows := mat.NewDense(3, 3, []float64{0.1, 0.2, 0.3, -1, 2, 0, 30, -20, 10})
	ref := mvtRef{4.5, mu, &ch}
	want := ref.LogProb(rows.RawRowView(0)) + ref.LogProb(rows.RawRowView(1)) + ref.LogProb(rows.RawRowView(2))
	cases := []distCase{
		{"node-nu/const-cov/matrix-x", func(b *Builder) {
			b.Sample(MvStudentT{Nu: b.Real("nu"), Mu: mu, Sigma: cov}, b.DataMatrix("y", rows))
		}, []float64{4.5}, want},
		{"const-L/node-mu/matrix-x", func(b *Builder) {
			b.Sample(MvStudentT{Nu: 4.5, Mu: b.Real("mu", 3), L: &l}, b.DataMatrix("y", rows))
		}, mu, want},
		{"node-cov/vector-x", func(b *Builder) {
			b.Sample(MvStudentT{Nu: 4.5, Mu: mu, Sigma: b.Real("S", 3, 3)}, b.Data("x", rows.RawRowView(2)))
		}, denseRows(cov), ref.LogProb(rows.RawRowView(2))},
		{"node-x/const-cov", func(b *Builder) {
			b.Sample(MvStudentT{Nu: 4.5, Mu: mu, Sigma: cov}, b.Real("x", 3))
		}, rows.RawRowView(1), ref.LogProb(rows.RawRowView(1))},
		{"one-dimension-is-StudentT", func(b *Builder) {
			b.Sample(MvStudentT{Nu: b.Real("nu"), Mu: 0.3, Sigma: mat.NewDense(1, 1, []float64{4})}, b.DataMatrix("y", mat.NewDense(2, 1, []float64{-1, 5})))
		}, []float64{2.5}, distuv.StudentsT{Mu: 0.3, Sigma: 2, Nu: 2.5}.LogProb(-1) + distuv.StudentsT{Mu: 0.3, Sigma: 2, Nu: 2.5}.LogProb(5)},
	}
	checkDistCases(t, cases)
	t.Run("pointwise", func(t *testing.T) {
		m, _ := buildBoth(t, func(b *Builder) {
			lps, err := MvStudentT{Nu: b.Real("nu"), Mu: mu, L: &l}.LogProbs(b.DataMatrix("y", rows))
			b.AddLogDensity(b.Check(lps, err))
		})
		checkLogDensity(t, "compiled", m, []float64{4.5}, want, 1e-11)
	})
}

func TestMvStudentTErrors(t *testing.T) {
	eye := mat.NewDense(2, 2, []float64{1, 0, 0, 1})
	for _, c := range []struct {
		name  string
		build func(b *Builder)
	}{
		{"zero-nu", func(b *Builder) { b.Sample(MvStudentT{Nu: 0.0, Mu: 0.0, Sigma: eye}, b.Real("x", 2)) }},
		{"vector-nu", func(b *Builder) { b.Sample(MvStudentT{Nu: []float64{1, 2}, Mu: 0.0, Sigma: eye}, b.Real("x", 2)) }},
		{"both", func(b *Builder) { b.Sample(MvStudentT{Nu: 3.0, Mu: 0.0, Sigma: eye, L: eye}, b.Real("x", 2)) }},
		{"not-spd", func(b *Builder) {
			b.Sample(MvStudentT{Nu: 3.0, Mu: 0.0, Sigma: mat.NewDense(2, 2, []float64{1, 2, 2, 1})}, b.Real("x", 2))
		}},
		{"shape", func(b *Builder) { b.Sample(MvStudentT{Nu: 3.0, Mu: 0.0, Sigma: eye}, b.Real("x", 3)) }},
	} {
		t.Run(c.name, func(t *testing.T) { checkBuildFails(t, c.build) })
	}
}
