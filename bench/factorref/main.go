// Command factorref computes a reference value of π(2 factors | y) for
// the factor-analysis space of package factor (factor.NewSpace on
// factor.DefaultData) without trj's transports, pilots or jumps, and
// prints the figures behind factor.ReferencePi2.
//
// Run from the module root:
//
//	go run ./bench/factorref            # the reference (about 250 CPU-s)
//	go run ./bench/factorref -n 200000  # a quicker look
//	go run ./bench/factorref -score 1,2,3  # trj.Run's defaults, seeds 1-3, against factor.ReferencePi2
//	go run ./bench/factorref -score 1,2,3 -folded  # the same on the folded sign-free models
//
// Each model's evidence is estimated on the sign-free scale θ (signfree.go):
// every loading real, the diagonal β_jj included, so that the posterior is
// invariant under the sign flip of any column of B and its integral is the
// model's evidence. NUTS chains on θ (which cross β_22 = 0, where the
// model's positive-diagonal scale has two disconnected sign modes) are
// folded onto one sign copy and fitted by a mixture of multivariate t's;
// the importance proposal is that mixture symmetrised over the 2^k sign
// flips, so it gives every sign mode the posterior's own weight. A second
// round refits the mixture to the first round's draws, resampled by
// weight. Three estimates per model are printed: the two
// importance-sampling rounds and Meng and Wong's bridge between the NUTS
// draws (randomly flipped) and the second proposal.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/factor"
)

func main() {
	n := flag.Int("n", 1000000, "importance draws per model and round")
	chains := flag.Int("chains", 8, "NUTS chains per model")
	draws := flag.Int("draws", 5000, "NUTS draws per chain (after 1000 warm-up)")
	g := flag.Int("g", 16, "components of the proposal mixture (before the sign flips)")
	nu := flag.Float64("nu", 4, "degrees of freedom of the t proposals")
	workers := flag.Int("workers", 2, "goroutines")
	seed := flag.Uint64("seed", 1, "seed")
	scoreSeeds := flag.String("score", "", "instead of the reference, score trj.Run's defaults with these seeds (comma-separated) against factor.ReferencePi2")
	sym := flag.Bool("sym", false, "with -score: symmetrised independence proposals on the unfolded sign-free scale")
	fold := flag.Bool("folded", false, "with -score: the models on the sign-free scale folded onto positive pivots (folded.go) instead of factor.NewSpace")
	flag.Parse()
	if *scoreSeeds != "" {
		var seeds []uint64
		for _, f := range strings.Split(*scoreSeeds, ",") {
			s, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
			if err != nil {
				fmt.Fprintln(os.Stderr, "factorref: -score:", err)
				os.Exit(2)
			}
			seeds = append(seeds, s)
		}
		if *sym {
			if err := symScore(seeds); err != nil {
				fmt.Fprintln(os.Stderr, "factorref:", err)
				os.Exit(1)
			}
			return
		}
		if err := score(seeds, *fold); err != nil {
			fmt.Fprintln(os.Stderr, "factorref:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*n, *chains, *draws, *g, *nu, *workers, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "factorref:", err)
		os.Exit(1)
	}
}

// refit is the number of draws, resampled from the first round, that the
// second round's mixture is fitted to.
const refit = 20000

// modelResult holds one model's three estimates of log Z.
type modelResult struct {
	K        int
	IS1, IS2 isResult
	Bridge   bridgeResult
	Pivots   []int
}

func run(n, chains, draws, g int, nu float64, workers int, seed uint64) error {
	y, err := factor.DefaultData()
	if err != nil {
		return err
	}
	t0, c0 := time.Now(), cpuSeconds()
	var res []modelResult
	for _, k := range factor.Factors() {
		r, err := evidence(y, k, n, chains, draws, g, nu, workers, seed)
		if err != nil {
			return fmt.Errorf("%d factors: %w", k, err)
		}
		res = append(res, r)
	}
	fmt.Printf("\n| estimate | log Z (2) | SE | log Z (3) | SE | π(2) | SE |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	row := func(name string, a, sa, b, sb float64) {
		p, se := pi2(a, sa, b, sb)
		fmt.Printf("| %s | %.4f | %.4f | %.4f | %.4f | %.5f | %.5f |\n", name, a, sa, b, sb, p, se)
	}
	r2, r3 := res[0], res[1]
	row("importance, mixture fitted to NUTS", r2.IS1.LogZ, r2.IS1.SE, r3.IS1.LogZ, r3.IS1.SE)
	row("importance, mixture refitted", r2.IS2.LogZ, r2.IS2.SE, r3.IS2.LogZ, r3.IS2.SE)
	row("bridge, NUTS draws and refitted mixture", r2.Bridge.LogZ, r2.Bridge.SE, r3.Bridge.LogZ, r3.Bridge.SE)
	fmt.Printf("\nCPU %.1f s, wall %.1f s (n %d, %d×%d NUTS draws, %d components, ν %g, seed %d)\n",
		cpuSeconds()-c0, time.Since(t0).Seconds(), n, chains, draws, g, nu, seed)
	return nil
}

// pi2 is Z2/(Z2+Z3) with its delta-method SE from independent log Z's.
func pi2(a, sa, b, sb float64) (p, se float64) {
	p = 1 / (1 + math.Exp(b-a))
	return p, p * (1 - p) * math.Hypot(sa, sb)
}

// evidence runs the three estimates of the k-factor model's log Z.
func evidence(y *mat.Dense, k, n, chains, draws, g int, nu float64, workers int, seed uint64) (modelResult, error) {
	m, err := factor.NewModel(y, k)
	if err != nil {
		return modelResult{}, err
	}
	_, p := y.Dims()
	lay := factor.NewLayout(p, k)
	target := newSignFree(m, lay)
	dim := lay.Dim()

	c0 := cpuSeconds()
	sr, err := kernels.Sample(context.Background(), func(int) (kernels.Target, error) { return target.clone(), nil },
		&kernels.SampleSettings{Chains: chains, Warmup: 1000, Draws: draws, Seed: seed})
	if err != nil {
		return modelResult{}, err
	}
	var post [][]float64
	for _, c := range sr.Chains {
		for i := 0; i+dim <= len(c.Draws); i += dim {
			post = append(post, append([]float64(nil), c.Draws[i:i+dim]...))
		}
	}
	fold, rows := newFolder(lay, post)
	folded := make([][]float64, len(post))
	for i, th := range post {
		folded[i] = append([]float64(nil), th...)
		fold.fold(folded[i])
	}
	fmt.Fprintf(os.Stderr, "%d factors: NUTS %d draws, %.1f CPU-s; pivot rows %v\n", k, len(post), cpuSeconds()-c0, rows)

	res := modelResult{K: k, Pivots: rows}
	c0 = cpuSeconds()
	mrng := rand.New(rand.NewPCG(seed, 98))
	comps, wts, err := fitMix(folded, nil, g, nu, mrng)
	if err != nil {
		return res, err
	}
	q1 := newSymMix(lay, comps, wts, seed, 0)
	fmt.Fprintf(os.Stderr, "%d factors: mixture of %d fitted, %.1f CPU-s\n", k, g, cpuSeconds()-c0)
	c0 = cpuSeconds()
	res.IS1 = importance(target, q1, n, workers, seed)
	report(k, "IS round 1", res.IS1, cpuSeconds()-c0)

	// Refit to the first round's draws, folded and resampled by weight.
	c0 = cpuSeconds()
	re := resample(res.IS1.Draws, res.IS1.LogWeight, refit, mrng)
	for _, th := range re {
		fold.fold(th)
	}
	comps, wts, err = fitMix(re, nil, g, nu, mrng)
	if err != nil {
		return res, err
	}
	q2 := newSymMix(lay, comps, wts, seed+1000, 0)
	fmt.Fprintf(os.Stderr, "%d factors: mixture refitted, %.1f CPU-s\n", k, cpuSeconds()-c0)
	res.IS1.Draws = nil
	c0 = cpuSeconds()
	res.IS2 = importance(target, q2, n, workers, seed+1000)
	report(k, "IS round 2", res.IS2, cpuSeconds()-c0)

	// Bridge between the NUTS draws, each column's sign flipped at random
	// (so that they are draws of the symmetric posterior), and q2's draws.
	c0 = cpuSeconds()
	rng := rand.New(rand.NewPCG(seed, 99))
	lp1, lq1 := make([]float64, len(post)), make([]float64, len(post))
	for i, th := range post {
		for j := 0; j < k; j++ {
			if rng.IntN(2) == 1 {
				flipColumn(lay, th, j)
			}
		}
		if lp1[i], err = target.LogDensity(th); err != nil {
			return res, err
		}
		lq1[i] = q2.LogProb(th)
	}
	lq2 := make([]float64, len(res.IS2.Draws))
	lp2 := make([]float64, len(res.IS2.Draws))
	for i := range res.IS2.Draws {
		lq2[i] = res.IS2.LogQ[i]
		lp2[i] = res.IS2.LogWeight[i] + lq2[i]
	}
	res.IS2.Draws = nil
	res.Bridge = bridge(lp1, lq1, lp2, lq2, draws)
	fmt.Fprintf(os.Stderr, "%d factors: bridge log Z %.4f ± %.4f (τ %.1f, %d iterations), %.1f CPU-s\n",
		k, res.Bridge.LogZ, res.Bridge.SE, res.Bridge.Tau, res.Bridge.Iter, cpuSeconds()-c0)
	return res, nil
}

// resample picks m of the draws by systematic resampling on their log
// weights.
func resample(draws [][]float64, lw []float64, m int, rng *rand.Rand) [][]float64 {
	mx := lw[0]
	for _, v := range lw {
		mx = math.Max(mx, v)
	}
	cum := make([]float64, len(lw))
	s := 0.0
	for i, v := range lw {
		s += math.Exp(v - mx)
		cum[i] = s
	}
	out := make([][]float64, 0, m)
	u := rng.Float64()
	i := 0
	for j := 0; j < m; j++ {
		t := (u + float64(j)) / float64(m) * s
		for cum[i] < t {
			i++
		}
		out = append(out, append([]float64(nil), draws[i]...))
	}
	return out
}

func report(k int, name string, r isResult, cpu float64) {
	fmt.Fprintf(os.Stderr, "%d factors: %s log Z %.4f ± %.4f, ESS %.0f of %d (%.1f %%), largest weight %.2g of the sum, %.1f CPU-s\n",
		k, name, r.LogZ, r.SE, r.ESS, r.N, 100*r.ESS/float64(r.N), r.MaxShare, cpu)
}
