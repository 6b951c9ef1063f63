package factor

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/datasets"
)

func loadData(t *testing.T) *mat.Dense {
	t.Helper()
	y, err := DefaultData()
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// refLogPost is the k-factor log posterior density on the unconstrained
// scale written directly with gonum: priors from distuv, the likelihood
// row by row from a Cholesky factor, and the log-Jacobians of the log maps.
func refLogPost(y *mat.Dense, lay Layout, u []float64, withLik bool) float64 {
	n, p := y.Dims()
	B := lay.Loadings(u, nil)
	lp := 0.0
	half := distuv.Normal{Mu: 0, Sigma: 1}
	for j, pos := range lay.LogDiag {
		lp += math.Ln2 + half.LogProb(B.At(j, j)) + u[pos]
	}
	for i, row := range lay.Lower {
		for j, pos := range row {
			if pos >= 0 {
				lp += half.LogProb(B.At(i, j))
			}
		}
	}
	ig := distuv.InverseGamma{Alpha: IGShape, Beta: IGScale}
	lam := make([]float64, p)
	for i, pos := range lay.LogLambda {
		lam[i] = math.Exp(u[pos])
		lp += ig.LogProb(lam[i]) + u[pos]
	}
	if !withLik {
		return lp
	}
	var bbt mat.Dense
	bbt.Mul(B, B.T())
	sigma := mat.NewSymDense(p, nil)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			v := bbt.At(i, j)
			if i == j {
				v += lam[i]
			}
			sigma.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sigma) {
		return math.NaN()
	}
	logDet := ch.LogDet()
	x := mat.NewVecDense(p, nil)
	for r := 0; r < n; r++ {
		yr := mat.NewVecDense(p, append([]float64(nil), y.RawRowView(r)...))
		if err := ch.SolveVecTo(x, yr); err != nil {
			return math.NaN()
		}
		lp += -0.5*float64(p)*math.Log(2*math.Pi) - 0.5*logDet - 0.5*mat.Dot(yr, x)
	}
	return lp
}

func checkGrad(t *testing.T, name string, f func(u, g []float64) (float64, error), u []float64) {
	t.Helper()
	g := make([]float64, len(u))
	if _, err := f(u, g); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	scratch := make([]float64, len(u))
	want := checks.CentralGradient(func(x []float64) (float64, error) { return f(x, scratch) }, u, 1e-5)
	for i := range g {
		if d := math.Abs(g[i] - want[i]); d > 1e-5*(1+math.Abs(want[i])) {
			t.Errorf("%s: gradient[%d] = %.10g, finite differences %.10g", name, i, g[i], want[i])
		}
	}
}

func TestModelAgainstReference(t *testing.T) {
	y := loadData(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range Factors() {
		m, err := NewModel(y, k)
		if err != nil {
			t.Fatal(err)
		}
		prior, err := NewPriorModel(y, k)
		if err != nil {
			t.Fatal(err)
		}
		lay := NewLayout(6, k)
		if m.Dim() != lay.Dim() || lay.Dim() != 6*(k+1)-k*(k-1)/2 {
			t.Fatalf("k=%d: Dim %d, layout %d", k, m.Dim(), lay.Dim())
		}
		u := make([]float64, m.Dim())
		for trial := 0; trial < 3; trial++ {
			for i := range u {
				u[i] = 0.6 * rng.NormFloat64()
			}
			for _, pos := range lay.LogLambda {
				u[pos] -= 1
			}
			got, err := m.LogDensity(u)
			if err != nil {
				t.Fatal(err)
			}
			if want := refLogPost(y, lay, u, true); math.Abs(got-want) > 1e-9*math.Abs(want) {
				t.Errorf("k=%d: log posterior %.12g, reference %.12g", k, got, want)
			}
			gp, err := prior.LogDensity(u)
			if err != nil {
				t.Fatal(err)
			}
			if want := refLogPost(y, lay, u, false); math.Abs(gp-want) > 1e-9*(1+math.Abs(want)) {
				t.Errorf("k=%d: log prior %.12g, reference %.12g", k, gp, want)
			}
			checkGrad(t, "posterior", m.LogDensityGrad, u)
			f, err := TemperedFactory(y, k)
			if err != nil {
				t.Fatal(err)
			}
			tm, err := f(0)
			if err != nil {
				t.Fatal(err)
			}
			lpr, llik, err := tm.LogPriorLik(u, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(lpr+llik-got) > 1e-9*math.Abs(got) {
				t.Errorf("k=%d: prior %g + likelihood %g ≠ posterior %g", k, lpr, llik, got)
			}
			gl := make([]float64, len(u))
			lik := func(x, g []float64) (float64, error) {
				_, l, err := tm.LogPriorLik(x, gl, g)
				return l, err
			}
			checkGrad(t, "likelihood", lik, u)
		}
	}
}

func TestBadInput(t *testing.T) {
	if _, err := ReadData(strings.NewReader("a,b\n1,x\n")); err == nil {
		t.Error("non-numeric field accepted")
	}
	if _, err := ReadData(strings.NewReader("a,b\n1\n")); err == nil {
		t.Error("short row accepted")
	}
	if _, err := ReadData(strings.NewReader("a,b\n")); err == nil {
		t.Error("no rows accepted")
	}
	if _, err := NewModel(mat.NewDense(3, 6, nil), 2); err == nil {
		t.Error("fewer rows than variables accepted")
	}
	if _, err := NewModel(nil, 2); err == nil {
		t.Error("nil data accepted")
	}
	if err := SamplePrior(rand.New(rand.NewPCG(1, 1)), NewLayout(6, 2), make([]float64, 3)); err == nil {
		t.Error("short prior draw accepted")
	}
	cfg := DefaultConfig()
	cfg.Proposals = []string{"exact"}
	if err := cfg.Validate(); err == nil {
		t.Error("unknown proposal type accepted")
	}
}

// TestSamplePrior checks the exact prior draws against the prior's
// moments and tail probability, with 4-standard-error tolerances.
func TestSamplePrior(t *testing.T) {
	const n = 20000
	lay := NewLayout(6, 3)
	rng := rand.New(rand.NewPCG(3, 4))
	u := make([]float64, lay.Dim())
	var sumLow, sumSqLow, sumDiag float64
	small := 0
	nLow := 0
	for range n {
		if err := SamplePrior(rng, lay, u); err != nil {
			t.Fatal(err)
		}
		x := u[lay.Lower[5][2]]
		sumLow += x
		sumSqLow += x * x
		sumDiag += math.Exp(u[lay.LogDiag[1]])
		if math.Exp(u[lay.LogLambda[0]]) < IGScale {
			small++
		}
		nLow++
	}
	if m := sumLow / n; math.Abs(m) > 4/math.Sqrt(n) {
		t.Errorf("mean of β_63 %g, want 0", m)
	}
	if v := sumSqLow / n; math.Abs(v-1) > 4*math.Sqrt(2.0/n) {
		t.Errorf("variance of β_63 %g, want 1", v)
	}
	// E|N(0,1)| = √(2/π), Var = 1 − 2/π.
	if m := sumDiag / n; math.Abs(m-math.Sqrt(2/math.Pi)) > 4*math.Sqrt((1-2/math.Pi)/n) {
		t.Errorf("mean of β_22 %g, want %g", m, math.Sqrt(2/math.Pi))
	}
	// P(Λ < β) = P(Gamma(α, 1) > 1) = Q(α, 1).
	p := mathext.GammaIncRegComp(IGShape, 1)
	if f := float64(small) / n; math.Abs(f-p) > 4*math.Sqrt(p*(1-p)/n) {
		t.Errorf("P(Λ < %g) = %g, want %g", IGScale, f, p)
	}
}

func TestAlignment(t *testing.T) {
	l2, l3 := NewLayout(6, 2), NewLayout(6, 3)
	perm := Alignment(l2, l3)
	sorted := slices.Clone(perm)
	slices.Sort(sorted)
	for i, v := range sorted {
		if v != i {
			t.Fatalf("Alignment %v is not a permutation of 0..%d", perm, l3.Dim()-1)
		}
	}
	check := func(p3, p2 int) {
		if perm[p3] != p2 {
			t.Errorf("coordinate %d of the 3-factor model takes %d, want %d", p3, perm[p3], p2)
		}
	}
	check(l3.LogDiag[1], l2.LogDiag[1])
	check(l3.Lower[4][1], l2.Lower[4][1])
	check(l3.LogLambda[5], l2.LogLambda[5])
	if perm[l3.LogDiag[2]] < l2.Dim() || perm[l3.Lower[5][2]] < l2.Dim() {
		t.Error("a new loading does not take an auxiliary")
	}
}

// TestLopesWestJacobian checks the unconstrained Lopes–West density
// against the constrained one plus the log-Jacobian, and that its draws
// lie in the support.
func TestLopesWestJacobian(t *testing.T) {
	lay := NewLayout(6, 2)
	rng := rand.New(rand.NewPCG(5, 6))
	draws := make([][]float64, 300)
	for i := range draws {
		draws[i] = make([]float64, lay.Dim())
		for j := range draws[i] {
			draws[i][j] = 0.1*rng.NormFloat64() + 0.5
		}
		for _, pos := range lay.LogLambda {
			draws[i][pos] -= 2
		}
	}
	q, err := newLopesWest(draws, lay)
	if err != nil {
		t.Fatal(err)
	}
	conv := make([][]float64, len(draws))
	for i, d := range draws {
		conv[i] = slices.Clone(d)
		for _, pos := range lay.LogDiag {
			conv[i][pos] = math.Exp(d[pos])
		}
	}
	ref, err := NewLopesWestProposal(conv, lay.BetaIndices(), lay.LambdaIndices(), true)
	if err != nil {
		t.Fatal(err)
	}
	u := make([]float64, lay.Dim())
	for range 20 {
		if err := q.Sample(rng, u); err != nil {
			continue
		}
		got, err := q.LogDensity(u)
		if err != nil {
			t.Fatal(err)
		}
		c := slices.Clone(u)
		jac := 0.0
		for _, pos := range lay.LogDiag {
			c[pos] = math.Exp(u[pos])
			jac += u[pos]
		}
		want, _ := ref.LogDensity(c)
		if math.Abs(got-want-jac) > 1e-10*(1+math.Abs(want)) {
			t.Errorf("log q %g, want %g", got, want+jac)
		}
	}
}

// TestPilotModes checks that an SMC pilot of the 2-factor model populates
// both modes of its posterior (Lopes and West report weights near
// 0.78/0.22); a NUTS chain would stay in one.
func TestPilotModes(t *testing.T) {
	n := checks.Size(1000, 300)
	y := loadData(t)
	f, err := TemperedFactory(y, 2)
	if err != nil {
		t.Fatal(err)
	}
	st := DefaultConfig().SMC
	st.Particles, st.Seed = n, 7
	r, err := kernels.RunSMC(context.Background(), f, &st)
	if err != nil {
		t.Fatal(err)
	}
	lay := NewLayout(6, 2)
	pos := 0
	for i := range n {
		if lay.Mode(r.Particle(i)) > 0 {
			pos++
		}
	}
	w := float64(pos) / float64(n)
	t.Logf("weight of the positive mode %.3f (%d particles)", w, n)
	if w < 0.1 || w > 0.99 {
		t.Errorf("positive-mode weight %g: SMC missed a mode", w)
	}
}

// TestRunTiny runs the whole experiment at toy sizes and writes its
// figures.
func TestRunTiny(t *testing.T) {
	if raceDetector && testing.Short() {
		// Under the race detector this took nearly four minutes of CI's
		// race pass; trj.Run's concurrency, all it would check here, is
		// covered by the root package's race pass. The pass without -race
		// runs it.
		t.Skip("skipped with -race -short (run without -race)")
	}
	cfg := DefaultConfig()
	cfg.PilotDraws = 400
	cfg.SMC = kernels.SMCSettings{} // the paper's faster tempering
	cfg.PilotRefresh = 2
	cfg.Chains, cfg.Steps = 2, 100
	cfg.BridgeReplicates = 2
	cfg.Train.Iterations = 10
	cfg.Train.StopWindow = 0
	cfg.RQMA.HiddenPerDim = 1
	cfg.RQMA.Layers = 1
	cfg.ScatterSources = 20
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Settings["data"]; got != datasets.Label(datasets.ExchangeRates) {
		t.Errorf("settings name the data %v", got)
	}
	if !slices.Equal(res.Models, []string{"2", "3"}) {
		t.Errorf("labels %v", res.Models)
	}
	for _, kind := range ProposalTypes() {
		p := res.Proposals[kind]
		if p == nil {
			t.Fatalf("no result for %s", kind)
		}
		s := float64(p.ModelProbabilities["2"] + p.ModelProbabilities["3"])
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("%s: probabilities sum to %g", kind, s)
		}
		if p.Bridge == nil || p.Bridge.Replicates != 2 || len(res.Running[kind]) != 2 {
			t.Errorf("%s: missing bridge replicates or chains", kind)
		}
	}
	dir := t.TempDir()
	files, err := res.WriteFigures(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{"factor_running", "factor_bridge", "factor_proposals"} {
		if _, err := os.Stat(filepath.Join(dir, base+".png")); err != nil {
			t.Errorf("%s not written (%v)", base, files)
		}
	}
	if err := res.WriteJSONFile(filepath.Join(dir, "r.json")); err != nil {
		t.Fatal(err)
	}
}

// TestLoadConfigData checks that a data file on disk and the embedded copy
// read the same, and that each is named as what it is.
func TestLoadConfigData(t *testing.T) {
	checks.ConfigDataLoads(t, datasets.ExchangeRates, loadConfigData)
}
