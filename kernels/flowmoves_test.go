package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
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

// scale3 is the transport z = θ/3 of N(0, 3²).
type scale3 struct{}

func (scale3) Dim() int { return 1 }
func (scale3) Forward(theta, z []float64) (float64, error) {
	z[0] = theta[0] / 3
	return -math.Log(3), nil
}
func (scale3) Inverse(z, theta []float64) (float64, error) {
	theta[0] = 3 * z[0]
	return math.Log(3), nil
}

// TestFlowMovesExact runs the flow moves alone, with a transport that
// fits the bimodal target poorly (N(0, 3²)), and checks the chain's mean
// (0) and second moment (10) within 4 batch-means standard errors, and
// that it crossed between the modes.
func TestFlowMovesExact(t *testing.T) {
	f := NewFlowMoves(nil, bimodal{}, []Transport{scale3{}}, 1)
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

// TestDefensiveReference checks the flow moves' reference ½N(0, I) +
// ½N(0, 2²I): its log-density integrates to one in one and two dimensions,
// and draws have the mixture's variance (1 + 4)/2 per coordinate within 4
// standard errors.
func TestDefensiveReference(t *testing.T) {
	const h, L = 0.01, 20.0
	var one, two float64
	z := make([]float64, 2)
	for x := -L; x <= L; x += h {
		one += math.Exp(logDefensive([]float64{x})) * h
		for y := -L; y <= L; y += 10 * h {
			z[0], z[1] = x, y
			two += math.Exp(logDefensive(z)) * h * 10 * h
		}
	}
	if math.Abs(one-1) > 1e-6 || math.Abs(two-1) > 1e-3 {
		t.Errorf("integrals %v (1-D), %v (2-D), want 1", one, two)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 20000
	var ss, s4 float64
	for range n {
		drawDefensive(rng, z)
		ss += z[0] * z[0]
		s4 += z[0] * z[0] * z[0] * z[0]
	}
	v := ss / n
	se := math.Sqrt((s4/n - v*v) / n)
	if math.Abs(v-2.5) > 4*se {
		t.Errorf("variance %v ± %v, want 2.5", v, se)
	}
}
