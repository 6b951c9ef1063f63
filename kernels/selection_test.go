package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// toyTarget has models whose densities are known: model γ's parameters are
// one always-in coordinate, one per active term j with mean mu[j], and one
// shared coordinate, all with unit variance, scaled by the evidence
// exp(logZ(γ)). Its transports are deliberately imperfect (centred at the
// wrong mean, with the wrong scale), so that the jumps' acceptance depends
// on where the chain is and a misplaced coordinate would bias the PIPs.
type toyTarget struct {
	p    int
	mu   []float64
	logW []float64 // per-term log evidence contribution
	// saturated gives the models transports of the saturated space
	// (triangularTransport).
	saturated bool
}

type toyModel struct {
	t      *toyTarget
	active []int
	tr     Transport
}

type scaleShift struct {
	shift []float64
	scale float64
}

func (s *scaleShift) Dim() int { return len(s.shift) }
func (s *scaleShift) Forward(theta, z []float64) (float64, error) {
	for i := range z {
		z[i] = (theta[i] - s.shift[i]) / s.scale
	}
	return -float64(len(z)) * math.Log(s.scale), nil
}
func (s *scaleShift) Inverse(z, theta []float64) (float64, error) {
	for i := range z {
		theta[i] = s.shift[i] + s.scale*z[i]
	}
	return float64(len(z)) * math.Log(s.scale), nil
}

// triangular is z_i = (ξ_i − shift_i − 0.3 tanh(ξ_{i−1}))/scale: every
// coordinate's image depends on the one before, auxiliaries included, as an
// autoregressive flow's does.
type triangular struct {
	shift []float64
	scale float64
}

func (s *triangular) Dim() int { return len(s.shift) }
func (s *triangular) Forward(xi, z []float64) (float64, error) {
	for i := range z {
		c := s.shift[i]
		if i > 0 {
			c += 0.3 * math.Tanh(xi[i-1])
		}
		z[i] = (xi[i] - c) / s.scale
	}
	return -float64(len(z)) * math.Log(s.scale), nil
}
func (s *triangular) Inverse(z, xi []float64) (float64, error) {
	for i := range z {
		c := s.shift[i]
		if i > 0 {
			c += 0.3 * math.Tanh(xi[i-1])
		}
		xi[i] = c + s.scale*z[i]
	}
	return float64(len(z)) * math.Log(s.scale), nil
}

func (t *toyTarget) NumTerms() int { return t.p }
func (t *toyTarget) Always() int   { return 1 }
func (t *toyTarget) LogModelPrior(active []int) (float64, error) {
	return -float64(t.p) * math.Ln2, nil
}
func (t *toyTarget) Model(active []int) (SelectionModel, error) {
	d := len(active) + 2
	if t.saturated {
		// saturated layout: always, p terms, shared; a missing term's
		// slot is an auxiliary, its shift 0
		tr := &triangular{shift: make([]float64, t.p+2), scale: 1.3}
		for _, j := range active {
			tr.shift[1+j] = t.mu[j] + 0.4
		}
		tr.shift[0], tr.shift[t.p+1] = -0.3, 0.2
		return &toyModel{t: t, active: append([]int(nil), active...), tr: tr}, nil
	}
	tr := &scaleShift{shift: make([]float64, d), scale: 1.3}
	m := &toyModel{t: t, active: append([]int(nil), active...), tr: tr}
	for k, j := range active {
		tr.shift[1+k] = t.mu[j] + 0.4 // off by 0.4
	}
	tr.shift[0], tr.shift[d-1] = -0.3, 0.2
	return m, nil
}

func (m *toyModel) Dim() int { return len(m.active) + 2 }
func (m *toyModel) LogDensity(theta []float64) (float64, error) {
	var lz, q float64
	for k, j := range m.active {
		lz += m.t.logW[j]
		d := theta[1+k] - m.t.mu[j]
		q += d * d
	}
	q += theta[0]*theta[0] + theta[len(theta)-1]*theta[len(theta)-1]
	return lz - q/2 - float64(len(theta))/2*math.Log(2*math.Pi), nil
}
func (m *toyModel) Transport() Transport { return m.tr }
func (m *toyModel) Proposal() Transport  { return m.tr }
func (m *toyModel) LogEvidence() float64 {
	var lz float64
	for _, j := range m.active {
		lz += m.t.logW[j]
	}
	return lz
}

// TestSelectionKernelExact checks the kernel against the toy target's
// exact PIPs, logistic(logW[j]) under the uniform model prior, uninformed
// and informed, and with transports of the saturated space, within 4
// batch-means standard errors.
func TestSelectionKernelExact(t *testing.T) {
	for _, c := range []struct{ informed, saturated bool }{{false, false}, {true, false}, {false, true}} {
		informed := c.informed
		tg := &toyTarget{p: 5, mu: []float64{2, -1, 0.5, 3, -2}, logW: []float64{1.5, -0.5, 0, -2, 0.7}, saturated: c.saturated}
		k, err := NewSelectionKernel(tg, &SelectionSettings{Informed: informed})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		st, err := k.Init([]int{1, 3}, nil)
		if err != nil {
			t.Fatal(err)
		}
		const n, batches = 40000, 40
		x := make([][]float64, tg.p)
		for j := range x {
			x[j] = make([]float64, n)
		}
		for i := range n {
			if _, err := k.Step(rng, st); err != nil {
				t.Fatal(err)
			}
			for _, a := range st.Active {
				x[a][i] = 1
			}
		}
		for j := range tg.p {
			want := 1 / (1 + math.Exp(-tg.logW[j]))
			var means []float64
			var sum float64
			for b := range batches {
				var s float64
				for _, v := range x[j][b*n/batches : (b+1)*n/batches] {
					s += v
				}
				means = append(means, s/float64(n/batches))
				sum += s
			}
			p := sum / n
			var ss float64
			for _, m := range means {
				ss += (m - p) * (m - p)
			}
			se := math.Sqrt(ss / float64(batches-1) / float64(batches))
			if math.Abs(p-want) > 4*se {
				t.Errorf("informed %v saturated %v term %d: PIP %.4f ± %.4f, exact %.4f", informed, c.saturated, j, p, se, want)
			}
		}
	}
}

func TestSelectionKernelBadInput(t *testing.T) {
	tg := &toyTarget{p: 3, mu: make([]float64, 3), logW: make([]float64, 3)}
	if _, err := NewSelectionKernel(nil, nil); err == nil {
		t.Error("nil target: no error")
	}
	if _, err := NewSelectionKernel(tg, &SelectionSettings{SwapProb: 1}); err == nil {
		t.Error("swap probability 1: no error")
	}
	k, _ := NewSelectionKernel(tg, nil)
	for _, a := range [][]int{{3}, {1, 1}, {2, 0}, {-1}} {
		if _, err := k.Init(a, nil); err == nil {
			t.Errorf("active %v: no error", a)
		}
	}
	if _, err := k.Init([]int{0}, []float64{1}); err == nil {
		t.Error("wrong initial length: no error")
	}
}
