package trj

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"gonum.org/v1/gonum/mat"
)

// bimodal is one model: ½N(−3, 1) + ½N(3, 1), which no local move crosses.
type bimodal struct{}

func (bimodal) NumModels() int        { return 1 }
func (bimodal) ModelDim(int) int      { return 1 }
func (bimodal) ModelLabel(int) string { return "bimodal" }
func (bimodal) LogDensity(_ int, th []float64) (float64, error) {
	a, b := -0.5*(th[0]+3)*(th[0]+3), -0.5*(th[0]-3)*(th[0]-3)
	m := math.Max(a, b)
	return m + math.Log(0.5*math.Exp(a-m)+0.5*math.Exp(b-m)) - 0.5*math.Log(2*math.Pi), nil
}

// TestFlowMovesExact runs the flow moves alone, with a transport that
// fits the bimodal target poorly (N(0, 3²)), and checks the chain's mean
// (0) and second moment (10) within 4 batch-means standard errors, and
// that it crossed between the modes.
func TestFlowMovesExact(t *testing.T) {
	tr, err := flows.NewAffine([]float64{0}, mat.NewSymDense(1, []float64{9}))
	if err != nil {
		t.Fatal(err)
	}
	f := newFlowMoves(nil, bimodal{}, []kernels.Transport{tr}, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	theta := []float64{3}
	lp, _ := bimodal{}.LogDensity(0, theta)
	const n, batch = 200000, 1000
	var m1, m2 []float64
	var s1, s2 float64
	crossings := 0
	for i := range n {
		prev := theta[0]
		lp, _ = f.Step(rng, 0, theta, lp)
		if (prev < 0) != (theta[0] < 0) {
			crossings++
		}
		s1 += theta[0]
		s2 += theta[0] * theta[0]
		if (i+1)%batch == 0 {
			m1, m2 = append(m1, s1/batch), append(m2, s2/batch)
			s1, s2 = 0, 0
		}
	}
	check := func(name string, x []float64, want float64) {
		var mean, ss float64
		for _, v := range x {
			mean += v
		}
		mean /= float64(len(x))
		for _, v := range x {
			ss += (v - mean) * (v - mean)
		}
		se := math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
		if math.Abs(mean-want) > 4*se {
			t.Errorf("%s: %.4f ± %.4f, want %v", name, mean, se, want)
		}
	}
	check("E θ", m1, 0)
	check("E θ²", m2, 10)
	if a := testing.AllocsPerRun(100, func() { lp, _ = f.Step(rng, 0, theta, lp) }); a != 0 {
		t.Errorf("a flow move allocates %v times", a)
	}
	if crossings < n/20 {
		t.Errorf("%d crossings between the modes in %d steps", crossings, n)
	}
}
