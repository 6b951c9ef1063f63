package selection

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/ppl"
)

// knownScale is y ~ N(X_γ β_γ, I), β_j ~ N(0, τ²): a regression of known
// noise scale without intercept, whose evidence y ~ N(0, I + τ² X_γ X_γᵀ)
// is in closed form and whose posterior given γ is Gaussian, so that
// FullConditional's transports are exact.
type knownScale struct {
	X   *mat.Dense
	y   []float64
	tau float64
}

func (k *knownScale) logEvidence(t ppl.Terms) (float64, error) {
	n, _ := k.X.Dims()
	S := mat.NewSymDense(n, nil)
	for i := range n {
		S.SetSym(i, i, 1)
	}
	for _, j := range t.Indices() {
		c := mat.Col(nil, j, k.X)
		S.SymRankOne(S, k.tau*k.tau, mat.NewVecDense(n, c))
	}
	var ch mat.Cholesky
	if !ch.Factorize(S) {
		return math.NaN(), nil
	}
	var v mat.VecDense
	if err := ch.SolveVecTo(&v, mat.NewVecDense(n, k.y)); err != nil {
		return math.NaN(), err
	}
	return -0.5*float64(n)*math.Log(2*math.Pi) - 0.5*ch.LogDet() - 0.5*floats.Dot(k.y, v.RawVector().Data), nil
}

func (k *knownScale) space(t *testing.T, withEvidence bool) *ppl.SelectionSpace {
	t.Helper()
	n, p := k.X.Dims()
	build := func(b *ppl.Builder, tm ppl.Terms) error {
		idx := tm.Indices()
		// An always-in N(0, 1) coordinate: models need one parameter, and
		// it integrates to 1, leaving the evidence as it is.
		b.Sample(ppl.Normal{Mu: 0.0, Sigma: 1.0}, b.Real("nuisance"))
		if len(idx) == 0 {
			b.AddLogDensity(gorgonia.NewConstant(-0.5*float64(n)*math.Log(2*math.Pi) - 0.5*floats.Dot(k.y, k.y)))
			return nil
		}
		beta := b.Real("beta", len(idx))
		b.Sample(ppl.Normal{Mu: 0.0, Sigma: k.tau}, beta)
		x := mat.NewDense(n, len(idx), nil)
		for c, j := range idx {
			x.SetCol(c, mat.Col(nil, j, k.X))
		}
		b.AddLogDensity(b.Check(ops.NormalIDGLM(b.DataMatrix("X", x), beta, b.Data("y", k.y), gorgonia.NewConstant(1.0))))
		return nil
	}
	opts := []ppl.SelectionOption{}
	if withEvidence {
		opts = append(opts, ppl.WithModelEvidence(k.logEvidence))
	}
	sp, err := ppl.NewSelectionSpace(p, build, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// exact enumerates the 2^p models' PIPs under the beta-binomial(1, 1)
// model prior.
func (k *knownScale) exact(t *testing.T, sp *ppl.SelectionSpace) []float64 {
	t.Helper()
	p := sp.P()
	lw := make([]float64, 1<<p)
	for m := range lw {
		var idx []int
		for j := range p {
			if m&(1<<j) != 0 {
				idx = append(idx, j)
			}
		}
		tm, _ := ppl.NewTerms(p, idx...)
		le, err := k.logEvidence(tm)
		if err != nil {
			t.Fatal(err)
		}
		lp, _ := sp.LogPrior(tm)
		lw[m] = le + lp
	}
	z := floats.LogSumExp(lw)
	pip := make([]float64, p)
	for m, v := range lw {
		for j := range p {
			if m&(1<<j) != 0 {
				pip[j] += math.Exp(v - z)
			}
		}
	}
	return pip
}

// TestInformedExactEvidence runs the informed jumps on a space that knows
// its models' evidences (ppl.WithModelEvidence): the neighbours are
// weighed without being built, the PIPs are within 4 MCSE of the
// enumeration, and the reported evidences are the exact ones.
func TestInformedExactEvidence(t *testing.T) {
	X, y := selectData(60, 8, 3)
	k := &knownScale{X: X, y: y, tau: 1}
	sp := k.space(t, true)
	want := k.exact(t, sp)
	res, err := Run(context.Background(), sp, &Settings{Seed: 2, Steps: 2000, Warmup: 200, Informed: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Proposal != (FullConditional{}).String() {
		t.Errorf("proposal %s: informed jumps with exact evidences need no Laplace fit per model", res.Proposal)
	}
	for j, e := range res.PIP {
		if !e.Mixed {
			if math.Abs(e.P-want[j]) > 1e-3 {
				t.Errorf("%s: constant PIP %v, exact %.5f", res.Names[j], e.P, want[j])
			}
			continue
		}
		if z := (e.P - want[j]) / e.MCSE; math.Abs(z) > 4 {
			t.Errorf("%s: PIP %.4f ± %.4f, exact %.4f (z = %.2f)", res.Names[j], e.P, e.MCSE, want[j], z)
		}
	}
	for _, m := range res.Top {
		le, _ := k.logEvidence(m.Terms)
		if float64(m.LogEvidence) != le {
			t.Errorf("model %v: log evidence %v, exact %v", m.Indices, m.LogEvidence, le)
		}
	}
	t.Logf("built %d models in %d steps", res.Built, 4*2200)
}

// TestInformedNeedsEvidence: without exact evidences or Laplace fits the
// informed choice has nothing to weigh by, and Run says so.
func TestInformedNeedsEvidence(t *testing.T) {
	X, y := selectData(30, 4, 3)
	sp := (&knownScale{X: X, y: y, tau: 1}).space(t, false)
	_, err := Run(context.Background(), sp, &Settings{Seed: 1, Steps: 10, Informed: true, Proposal: FullConditional{}})
	if err == nil {
		t.Fatal("no error")
	}
	t.Log(err)
}
