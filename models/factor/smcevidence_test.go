package factor

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/kernels"
)

// The measurements of issue 26's "SMC evidence that holds" (bench/README.md,
// "SMC evidence (issue 26)"). They log and check nothing, and are long: set
// TRJ_SMCEV to a comma-separated list of what to run ("runs", "is").

func smcevWants(t *testing.T, what string) {
	t.Helper()
	for _, w := range strings.Split(os.Getenv("TRJ_SMCEV"), ",") {
		if w == what {
			return
		}
	}
	t.Skipf("set TRJ_SMCEV=%s to run this measurement", what)
}

// smcevData is the data of the measurement what, skipping t unless
// TRJ_SMCEV asks for it.
func smcevData(t *testing.T, what string) *mat.Dense {
	t.Helper()
	smcevWants(t, what)
	return loadData(t)
}

// smcevSeeds reads TRJ_SMCEV_N (particles), TRJ_SMCEV_SEEDS and
// TRJ_SMCEV_ESS (conditional ESS fraction), with the given defaults.
func smcevSeeds(n, seeds int, ess float64) (int, int, float64) {
	return smcevInt("TRJ_SMCEV_N", n), smcevInt("TRJ_SMCEV_SEEDS", seeds), smcevFloat("TRJ_SMCEV_ESS", ess)
}

func smcevInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func smcevFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil && v > 0 {
		return v
	}
	return def
}

// smcevFactory is what TemperedFactory returns: the tempered models of k factors.
type smcevFactory = func(worker int) (kernels.TemperedModel, error)

// smcevEach calls run with the tempered models of each number of factors in ks.
func smcevEach(t *testing.T, y *mat.Dense, ks []int, run func(k int, f smcevFactory)) {
	t.Helper()
	for _, k := range ks {
		f, err := TemperedFactory(y, k)
		if err != nil {
			t.Fatal(err)
		}
		run(k, f)
	}
}

// smcevRun is one SMC run of f, failing t on an error.
func smcevRun(t *testing.T, f smcevFactory, set *kernels.SMCSettings) *kernels.SMCResult {
	t.Helper()
	r, err := kernels.RunSMC(context.Background(), f, set)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// smcevPilot is the long SMC run (4000 particles) that the importance
// mixtures are fitted to.
func smcevPilot(t *testing.T, f smcevFactory) (*kernels.SMCResult, *kernels.SMCSettings) {
	t.Helper()
	set := &kernels.SMCSettings{Particles: 4000, Seed: 99, ESSFraction: 0.9}
	return smcevRun(t, f, set), set
}

// isSummary summarises log importance weights lw: their maximum top, the
// weights w = exp(lw − top), their mean m, the relative SE se of the mean
// and the ESS.
func isSummary(lw []float64) (top float64, w []float64, m, se, ess float64) {
	top = floats.Max(lw)
	w = make([]float64, len(lw))
	for i := range w {
		w[i] = math.Exp(lw[i] - top)
	}
	m, sd := stat.MeanStdDev(w, nil)
	se = sd / math.Sqrt(float64(len(lw))) / m
	ess = floats.Sum(w) * floats.Sum(w) / floats.Dot(w, w)
	return top, w, m, se, ess
}

// TestSMCEvidenceRuns logs the SMC log evidence of independent runs of each
// model: TRJ_SMCEV_N particles (default 1000), conditional ESS fraction
// TRJ_SMCEV_ESS (0.5), TRJ_SMCEV_SEEDS seeds (5).
func TestSMCEvidenceRuns(t *testing.T) {
	y := smcevData(t, "runs")
	n, seeds, ess := smcevSeeds(1000, 5, 0.5)
	smcevEach(t, y, Factors(), func(k int, f smcevFactory) {
		var zs []float64
		for seed := 1; seed <= seeds; seed++ {
			set := &kernels.SMCSettings{Particles: n, Seed: uint64(seed), ESSFraction: ess, MoveTolerance: smcevFloat("TRJ_SMCEV_TOL", 0)}
			switch os.Getenv("TRJ_SMCEV_MOVE") {
			case "nuts":
				set.Move = kernels.SMCNUTS{}
			case "rwm":
				set.Move = kernels.SMCRWM{}
			}
			r := smcevRun(t, f, set)
			zs = append(zs, r.LogZ)
			pos := 0
			lay := NewLayout(6, k)
			for i := 0; i < n; i++ {
				if lay.Mode(r.Particle(i)) > 0 {
					pos++
				}
			}
			t.Logf("k=%d seed %d: log Z %.3f, %d temperatures, moves %v, acceptance %.2f, + mode %.3f, evals %d", k, seed, r.LogZ, len(r.Temperatures)-1, r.Moves, r.Acceptance, float64(pos)/float64(n), r.Evals)
		}
		m, sd := stat.MeanStdDev(zs, nil)
		t.Logf("k=%d N=%d ESS=%.2f: mean log Z %.3f, sd %.3f over %d seeds", k, n, ess, m, sd, seeds)
	})
}

// TestSMCEvidenceKernelIS estimates each model's log evidence by importance
// sampling from a heavy-tailed kernel mixture: Student-t (ν = 5) components
// centred on the particles of one long SMC run, with the particles'
// covariance scaled by h² (TRJ_SMCEV_H, default 0.5). The mixture's weights
// do not enter the estimate's expectation, only its variance, so the
// estimate does not depend on SMC's mode weights or its incremental
// weights; its SE is the usual one of a mean of independent weights.
func TestSMCEvidenceKernelIS(t *testing.T) {
	y := smcevData(t, "is")
	h := smcevFloat("TRJ_SMCEV_H", 0.5)
	draws := smcevInt("TRJ_SMCEV_DRAWS", 40000)
	centres := smcevInt("TRJ_SMCEV_CENTRES", 400)
	const nu = 5.0
	smcevEach(t, y, Factors(), func(k int, f smcevFactory) {
		r, set := smcevPilot(t, f)
		d := r.Dim
		x := mat.NewDense(set.Particles, d, r.Particles)
		ch := scaledChol(t, covariance(x), h*h)
		var l mat.TriDense
		ch.LTo(&l)
		// Centres: every (4000/centres)-th particle.
		cs := make([][]float64, centres)
		for c := range cs {
			cs[c] = append([]float64(nil), r.Particle(c*set.Particles/centres)...)
		}
		tConst := tLogConst(nu, d, ch.LogDet())
		lq := make([]float64, centres)
		lw := isLogWeights(t, y, k, d, draws, func(rng *rand.Rand, u, z []float64) {
			drawT(rng, u, z, cs[rng.IntN(centres)], &l, nu)
		}, func(mahal func(mean []float64, l *mat.TriDense) float64) float64 {
			for c2, m := range cs {
				lq[c2] = tConst - (nu+float64(d))/2*math.Log1p(mahal(m, &l)/nu)
			}
			return floats.LogSumExp(lq) - math.Log(float64(centres))
		})
		top, w, m, se, ess := isSummary(lw)
		t.Logf("k=%d: importance log Z %.4f ± %.4f (h %.2f, %d draws, %d centres, ESS %.0f, max weight share %.4f); SMC run of 4000: %.4f",
			k, top+math.Log(m), se, h, draws, centres, ess, 1/floats.Sum(w), r.LogZ)
	})
}

// tComp is a multivariate Student-t component of an importance mixture.
type tComp struct {
	logW  float64
	mean  []float64
	l     mat.TriDense
	konst float64
}

// TestSMCEvidenceModeIS estimates each model's log evidence by importance sampling
// from a mixture of multivariate Student-t (ν = TRJ_SMCEV_NU, default 5)
// components, one per sign mode (the sign of each factor j ≥ 2's summed
// loadings below the diagonal) of one long SMC run's particles, with that
// mode's mean and covariance scaled by TRJ_SMCEV_S² (1.2²), plus their
// mirror images under every sign flip (weight 0.2 in all), so that a mode
// the particles miss is still covered. With TRJ_SMCEV_KDE = C, each sign
// mode's component is replaced by C components centred on its particles
// with its covariance scaled by TRJ_SMCEV_H² (0.5²), a kernel estimate that
// follows non-Gaussian modes. The estimate's expectation does
// not depend on the mixture, only its variance.
func TestSMCEvidenceModeIS(t *testing.T) {
	y := smcevData(t, "modeis")
	nu := smcevFloat("TRJ_SMCEV_NU", 5)
	sc := smcevFloat("TRJ_SMCEV_S", 1.2)
	draws := smcevInt("TRJ_SMCEV_DRAWS", 200000)
	kde := smcevInt("TRJ_SMCEV_KDE", 0) // kernel centres per sign pattern (0: one component)
	h := smcevFloat("TRJ_SMCEV_H", 0.5)
	ks := Factors()
	if k := smcevInt("TRJ_SMCEV_K", 0); k > 0 {
		ks = []int{k}
	}
	smcevEach(t, y, ks, func(k int, f smcevFactory) {
		r, set := smcevPilot(t, f)
		groups, all, cum, acc := modeMixture(t, r, k, set.Particles, nu, sc, kde, h)
		lw := modeISWeights(t, y, k, r.Dim, all, cum, acc, nu, draws)
		top, w, m, se, ess := isSummary(lw)
		// Halves: a heavy weight tail shows as disagreement.
		h1, _ := stat.MeanStdDev(w[:draws/2], nil)
		h2, _ := stat.MeanStdDev(w[draws/2:], nil)
		counts := map[int]int{}
		for pat, us := range groups {
			counts[pat] = len(us)
		}
		t.Logf("k=%d: importance log Z %.4f ± %.4f (halves %.4f, %.4f; ν %.0f, s %.2f, %d draws, ESS %.0f, max weight share %.4f; %d components; particles per sign pattern %v); SMC run of 4000: %.4f",
			k, top+math.Log(m), se, top+math.Log(h1), top+math.Log(h2), nu, sc, draws, ess, 1/floats.Sum(w), len(all), counts, r.LogZ)
	})
}

// modeMixture groups the SMC particles by sign pattern and fits a
// Student-t mixture: one component per pattern and its sign-flipped mirrors
// (or kernel components when kde > 0).
func modeMixture(t *testing.T, r *kernels.SMCResult, k, particles int, nu, sc float64, kde int, h float64) (groups map[int][][]float64, all []*tComp, cum []float64, acc float64) {
	d := r.Dim
	lay := NewLayout(6, k)
	pattern := func(u []float64) int {
		m := 0
		for j := 1; j < k; j++ {
			s := 0.0
			for i := j + 1; i < lay.P; i++ {
				s += u[lay.Lower[i][j]]
			}
			if s < 0 {
				m |= 1 << (j - 1)
			}
		}
		return m
	}
	flip := func(u []float64, m int) {
		for j := 1; j < k; j++ {
			if m&(1<<(j-1)) != 0 {
				for i := j + 1; i < lay.P; i++ {
					u[lay.Lower[i][j]] = -u[lay.Lower[i][j]]
				}
			}
		}
	}
	groups = map[int][][]float64{}
	for i := 0; i < particles; i++ {
		u := r.Particle(i)
		groups[pattern(u)] = append(groups[pattern(u)], u)
	}
	var comps []*tComp
	var mirrors []*tComp
	nf := 1 << (k - 1)
	for pat, us := range groups {
		if len(us) < 3*d {
			t.Logf("k=%d: sign pattern %d has %d particles, covered by mirrors only", k, pat, len(us))
			continue
		}
		for fl := 0; fl < nf; fl++ {
			x := mat.NewDense(len(us), d, nil)
			for i, u := range us {
				v := append([]float64(nil), u...)
				flip(v, fl)
				x.SetRow(i, v)
			}
			cov := covariance(x)
			cov.ScaleSym(sc*sc, cov)
			ch := scaledChol(t, cov, 1)
			c := &tComp{mean: make([]float64, d)}
			for j := range c.mean {
				c.mean[j] = stat.Mean(mat.Col(nil, j, x), nil)
			}
			ch.LTo(&c.l)
			c.konst = tLogConst(nu, d, ch.LogDet())
			if fl == 0 && kde > 0 {
				// Kernel components: centres on the pattern's
				// particles, its covariance scaled by h².
				chk := scaledChol(t, cov, h*h/(sc*sc))
				nc := min(kde, len(us))
				for q := 0; q < nc; q++ {
					kc := &tComp{mean: append([]float64(nil), us[q*len(us)/nc]...)}
					chk.LTo(&kc.l)
					kc.konst = tLogConst(nu, d, chk.LogDet())
					kc.logW = math.Log(0.8 * float64(len(us)) / float64(particles) / float64(nc))
					comps = append(comps, kc)
				}
			} else if fl == 0 {
				c.logW = math.Log(0.8 * float64(len(us)) / float64(particles))
				comps = append(comps, c)
			} else {
				mirrors = append(mirrors, c)
			}
		}
	}
	for _, c := range mirrors {
		c.logW = math.Log(0.2 / float64(len(mirrors)))
	}
	all = append(comps, mirrors...)
	// Renormalise the weights (particles of dropped patterns).
	lws := make([]float64, len(all))
	for i, c := range all {
		lws[i] = c.logW
	}
	norm := floats.LogSumExp(lws)
	cum = make([]float64, len(all))
	acc = 0.0
	for i, c := range all {
		c.logW -= norm
		acc += math.Exp(c.logW)
		cum[i] = acc
	}
	return groups, all, cum, acc
}

// modeISWeights returns the log importance weights of draws from the
// mixture for the posterior of k factors.
func modeISWeights(t *testing.T, y *mat.Dense, k, d int, all []*tComp, cum []float64, acc, nu float64, draws int) []float64 {
	lq := make([]float64, len(all))
	return isLogWeights(t, y, k, d, draws, func(rng *rand.Rand, u, z []float64) {
		ui := rng.Float64() * acc
		c := all[len(all)-1]
		for j, v := range cum {
			if ui < v {
				c = all[j]
				break
			}
		}
		drawT(rng, u, z, c.mean, &c.l, nu)
	}, func(mahal func(mean []float64, l *mat.TriDense) float64) float64 {
		for ci, cc := range all {
			lq[ci] = cc.logW + cc.konst - (nu+float64(d))/2*math.Log1p(mahal(cc.mean, &cc.l)/nu)
		}
		return floats.LogSumExp(lq)
	})
}

// isLogWeights returns draws log importance weights of the posterior of k
// factors (dimension d) against a mixture: draw sets u to a draw of the
// mixture (z is scratch), and logQ returns the mixture's log density at that
// draw, given mahal, the squared Mahalanobis distance of the draw from a
// centre mean under the scale L·Lᵀ.
func isLogWeights(t *testing.T, y *mat.Dense, k, d, draws int, draw func(rng *rand.Rand, u, z []float64), logQ func(mahal func(mean []float64, l *mat.TriDense) float64) float64) []float64 {
	post, err := NewModel(y, k)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, uint64(k)))
	z := make([]float64, d)
	u := make([]float64, d)
	diff := mat.NewVecDense(d, nil)
	sol := mat.NewVecDense(d, nil)
	mahal := func(mean []float64, l *mat.TriDense) float64 {
		for j := range u {
			diff.SetVec(j, u[j]-mean[j])
		}
		if err := sol.SolveVec(l, diff); err != nil {
			t.Fatal(err)
		}
		return mat.Dot(sol, sol)
	}
	lw := make([]float64, draws)
	for i := range lw {
		draw(rng, u, z)
		lq := logQ(mahal)
		lp, err := post.LogDensity(u)
		if err != nil || math.IsNaN(lp) {
			lp = math.Inf(-1)
		}
		lw[i] = lp - lq
	}
	return lw
}

// TestSMCEvidenceSchedule compares, over TRJ_SMCEV_SEEDS seeds (20), SMC runs of
// TRJ_SMCEV_N particles (400, the experiment's) at conditional ESS
// TRJ_SMCEV_ESS (0.9) choosing their temperatures adaptively with runs on
// the fixed schedule of one adaptive run of another seed.
func TestSMCEvidenceSchedule(t *testing.T) {
	y := smcevData(t, "schedule")
	n, seeds, ess := smcevSeeds(400, 20, 0.9)
	smcevEach(t, y, Factors(), func(k int, f smcevFactory) {
		pilot := smcevRun(t, f, &kernels.SMCSettings{Particles: n, Seed: 1000, ESSFraction: ess})
		for _, fixed := range []bool{false, true} {
			var zs []float64
			for seed := 1; seed <= seeds; seed++ {
				set := &kernels.SMCSettings{Particles: n, Seed: uint64(seed), ESSFraction: ess}
				if fixed {
					set.Temperatures = pilot.Temperatures
				}
				zs = append(zs, smcevRun(t, f, set).LogZ)
			}
			m, sd := stat.MeanStdDev(zs, nil)
			lz, se := checks.LogMeanExp(zs)
			t.Logf("k=%d N=%d ESS=%.2f fixed schedule %v (%d temperatures): log Z mean %.3f sd %.3f; log mean exp %.3f ± %.3f; runs %.2f",
				k, n, ess, fixed, len(pilot.Temperatures)-1, m, sd, lz, se, zs)
		}
	})
}

// TestSMCEvidenceExperiment forms the factor experiment's SMC evidence as
// trj.Run's SMC pilots do with DefaultConfig (20 independent runs of 400
// particles, conditional ESS 0.9; the log of the mean evidence with its
// delta-method SE) for TRJ_SMCEV_SETS sets of seeds (3): set s uses seeds
// 20s+1 … 20s+20.
func TestSMCEvidenceExperiment(t *testing.T) {
	y := smcevData(t, "experiment")
	sets := smcevInt("TRJ_SMCEV_SETS", 3)
	smcevEach(t, y, Factors(), func(k int, f smcevFactory) {
		for set := 0; set < sets; set++ {
			var zs []float64
			for r := 1; r <= 20; r++ {
				zs = append(zs, smcevRun(t, f, &kernels.SMCSettings{Particles: 400, Seed: uint64(20*set + r), ESSFraction: 0.9}).LogZ)
			}
			m, sd := stat.MeanStdDev(zs, nil)
			lz, se := checks.LogMeanExp(zs)
			t.Logf("k=%d seeds %d-%d: log Z %.3f ± %.3f (log mean exp, delta-method SE); single runs mean %.3f sd %.3f",
				k, 20*set+1, 20*set+20, lz, se, m, sd)
		}
	})
}

// covariance is the covariance of the rows of x.
func covariance(x *mat.Dense) *mat.SymDense {
	var cov mat.SymDense
	stat.CovarianceMatrix(&cov, x, nil)
	return &cov
}

// scaledChol is the Cholesky factorisation of the covariance cov scaled by
// s2, failing t unless that is positive definite.
func scaledChol(t *testing.T, cov mat.Symmetric, s2 float64) *mat.Cholesky {
	t.Helper()
	var a mat.SymDense
	a.ScaleSym(s2, cov)
	var ch mat.Cholesky
	if !ch.Factorize(&a) {
		t.Fatal("covariance not positive definite")
	}
	return &ch
}

// tLogConst is the constant of the log density of the d-dimensional
// multivariate t with nu degrees of freedom and scale Σ, log|Σ| = logDet:
// log t_ν(x; m, Σ) = lgamma((ν+d)/2) − lgamma(ν/2) − d/2 log(νπ) − ½ log|Σ| − (ν+d)/2 log(1 + δ/ν).
func tLogConst(nu float64, d int, logDet float64) float64 {
	lg1, _ := math.Lgamma((nu + float64(d)) / 2)
	lg2, _ := math.Lgamma(nu / 2)
	return lg1 - lg2 - float64(d)/2*math.Log(nu*math.Pi) - 0.5*logDet
}

// drawT sets u to a draw of the multivariate t with nu (integer) degrees
// of freedom, centre mean and scale L·Lᵀ (l lower triangular), using z as
// scratch for the standard normal draw.
func drawT(rng *rand.Rand, u, z, mean []float64, l mat.Matrix, nu float64) {
	for j := range z {
		z[j] = rng.NormFloat64()
	}
	g := 0.0
	for j := 0; j < int(nu); j++ {
		v := rng.NormFloat64()
		g += v * v
	}
	s := math.Sqrt(nu / g)
	for a := range u {
		v := 0.0
		for b := 0; b <= a; b++ {
			v += l.At(a, b) * z[b]
		}
		u[a] = mean[a] + s*v
	}
}
