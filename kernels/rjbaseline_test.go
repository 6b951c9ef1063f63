package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trjgo/trj/kernels"
)

// lwDraws returns n draws of (β₀, β₁, Λ) with β ~ N(μ, B) and
// Λ ~ IG(a, b), Λ in coordinate 1 (stored as log Λ if logLambda).
func lwDraws(rng *rand.Rand, n int, logLambda bool) [][]float64 {
	ig := distuv.InverseGamma{Alpha: 6, Beta: 3, Src: rng}
	out := make([][]float64, n)
	for i := range out {
		z0, z1 := rng.NormFloat64(), rng.NormFloat64()
		l := ig.Rand()
		if logLambda {
			l = math.Log(l)
		}
		out[i] = []float64{1 + 2*z0, l, -1 + 0.5*z0 + 0.5*z1}
	}
	return out
}

func TestLopesWestProposal(t *testing.T) {
	for _, logLambda := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(31, 1))
		draws := lwDraws(rng, 20000, logLambda)
		q, err := kernels.NewLopesWestProposal(draws, []int{0, 2}, []int{1}, logLambda)
		if err != nil {
			t.Fatal(err)
		}
		// IG(6, 3) has mode 3/7. A kernel estimate of the mode from 2·10⁴
		// draws is within a few percent; its error has no simple standard
		// error, so this is a coarse check only.
		if mode := q.Scale()[0] / kernels.LopesWestShape; math.Abs(mode-3.0/7) > 0.05*3/7 {
			t.Errorf("logLambda=%v: estimated mode %v, want ≈ %v", logLambda, mode, 3.0/7)
		}
		mu := q.Mean()
		// The density must be N(μ̂, 2B̂) × IG(18, 18υ²) exactly: compare with
		// gonum's distributions using the fitted quantities.
		x := mat.NewDense(len(draws), 2, nil)
		for i, d := range draws {
			x.Set(i, 0, d[0])
			x.Set(i, 1, d[2])
		}
		var cov mat.SymDense
		stat.CovarianceMatrix(&cov, x, nil)
		cov.ScaleSym(2, &cov)
		var ch mat.Cholesky
		if !ch.Factorize(&cov) {
			t.Fatal("covariance not positive definite")
		}
		mvnLogProb := func(y []float64) float64 {
			d := mat.NewVecDense(2, []float64{y[0] - mu[0], y[1] - mu[1]})
			var w mat.VecDense
			if err := ch.SolveVecTo(&w, d); err != nil {
				t.Fatal(err)
			}
			return -0.5*mat.Dot(d, &w) - math.Log(2*math.Pi) - 0.5*ch.LogDet()
		}
		ig := distuv.InverseGamma{Alpha: kernels.LopesWestShape, Beta: q.Scale()[0]}
		theta := make([]float64, 3)
		var lam []float64
		for i := 0; i < 2000; i++ {
			if err := q.Sample(rng, theta); err != nil {
				t.Fatal(err)
			}
			got, err := q.LogDensity(theta)
			if err != nil {
				t.Fatal(err)
			}
			l := theta[1]
			want := mvnLogProb([]float64{theta[0], theta[2]})
			if logLambda {
				want += ig.LogProb(math.Exp(l)) + l
				l = math.Exp(l)
			} else {
				want += ig.LogProb(l)
			}
			lam = append(lam, l)
			if math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
				t.Fatalf("logLambda=%v: log q = %v, gonum %v", logLambda, got, want)
			}
		}
		m, sd := stat.MeanStdDev(lam, nil)
		if se := sd / math.Sqrt(float64(len(lam))); math.Abs(m-ig.Mean()) > 4*se {
			t.Errorf("logLambda=%v: mean sampled variance %v, IG mean %v ± 4·%v", logLambda, m, ig.Mean(), se)
		}
	}
	if _, err := kernels.NewLopesWestProposal([][]float64{{1, 2}}, []int{0}, []int{1}, false); err == nil {
		t.Error("a single draw accepted")
	}
	if _, err := kernels.NewLopesWestProposal([][]float64{{1, 2}, {2, -1}}, []int{0}, []int{1}, false); err == nil {
		t.Error("negative variance accepted")
	}
	if _, err := kernels.NewLopesWestProposal([][]float64{{1, 2}, {2, 1}}, []int{0}, []int{0}, false); err == nil {
		t.Error("repeated coordinate accepted")
	}
}

func TestIndependenceRJRecoversModelProbabilities(t *testing.T) {
	prob := []float64{0.4, 0.6}
	g := newGaussModels(prob, []*affine{
		newAffine([]float64{1, 2}, []float64{1, 0, 0.5, 0.5}),
		diagAffine([]float64{0, -1, 3}, []float64{2, 1, 0.5}),
	})
	rng := rand.New(rand.NewPCG(32, 1))
	pilot := gaussDraws(g, rng, 400)
	props := make([]kernels.IndependenceProposal, 2)
	for k, d := range pilot {
		idx := make([]int, len(d[0]))
		for i := range idx {
			idx[i] = i
		}
		q, err := kernels.NewLopesWestProposal(d, idx, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		props[k] = q
	}
	rw, _ := kernels.NewModelRandomWalk(g, nil2(2))
	r, err := kernels.NewIndependenceRJ(kernels.IndependenceRJConfig{Target: g, Proposals: props, Jump: kernels.UniformJumps(2), Within: rw, Alternate: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Init(0, []float64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	n := 40000
	if testing.Short() {
		n = 15000
	}
	x := make([]float64, n)
	for i := range x {
		s, _ = r.Step(rng, s)
		if s.Model == 1 {
			x[i] = 1
		}
	}
	m, se := stat.Mean(x, nil), batchMeansMCSE(x)
	if math.Abs(m-prob[1]) > 4*se {
		t.Errorf("frequency %v, want %v ± 4·%v", m, prob[1], se)
	}
	if _, err := kernels.NewIndependenceRJ(kernels.IndependenceRJConfig{Target: g, Proposals: props[:1], Jump: kernels.UniformJumps(2)}); err == nil {
		t.Error("missing proposal accepted")
	}
	if _, err := kernels.NewIndependenceRJ(kernels.IndependenceRJConfig{Target: g, Proposals: []kernels.IndependenceProposal{props[1], props[0]}, Jump: kernels.UniformJumps(2)}); err == nil {
		t.Error("mismatched proposal accepted")
	}
}

// priorVS is a variable-selection prior: π(k, β_k) = p(k) Π N(β_i; 0, 10²).
type priorVS struct {
	prob []float64
	dims []int
}

func (p priorVS) NumModels() int          { return len(p.prob) }
func (p priorVS) ModelDim(k int) int      { return p.dims[k] }
func (p priorVS) ModelLabel(k int) string { return "" }
func (p priorVS) LogDensity(k int, theta []float64) (float64, error) {
	lp := math.Log(p.prob[k])
	for _, b := range theta {
		lp += kernels.NormalAux{SD: 10}.LogProb(b)
	}
	return lp, nil
}

func TestIndependentAuxiliaryRecoversPrior(t *testing.T) {
	// Block selection over (β₀, β₁, β₂, β₃) with (β₂, β₃) switched jointly,
	// the structure of the paper's §5.1, without the likelihood: with
	// ν = the coefficient prior the proposal is exact, so α = 1 ∧ p(k')/p(k)
	// for uniform j.
	p := priorVS{prob: []float64{0.1, 0.2, 0.3, 0.4}, dims: []int{1, 2, 3, 4}}
	active := [][]bool{
		{true, false, false, false},
		{true, true, false, false},
		{true, false, true, true},
		{true, true, true, true},
	}
	rw, _ := kernels.NewModelRandomWalk(p, nil2(4))
	c, err := kernels.NewIndependentAuxiliary(p, active, kernels.UniformJumps(4), rw, kernels.NormalAux{SD: 10}, true)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(33, 1))
	s, err := c.Init(rng, 0, []float64{0})
	if err != nil {
		t.Fatal(err)
	}
	n := 40000
	if testing.Short() {
		n = 15000
	}
	x := make([][]float64, 4)
	for m := range x {
		x[m] = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		var info kernels.RJInfo
		before := append([]float64(nil), s.Xi...)
		s, info = c.Step(rng, s)
		if info.Jumped {
			want := math.Min(1, p.prob[info.Jump.To]/p.prob[info.Jump.From])
			if math.Abs(info.Jump.AcceptProb-want) > 1e-9 {
				t.Fatalf("jump %+v, want α = %v", info.Jump, want)
			}
			if info.JumpAccepted && !info.Within {
				for j := range before {
					if before[j] != s.Xi[j] {
						t.Fatalf("deterministic proposal changed ξ: %v → %v", before, s.Xi)
					}
				}
			}
		}
		x[s.Model][i] = 1
	}
	for m := range x {
		mean, se := stat.Mean(x[m], nil), batchMeansMCSE(x[m])
		if math.Abs(mean-p.prob[m]) > 4*se {
			t.Errorf("model %d: frequency %v, want %v ± 4·%v", m, mean, p.prob[m], se)
		}
	}
	if _, err := kernels.NewIndependentAuxiliary(p, active, kernels.UniformJumps(4), nil, nil, false); err == nil {
		t.Error("nil auxiliary density accepted")
	}
}
