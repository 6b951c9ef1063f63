package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/kernels"
)

// gaussProposal is an independence proposal with each coordinate's mean
// and standard deviation from pilot draws.
type gaussProposal struct{ mean, sd []float64 }

func newGaussProposal(draws [][]float64) *gaussProposal {
	q := &gaussProposal{}
	for i := range draws[0] {
		col := make([]float64, len(draws))
		for r, d := range draws {
			col[r] = d[i]
		}
		m, s := stat.MeanStdDev(col, nil)
		q.mean, q.sd = append(q.mean, m), append(q.sd, 1.2*s)
	}
	return q
}

func (q *gaussProposal) Dim() int { return len(q.mean) }
func (q *gaussProposal) LogDensity(theta []float64) (float64, error) {
	var lp float64
	for i, m := range q.mean {
		lp += distuv.Normal{Mu: m, Sigma: q.sd[i]}.LogProb(theta[i])
	}
	return lp, nil
}
func (q *gaussProposal) Sample(rng *rand.Rand, theta []float64) error {
	for i, m := range q.mean {
		theta[i] = m + q.sd[i]*rng.NormFloat64()
	}
	return nil
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
		props[k] = newGaussProposal(d)
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
	n := checks.Size(40000, 15000)
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
	n := checks.Size(40000, 15000)
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
