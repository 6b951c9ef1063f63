package kernels_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/sas"
)

// saturated builds T̃(·|k) from per-model transports: the active
// coordinates go through T_k, the auxiliaries (already standard normal)
// pass through unchanged.
type saturated struct {
	tr         []kernels.Transport
	active     [][]bool
	bufA, bufB []float64
}

func newSaturated(tr []kernels.Transport, active [][]bool) *saturated {
	n := len(active[0])
	return &saturated{tr: tr, active: active, bufA: make([]float64, n), bufB: make([]float64, n)}
}

func (s *saturated) MaxDim() int { return len(s.active[0]) }

func (s *saturated) apply(k int, in, out []float64, fwd bool) (float64, error) {
	a, b := s.bufA[:0], s.bufB[:s.tr[k].Dim()]
	for i, on := range s.active[k] {
		if on {
			a = append(a, in[i])
		} else {
			out[i] = in[i]
		}
	}
	var ld float64
	var err error
	if fwd {
		ld, err = s.tr[k].Forward(a, b)
	} else {
		ld, err = s.tr[k].Inverse(a, b)
	}
	j := 0
	for i, on := range s.active[k] {
		if on {
			out[i] = b[j]
			j++
		}
	}
	return ld, err
}

func (s *saturated) Forward(k int, xi, z []float64) (float64, error) { return s.apply(k, xi, z, true) }
func (s *saturated) Inverse(k int, z, xi []float64) (float64, error) { return s.apply(k, z, xi, false) }

var sasActive = [][]bool{{true, false}, {true, true}}

func TestCTRJExactSASIsRejectionFree(t *testing.T) {
	tg := sas.Paper()
	rw, err := kernels.NewModelRandomWalk(tg, nil2(2))
	if err != nil {
		t.Fatal(err)
	}
	c, err := kernels.NewCTRJ(kernels.CTRJConfig{
		Target: tg, Transport: newSaturated(sasTransports(tg), sasActive), Active: sasActive,
		Jump: [][]float64{{0.25, 0.75}, {0.25, 0.75}}, Within: rw,
	})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 1))
	s, err := c.Init(rng, 0, []float64{-3})
	if err != nil {
		t.Fatal(err)
	}
	n := 20000
	x := make([]float64, n)
	for i := range x {
		var info kernels.RJInfo
		s, info = c.Step(rng, s)
		if info.Jumped && math.Abs(info.Jump.AcceptProb-1) > 1e-9 {
			t.Fatalf("jump %+v, want α = 1", info.Jump)
		}
		if s.Model == 1 {
			x[i] = 1
		}
	}
	m, se := stat.Mean(x, nil), batchMeansMCSE(x)
	if math.Abs(m-0.75) > 4*se {
		t.Errorf("π̂(k=2) = %v, want 0.75 ± 4·%v", m, se)
	}
	if got := c.Theta(s, nil); len(got) != tg.ModelDim(s.Model) {
		t.Errorf("Theta has length %d in model %d", len(got), s.Model)
	}
}

func TestCTRJPriorRecovery(t *testing.T) {
	// Models of dimensions 1 and 3 (saturated dimension 3) with prior
	// (0.35, 0.65); exact and deliberately mis-scaled transports.
	g := newGaussModels([]float64{0.35, 0.65}, []*affine{
		diagAffine([]float64{2}, []float64{0.5}),
		newAffine([]float64{0, 1, 2}, []float64{1, 0, 0, 0.5, 2, 0, -0.3, 0.1, 0.7}),
	})
	active := [][]bool{{false, true, false}, {true, true, true}}
	bad := []kernels.Transport{
		diagAffine([]float64{1.5}, []float64{1}),
		newAffine([]float64{0.5, 1, 1}, []float64{2, 0, 0, 0, 1, 0, 0, 0, 1}),
	}
	n := checks.Size(60000, 20000)
	for name, tr := range map[string][]kernels.Transport{"exact": g.transports(), "imperfect": bad} {
		rw, err := kernels.NewModelRandomWalk(g, nil2(2))
		if err != nil {
			t.Fatal(err)
		}
		for _, fixed := range []bool{false, true} {
			if fixed && name == "imperfect" {
				// Published Algorithm 2 with imperfect transports can stay
				// in one model for the whole run (see FixedAux).
				continue
			}
			c, err := kernels.NewCTRJ(kernels.CTRJConfig{
				Target: g, Transport: newSaturated(tr, active), Active: active,
				Jump: kernels.UniformJumps(2), Within: rw, Alternate: true, FixedAux: fixed,
			})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(12, 2))
			s, err := c.Init(rng, 0, []float64{2})
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float64, n)
			for i := range x {
				var info kernels.RJInfo
				s, info = c.Step(rng, s)
				if name == "exact" && info.Jumped {
					want := math.Min(1, g.prob[info.Jump.To]/g.prob[info.Jump.From])
					if math.Abs(info.Jump.AcceptProb-want) > 1e-9 {
						t.Fatalf("exact: jump %+v, want α = %v", info.Jump, want)
					}
				}
				if s.Model == 1 {
					x[i] = 1
				}
				// The stored log-density must track the state.
				if i%1000 == 0 {
					want, _ := g.LogDensity(s.Model, c.Theta(s, nil))
					for j, on := range active[s.Model] {
						if !on {
							want += kernels.NormalAux{SD: 1}.LogProb(s.Xi[j])
						}
					}
					if math.Abs(want-s.LogDensity) > 1e-9 {
						t.Fatalf("%s: stored log π̃ %v, recomputed %v", name, s.LogDensity, want)
					}
				}
			}
			m, se := stat.Mean(x, nil), batchMeansMCSE(x)
			t.Logf("%s, fixedAux=%v: frequency of model 1 %.4f ± %.4f", name, fixed, m, se)
			if math.Abs(m-0.65) > 4*se {
				t.Errorf("%s, fixedAux=%v: frequency %v, want 0.65 ± 4·%v", name, fixed, m, se)
			}
		}
	}
}

func TestCTRJStepDoesNotAllocate(t *testing.T) {
	tg := sas.Paper()
	rw, _ := kernels.NewModelRandomWalk(tg, nil2(2))
	c, err := kernels.NewCTRJ(kernels.CTRJConfig{
		Target: tg, Transport: newSaturated(sasTransports(tg), sasActive), Active: sasActive,
		Jump: kernels.UniformJumps(2), Within: rw, Alternate: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(13, 3))
	s, err := c.Init(rng, 1, []float64{2, -1})
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(200, func() { s, _ = c.Step(rng, s) }); a != 0 {
		t.Errorf("Step allocates %v times", a)
	}
}

func TestCTRJBadInput(t *testing.T) {
	tg := sas.Paper()
	for name, cfg := range map[string]kernels.CTRJConfig{
		"nil target": {Active: sasActive, Jump: kernels.UniformJumps(2)},
		"mask count": {Target: tg, Active: sasActive[:1], Jump: kernels.UniformJumps(2)},
		"mask size":  {Target: tg, Active: [][]bool{{true}, {true, true}}, Jump: kernels.UniformJumps(2)},
		"mask ones":  {Target: tg, Active: [][]bool{{true, true}, {true, true}}, Jump: kernels.UniformJumps(2)},
		"transport":  {Target: tg, Active: sasActive, Jump: kernels.UniformJumps(2), Transport: kernels.IdentityConditionalTransport{N: 3}},
		"jump":       {Target: tg, Active: sasActive, Jump: [][]float64{{1}}},
		"aux":        {Target: tg, Active: sasActive, Jump: kernels.UniformJumps(2), Aux: kernels.NormalAux{SD: -1}},
	} {
		if _, err := kernels.NewCTRJ(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c, err := kernels.NewCTRJ(kernels.CTRJConfig{Target: tg, Active: sasActive, Jump: kernels.UniformJumps(2)})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	if _, err := c.Init(rng, 0, []float64{1, 2}); err == nil {
		t.Error("wrong dimension accepted")
	}
	if _, err := c.InitSaturated(0, []float64{math.Inf(1), 0}); err == nil {
		t.Error("infinite start accepted")
	}
	if _, err := c.ProposeJump(rng, 2, []float64{1}); err == nil {
		t.Error("bad model accepted")
	}
}

func BenchmarkCTRJStepSAS(b *testing.B) {
	tg := sas.Paper()
	rw, _ := kernels.NewModelRandomWalk(tg, nil)
	c, err := kernels.NewCTRJ(kernels.CTRJConfig{
		Target: tg, Transport: newSaturated(sasTransports(tg), sasActive), Active: sasActive,
		Jump: kernels.UniformJumps(2), Within: rw, Alternate: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	s, _ := c.Init(rng, 0, []float64{-3})
	b.ReportAllocs()
	for b.Loop() {
		s, _ = c.Step(rng, s)
	}
}
