package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// tableTarget is a selection of p terms whose 2^p log evidences are a
// fixed random table, with a beta-binomial(1, 1) size prior. Its scorer's
// Flips and Swaps are off the table by up to ±0.3 (a fixed function of the
// model, as a fast logarithm's error is): the kernel's acceptance must
// correct them.
type tableTarget struct {
	p  int
	le []float64 // by bitmask
}

func newTableTarget(p int, seed uint64) *tableTarget {
	rng := rand.New(rand.NewPCG(seed, 1))
	t := &tableTarget{p: p, le: make([]float64, 1<<p)}
	for m := range t.le {
		// Terms 0 and 1 are near-copies (either, rarely both), term 2
		// helps; the rest are noise.
		v := 1.5 * rng.NormFloat64()
		if (m&1 != 0) != (m&2 != 0) {
			v += 4
		}
		if m&4 != 0 {
			v += 1
		}
		t.le[m] = v
	}
	return t
}

func (t *tableTarget) NumTerms() int { return t.p }

func (t *tableTarget) LogSizePrior(k int) float64 {
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	return lg(float64(k+1)) + lg(float64(t.p-k+1)) - lg(float64(t.p+2))
}

func (t *tableTarget) NewScorer() (SelectionScorer, error) { return &tableScorer{t: t}, nil }

type tableScorer struct {
	t    *tableTarget
	mask int
	act  []int
}

func mask(active []int) int {
	m := 0
	for _, a := range active {
		m |= 1 << a
	}
	return m
}

// wobble is the scorer's fixed error at model m.
func wobble(m int) float64 { return 0.3 * math.Sin(float64(m)*1.7) }

func (s *tableScorer) Score(active []int) (float64, error) {
	s.mask, s.act = mask(active), append(s.act[:0], active...)
	return s.t.le[s.mask], nil
}

func (s *tableScorer) Flips(flip []float64) {
	for j := range flip {
		m := s.mask ^ 1<<j
		flip[j] = s.t.le[m] + wobble(m)
	}
}

func (s *tableScorer) Swaps(r int, row []float64) {
	out := s.act[r]
	for j := range row {
		m := s.mask&^(1<<out) | 1<<j
		row[j] = s.t.le[m] + wobble(m)
	}
}

func (s *tableScorer) Draw(*rand.Rand, []float64) error { return nil }

// exactPIPs enumerates the target's inclusion probabilities.
func (t *tableTarget) exactPIPs() []float64 {
	lp := make([]float64, len(t.le))
	top := math.Inf(-1)
	for m, le := range t.le {
		k := 0
		for j := range t.p {
			k += m >> j & 1
		}
		lp[m] = le + t.LogSizePrior(k)
		top = math.Max(top, lp[m])
	}
	pip := make([]float64, t.p)
	var z float64
	for m, v := range lp {
		w := math.Exp(v - top)
		z += w
		for j := range t.p {
			if m>>j&1 == 1 {
				pip[j] += w
			}
		}
	}
	for j := range pip {
		pip[j] /= z
	}
	return pip
}

// TestCollapsedKernelExact runs the kernel's move sets on the table
// target and compares the PIPs (visit frequencies and the averaged
// conditional probabilities) with enumeration, each within 4 batch-means
// MCSEs over 8 chains.
func TestCollapsedKernelExact(t *testing.T) {
	const p, chains, steps, batches = 7, 8, 20000, 20
	tg := newTableTarget(p, 3)
	want := tg.exactPIPs()
	for _, tc := range []struct {
		name string
		set  CollapsedSettings
	}{
		{"barker", CollapsedSettings{}},
		{"sqrt", CollapsedSettings{Balancing: BalanceSqrt}},
		{"uniform", CollapsedSettings{Uniform: true}},
		{"no-swaps", CollapsedSettings{SwapProb: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			freq := make([][]float64, p) // by term: batch means over all chains
			cond := make([][]float64, p)
			c := make([]float64, p)
			for ch := range chains {
				k, err := NewCollapsedKernel(tg, &tc.set)
				if err != nil {
					t.Fatal(err)
				}
				st, err := k.Init(nil)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(7, uint64(ch)))
				bf, bc := make([]float64, p), make([]float64, p)
				for i := range steps {
					if _, err := k.Step(rng, st); err != nil {
						t.Fatal(err)
					}
					k.Conditionals(st, c)
					m := mask(st.Active)
					for j := range p {
						bf[j] += float64(m >> j & 1)
						bc[j] += c[j]
					}
					if (i+1)%(steps/batches) == 0 {
						for j := range p {
							freq[j] = append(freq[j], bf[j]/float64(steps/batches))
							cond[j] = append(cond[j], bc[j]/float64(steps/batches))
						}
						clear(bf)
						clear(bc)
					}
				}
			}
			for j := range p {
				for _, est := range []struct {
					name string
					x    []float64
				}{{"frequency", freq[j]}, {"conditional", cond[j]}} {
					m, se := meanSE(est.x)
					if z := (m - want[j]) / se; math.Abs(z) > 4 || math.IsNaN(z) {
						t.Errorf("term %d %s PIP %.4f ± %.4f, exact %.4f (z = %.1f)", j, est.name, m, se, want[j], z)
					}
				}
			}
		})
	}
}

func meanSE(x []float64) (float64, float64) {
	var s, q float64
	for _, v := range x {
		s += v
	}
	m := s / float64(len(x))
	for _, v := range x {
		q += (v - m) * (v - m)
	}
	return m, math.Sqrt(q / float64(len(x)-1) / float64(len(x)))
}

func TestCollapsedKernelBadInput(t *testing.T) {
	if _, err := NewCollapsedKernel(nil, nil); err == nil {
		t.Error("nil target accepted")
	}
	tg := newTableTarget(4, 1)
	if _, err := NewCollapsedKernel(tg, &CollapsedSettings{SwapProb: 1}); err == nil {
		t.Error("swap probability 1 accepted")
	}
	if _, err := NewCollapsedKernel(tg, &CollapsedSettings{Balancing: 9}); err == nil {
		t.Error("unknown balancing accepted")
	}
	k, _ := NewCollapsedKernel(tg, nil)
	if _, err := k.Init([]int{2, 1}); err == nil {
		t.Error("unsorted start accepted")
	}
	if _, err := k.Init([]int{4}); err == nil {
		t.Error("out-of-range start accepted")
	}
}
