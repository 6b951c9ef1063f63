package kernels_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/sas"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// batchMeansMCSE is the batch-means Monte Carlo standard error of the mean
// of x, with about √n batches.
func batchMeansMCSE(x []float64) float64 {
	b := int(math.Sqrt(float64(len(x))))
	size := len(x) / b
	means := make([]float64, b)
	for i := range means {
		means[i] = stat.Mean(x[i*size:(i+1)*size], nil)
	}
	return stat.StdDev(means, nil) / math.Sqrt(float64(b))
}

// affine is the transport z = L⁻¹(θ − μ) with L lower triangular.
type affine struct {
	mu, l  []float64 // l row-major n×n
	logDet float64   // log|det L|
}

func newAffine(mu []float64, l []float64) *affine {
	n := len(mu)
	a := &affine{mu: mu, l: l}
	for i := 0; i < n; i++ {
		a.logDet += math.Log(math.Abs(l[i*n+i]))
	}
	return a
}

func diagAffine(mu, sd []float64) *affine {
	n := len(mu)
	l := make([]float64, n*n)
	for i := range sd {
		l[i*n+i] = sd[i]
	}
	return newAffine(mu, l)
}

func (a *affine) Dim() int { return len(a.mu) }

func (a *affine) Forward(theta, z []float64) (float64, error) {
	n := len(a.mu)
	if len(theta) != n || len(z) != n {
		return 0, kernels.ErrDimension
	}
	for i := 0; i < n; i++ {
		s := theta[i] - a.mu[i]
		for j := 0; j < i; j++ {
			s -= a.l[i*n+j] * z[j]
		}
		z[i] = s / a.l[i*n+i]
	}
	return -a.logDet, nil
}

func (a *affine) Inverse(z, theta []float64) (float64, error) {
	n := len(a.mu)
	if len(theta) != n || len(z) != n {
		return 0, kernels.ErrDimension
	}
	for i := n - 1; i >= 0; i-- {
		s := a.mu[i]
		for j := 0; j <= i; j++ {
			s += a.l[i*n+j] * z[j]
		}
		theta[i] = s
	}
	return a.logDet, nil
}

// gaussModels is π(k, θ) = p(k) N(θ; μ_k, L_k L_kᵀ): a transdimensional
// "prior" whose model marginals are p(k) and whose exact transports are
// affine.
type gaussModels struct {
	prob []float64
	tr   []*affine
	z    []float64
}

func newGaussModels(prob []float64, tr []*affine) *gaussModels {
	n := 0
	for _, t := range tr {
		n = max(n, t.Dim())
	}
	return &gaussModels{prob: prob, tr: tr, z: make([]float64, n)}
}

func (g *gaussModels) NumModels() int          { return len(g.prob) }
func (g *gaussModels) ModelDim(k int) int      { return g.tr[k].Dim() }
func (g *gaussModels) ModelLabel(k int) string { return fmt.Sprint("model ", k) }
func (g *gaussModels) LogDensity(k int, theta []float64) (float64, error) {
	z := g.z[:g.tr[k].Dim()]
	ld, err := g.tr[k].Forward(theta, z)
	if err != nil {
		return math.Inf(-1), err
	}
	lp := math.Log(g.prob[k]) + ld
	for _, v := range z {
		lp -= 0.5*v*v + 0.5*math.Log(2*math.Pi)
	}
	return lp, nil
}

func (g *gaussModels) transports() []kernels.Transport {
	out := make([]kernels.Transport, len(g.tr))
	for k, t := range g.tr {
		out[k] = t
	}
	return out
}

func sasTransports(tg *sas.Target) []kernels.Transport {
	var out []kernels.Transport
	for _, t := range tg.Transports() {
		out = append(out, t)
	}
	return out
}

// runIndicator runs n steps and returns the trace of 1{model == k}.
func runIndicator(t *testing.T, k *kernels.TRJ, rng *rand.Rand, s kernels.RJState, n, model int, check func(kernels.RJInfo)) ([]float64, kernels.RJState) {
	t.Helper()
	x := make([]float64, n)
	for i := range x {
		var info kernels.RJInfo
		s, info = k.Step(rng, s)
		if check != nil {
			check(info)
		}
		if s.Model == model {
			x[i] = 1
		}
	}
	return x, s
}

func TestTRJExactSASIsRejectionFree(t *testing.T) {
	tg := sas.Paper()
	j, err := kernels.ProportionalJumps([]float64{0.25, 0.75})
	if err != nil {
		t.Fatal(err)
	}
	rw, err := kernels.NewModelRandomWalk(tg, nil2(2))
	if err != nil {
		t.Fatal(err)
	}
	k, s := startTRJ(t, kernels.TRJConfig{Target: tg, Transports: sasTransports(tg), Jump: j, Within: rw}, 0, []float64{0.5})
	rng := rand.New(rand.NewPCG(1, 1))
	n := checks.Size(40000, 10000)
	jumps := 0
	x, s := runIndicator(t, k, rng, s, n, 1, func(info kernels.RJInfo) {
		if info.Jumped {
			jumps++
			if math.Abs(info.Jump.AcceptProb-1) > 1e-9 || !info.JumpAccepted {
				t.Fatalf("jump %+v: acceptance %v, want 1", info.Jump, info.Jump.AcceptProb)
			}
		}
	})
	if jumps < n/4 {
		t.Fatalf("only %d jumps in %d steps", jumps, n)
	}
	m, se := stat.Mean(x, nil), batchMeansMCSE(x)
	if math.Abs(m-0.75) > 4*se {
		t.Errorf("π̂(k=2) = %v, want 0.75 ± 4·%v", m, se)
	}
	if f := s.ModelFrequencies(nil); math.Abs(f[1]-m) > 1e-12 || s.Steps != n {
		t.Errorf("running frequencies %v after %d steps, trace mean %v", f, s.Steps, m)
	}
}

// startTRJ builds the TRJ kernel of cfg and starts it in model k at x.
func startTRJ(t *testing.T, cfg kernels.TRJConfig, k int, x []float64) (*kernels.TRJ, kernels.RJState) {
	t.Helper()
	kern, err := kernels.NewTRJ(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := kern.Init(k, x)
	if err != nil {
		t.Fatal(err)
	}
	return kern, s
}

func nil2(n int) []mat.Symmetric { return make([]mat.Symmetric, n) }

func TestTRJExactSASAcceptanceIsMarginalRatio(t *testing.T) {
	// Proposition 1: with exact transports α = 1 ∧ π(k')/π(k) when
	// j_k(k') = j_{k'}(k).
	tg := sas.Paper()
	j := [][]float64{{0.5, 0.5}, {0.5, 0.5}}
	k, s := startTRJ(t, kernels.TRJConfig{Target: tg, Transports: sasTransports(tg), Jump: j, Alternate: true}, 1, []float64{0.3, -0.2})
	rng := rand.New(rand.NewPCG(2, 2))
	want := [2][2]float64{{1, 1}, {1.0 / 3, 1}}
	seen := [2]int{}
	for i := 0; i < 4000; i++ {
		var info kernels.RJInfo
		s, info = k.Step(rng, s)
		if !info.Jumped {
			continue
		}
		seen[info.Jump.From]++
		if w := want[info.Jump.From][info.Jump.To]; math.Abs(info.Jump.AcceptProb-w) > 1e-9 {
			t.Fatalf("jump %+v, want α = %v", info.Jump, w)
		}
	}
	if seen[0] == 0 || seen[1] == 0 {
		t.Fatalf("jumps from each model: %v", seen)
	}
}

// imperfectSAS returns deliberately poor affine transports for the SAS
// target: shifted and mis-scaled relative to its moments.
func imperfectSAS() []kernels.Transport {
	return []kernels.Transport{
		// Exact draws have mean −4.9, sd 4.0 (k=1) and means (2.9, −2.0),
		// sds (2.5, 1.2), correlation 0.82 (k=2).
		diagAffine([]float64{-4}, []float64{3}),
		newAffine([]float64{2, -1.5}, []float64{2, 0, 1.5, 0.8}),
	}
}

func TestTRJImperfectTransportsKeepModelProbabilities(t *testing.T) {
	// Poor transports make the chain sticky, and a single chain's
	// batch-means error then understates the error; independent chains give
	// an honest one.
	tg := sas.Paper()
	reps, n := checks.Size(8, 6), checks.Size(12000, 6000)
	est := make([]float64, reps)
	acc := 0.0
	for r := range est {
		rw, err := kernels.NewModelRandomWalk(tg, []mat.Symmetric{
			mat.NewSymDense(1, []float64{1}),
			mat.NewSymDense(2, []float64{1, 0.5, 0.5, 1}),
		})
		if err != nil {
			t.Fatal(err)
		}
		k, s := startTRJ(t, kernels.TRJConfig{
			Target: tg, Transports: imperfectSAS(), Jump: [][]float64{{0, 1}, {1, 0}}, Within: rw, Alternate: true,
		}, r%2, []float64{-3, -1}[:1+r%2])
		rng := rand.New(rand.NewPCG(3, uint64(r)))
		x, _ := runIndicator(t, k, rng, s, n, 1, func(info kernels.RJInfo) { acc += info.Jump.AcceptProb })
		est[r] = stat.Mean(x, nil)
	}
	acc /= float64(n * reps)
	m, sd := stat.MeanStdDev(est, nil)
	se := sd / math.Sqrt(float64(reps))
	t.Logf("imperfect TRJ: π̂(k=2) = %.4f ± %.4f over %d chains, mean α = %.3f", m, se, reps, acc)
	if math.Abs(m-0.75) > 4*se {
		t.Errorf("π̂(k=2) = %v, want 0.75 ± 4·%v", m, se)
	}
	if acc > 0.95 {
		t.Errorf("mean acceptance %v: transports are not imperfect enough to test anything", acc)
	}
}

func TestTRJPriorRecoveryWithPermutation(t *testing.T) {
	// Three Gaussian models of dimensions 1, 3, 3 with prior (0.2, 0.3, 0.5),
	// exact affine transports, and a non-identity h̄ between the equal-sized
	// models and from model 0 to model 2.
	g := newGaussModels([]float64{0.2, 0.3, 0.5}, []*affine{
		diagAffine([]float64{3}, []float64{0.5}),
		newAffine([]float64{0, 1, 2}, []float64{1, 0, 0, 0.5, 2, 0, -0.3, 0.1, 0.7}),
		diagAffine([]float64{-1, -2, 5}, []float64{1, 3, 0.2}),
	})
	perm := [][][]int{{nil, nil, {2, 0, 1}}, {nil, nil, {1, 2, 0}}, nil}
	rw, err := kernels.NewModelRandomWalk(g, nil2(3))
	if err != nil {
		t.Fatal(err)
	}
	k, s := startTRJ(t, kernels.TRJConfig{
		Target: g, Transports: g.transports(), Jump: kernels.UniformJumps(3), Within: rw, Alternate: true, Permutations: perm,
	}, 0, []float64{3})
	rng := rand.New(rand.NewPCG(4, 4))
	n := checks.Size(60000, 20000)
	x := make([][]float64, 3)
	for i := range x {
		x[i] = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		var info kernels.RJInfo
		s, info = k.Step(rng, s)
		if info.Jumped {
			// Exact transports, uniform j: α = 1 ∧ p(k')/p(k).
			want := math.Min(1, g.prob[info.Jump.To]/g.prob[info.Jump.From])
			if math.Abs(info.Jump.AcceptProb-want) > 1e-9 {
				t.Fatalf("jump %+v, want α = %v", info.Jump, want)
			}
		}
		x[s.Model][i] = 1
	}
	for m := range x {
		mean, se := stat.Mean(x[m], nil), batchMeansMCSE(x[m])
		if math.Abs(mean-g.prob[m]) > 4*se {
			t.Errorf("model %d: frequency %v, prior %v ± 4·%v", m, mean, g.prob[m], se)
		}
	}
}

// failingTransport is a transport that errors on Forward.
type failingTransport struct{ kernels.Transport }

func (failingTransport) Forward(theta, z []float64) (float64, error) { return 0, errors.New("boom") }

// nanTransport returns NaN log-determinants.
type nanTransport struct{ kernels.Transport }

func (nanTransport) Inverse(z, theta []float64) (float64, error) { return math.NaN(), nil }

func TestTRJFailuresReject(t *testing.T) {
	tg := sas.Paper()
	exact := sasTransports(tg)
	for name, trs := range map[string][]kernels.Transport{
		"forward error": {failingTransport{exact[0]}, exact[1]},
		"NaN inverse":   {exact[0], nanTransport{exact[1]}},
	} {
		k, s := startTRJ(t, kernels.TRJConfig{Target: tg, Transports: trs, Jump: [][]float64{{0, 1}, {1, 0}}}, 0, []float64{0.1})
		rng := rand.New(rand.NewPCG(5, 5))
		for i := 0; i < 50; i++ {
			var info kernels.RJInfo
			s, info = k.Step(rng, s)
			if !info.Jumped || info.JumpAccepted || info.Jump.AcceptProb != 0 {
				t.Fatalf("%s: %+v, want a rejected jump with α = 0", name, info)
			}
		}
		if s.Model != 0 || s.Theta[0] != 0.1 {
			t.Errorf("%s: state moved to %+v", name, s)
		}
	}
}

// brokenModel makes model 1 of a target fail: an error, +Inf or NaN.
type brokenModel struct {
	kernels.TransdimensionalTarget
	val float64
	err error
}

func (b brokenModel) LogDensity(k int, theta []float64) (float64, error) {
	if k == 1 {
		return b.val, b.err
	}
	return b.TransdimensionalTarget.LogDensity(k, theta)
}

func TestTRJFailingTargetRejects(t *testing.T) {
	for name, tg := range map[string]brokenModel{
		"error": {sas.Paper(), 0, errors.New("boom")},
		"+Inf":  {sas.Paper(), math.Inf(1), nil},
		"NaN":   {sas.Paper(), math.NaN(), nil},
	} {
		k, s := startTRJ(t, kernels.TRJConfig{Target: tg, Transports: sasTransports(sas.Paper()), Jump: [][]float64{{0, 1}, {1, 0}}}, 0, []float64{-3})
		rng := rand.New(rand.NewPCG(8, 8))
		for i := 0; i < 20; i++ {
			var info kernels.RJInfo
			s, info = k.Step(rng, s)
			if info.JumpAccepted || info.Jump.AcceptProb != 0 {
				t.Fatalf("%s: %+v, want a rejection", name, info)
			}
		}
		if _, err := k.Init(1, []float64{0, 0}); !errors.Is(err, kernels.ErrNoFinitePoint) {
			t.Errorf("%s: Init in the broken model: %v", name, err)
		}
	}
}

func TestTRJBadInput(t *testing.T) {
	tg := sas.Paper()
	tr := sasTransports(tg)
	for name, cfg := range map[string]kernels.TRJConfig{
		"nil target":       {Transports: tr, Jump: kernels.UniformJumps(2)},
		"transport count":  {Target: tg, Transports: tr[:1], Jump: kernels.UniformJumps(2)},
		"transport dim":    {Target: tg, Transports: []kernels.Transport{tr[1], tr[0]}, Jump: kernels.UniformJumps(2)},
		"jump rows":        {Target: tg, Transports: tr, Jump: [][]float64{{1, 0}}},
		"jump sum":         {Target: tg, Transports: tr, Jump: [][]float64{{0.5, 0.6}, {0.5, 0.5}}},
		"jump negative":    {Target: tg, Transports: tr, Jump: [][]float64{{1.5, -0.5}, {0.5, 0.5}}},
		"jump NaN":         {Target: tg, Transports: tr, Jump: [][]float64{{math.NaN(), 1}, {0.5, 0.5}}},
		"irreversible":     {Target: tg, Transports: tr, Jump: [][]float64{{0, 1}, {1, 0}}[:1:1]},
		"one-way":          {Target: tg, Transports: tr, Jump: [][]float64{{0.5, 0.5}, {0, 1}}},
		"bad permutation":  {Target: tg, Transports: tr, Jump: kernels.UniformJumps(2), Permutations: [][][]int{{nil, {0, 0}}, nil}},
		"wrong direction":  {Target: tg, Transports: tr, Jump: kernels.UniformJumps(2), Permutations: [][][]int{nil, {{0}, nil}}},
		"permutation size": {Target: tg, Transports: tr, Jump: kernels.UniformJumps(2), Permutations: [][][]int{{nil, {0}}, nil}},
	} {
		if _, err := kernels.NewTRJ(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	k, err := kernels.NewTRJ(kernels.TRJConfig{Target: tg, Transports: tr, Jump: kernels.UniformJumps(2)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Init(0, []float64{1, 2}); !errors.Is(err, kernels.ErrDimension) {
		t.Errorf("wrong dimension: %v", err)
	}
	if _, err := k.Init(0, []float64{math.NaN()}); !errors.Is(err, kernels.ErrNoFinitePoint) {
		t.Errorf("NaN start: %v", err)
	}
	if _, err := k.Init(3, []float64{1}); err == nil {
		t.Error("bad model accepted")
	}
	if _, err := k.ProposeJump(rand.New(rand.NewPCG(1, 1)), 1, []float64{1}); !errors.Is(err, kernels.ErrDimension) {
		t.Errorf("ProposeJump with wrong dimension: %v", err)
	}
	if _, err := kernels.ProportionalJumps([]float64{0.5, 0}); err == nil {
		t.Error("zero model probability accepted")
	}
}

func TestTRJStepDoesNotAllocate(t *testing.T) {
	tg := sas.Paper()
	rw, err := kernels.NewModelRandomWalk(tg, nil2(2))
	if err != nil {
		t.Fatal(err)
	}
	k, err := kernels.NewTRJ(kernels.TRJConfig{Target: tg, Transports: sasTransports(tg), Jump: kernels.UniformJumps(2), Within: rw, Alternate: true})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(6, 6))
	s, err := k.Init(0, []float64{0.1})
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(200, func() { s, _ = k.Step(rng, s) }); a != 0 {
		t.Errorf("Step allocates %v times", a)
	}
}

func TestTRJConcurrentChains(t *testing.T) {
	// One kernel, target and transports per chain; run under -race.
	var wg sync.WaitGroup
	freq := make([]float64, 4)
	for c := range freq {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tg := sas.Paper()
			k, err := kernels.NewTRJ(kernels.TRJConfig{Target: tg, Transports: sasTransports(tg), Jump: [][]float64{{0.25, 0.75}, {0.25, 0.75}}})
			if err != nil {
				t.Error(err)
				return
			}
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			s, err := k.Init(0, []float64{0})
			if err != nil {
				t.Error(err)
				return
			}
			for i := 0; i < 2000; i++ {
				s, _ = k.Step(rng, s)
			}
			freq[c] = s.ModelFrequencies(nil)[1]
		}()
	}
	wg.Wait()
	for c, f := range freq {
		// iid Bernoulli(0.75) indicators: sd = √(0.75·0.25/2000) ≈ 0.0097.
		if math.Abs(f-0.75) > 4*math.Sqrt(0.75*0.25/2000) {
			t.Errorf("chain %d: frequency %v", c, f)
		}
	}
}

func BenchmarkTRJStepSAS(b *testing.B) {
	tg := sas.Paper()
	rw, _ := kernels.NewModelRandomWalk(tg, nil)
	k, err := kernels.NewTRJ(kernels.TRJConfig{Target: tg, Transports: sasTransports(tg), Jump: kernels.UniformJumps(2), Within: rw, Alternate: true})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	s, _ := k.Init(0, []float64{-3})
	b.ReportAllocs()
	for b.Loop() {
		s, _ = k.Step(rng, s)
	}
}

func TestTRJWithNUTSWithin(t *testing.T) {
	// Imperfect transports, so the within-model moves matter; NUTS targets
	// are the normalised components, which omit log p(k). The error bar
	// comes from independent chains (NUTS with a coarse step is sticky in
	// the tails, where single-chain batch means understate the error).
	tg := sas.Paper()
	reps, n := checks.Size(6, 4), checks.Size(6000, 4000)
	est := make([]float64, reps)
	moved := 0
	for r := range est {
		var nuts []*kernels.NUTS
		for k := 0; k < 2; k++ {
			nk, err := kernels.NewNUTS(tg.Component(k).Clone(), 0.1, nil)
			if err != nil {
				t.Fatal(err)
			}
			nuts = append(nuts, nk)
		}
		w, err := kernels.NewNUTSWithin(nuts)
		if err != nil {
			t.Fatal(err)
		}
		k, s := startTRJ(t, kernels.TRJConfig{Target: tg, Transports: imperfectSAS(), Jump: kernels.UniformJumps(2), Within: w, Alternate: true}, 0, []float64{-3})
		rng := rand.New(rand.NewPCG(41, uint64(r)))
		in := 0
		for i := 0; i < n; i++ {
			var info kernels.RJInfo
			s, info = k.Step(rng, s)
			if info.WithinAccepted {
				moved++
			}
			if s.Model == 1 {
				in++
			}
			if i%997 == 0 {
				want, _ := tg.LogDensity(s.Model, s.Theta)
				if math.Abs(want-s.LogDensity) > 1e-8*(1+math.Abs(want)) {
					t.Fatalf("step %d: stored log π %v, recomputed %v", i, s.LogDensity, want)
				}
			}
		}
		est[r] = float64(in) / float64(n)
	}
	m, sd := stat.MeanStdDev(est, nil)
	se := sd / math.Sqrt(float64(reps))
	t.Logf("TRJ + NUTS: π̂(k=2) = %.4f ± %.4f over %d chains, within-model moves %d of %d", m, se, reps, moved, n*reps)
	if math.Abs(m-0.75) > 4*se {
		t.Errorf("π̂(k=2) = %v, want 0.75 ± 4·%v", m, se)
	}
	if moved < n*reps/2 {
		t.Errorf("NUTS moved only %d times in %d steps", moved, n*reps)
	}
}
