package robustvs

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/experiment"
)

func loadData(t *testing.T) *Data {
	t.Helper()
	d, err := DefaultData()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// refLogPost is the log posterior density of model ind written directly
// with distuv: normal priors and a pointwise two-component mixture.
func refLogPost(d *Data, ind []int, beta []float64, withLik bool) float64 {
	prior := distuv.Normal{Mu: 0, Sigma: PriorSD}
	lp := 0.0
	for _, b := range beta {
		lp += prior.LogProb(b)
	}
	if !withLik {
		return lp
	}
	n1 := distuv.Normal{Mu: 0, Sigma: NoiseSD1}
	n2 := distuv.Normal{Mu: 0, Sigma: NoiseSD2}
	for i, y := range d.Y {
		mu, j := 0.0, 0
		for c, v := range ind {
			if v != 0 {
				mu += d.X.At(i, c) * beta[j]
				j++
			}
		}
		r := y - mu
		lp += floats.LogSumExp([]float64{math.Log(0.5) + n1.LogProb(r), math.Log(0.5) + n2.LogProb(r)})
	}
	return lp
}

func TestModelAgainstReference(t *testing.T) {
	d := loadData(t)
	if n, p := d.X.Dims(); n != 80 || p != 4 || d.X.At(3, 0) != 1 {
		t.Fatalf("design %d×%d, first column %g", n, p, d.X.At(3, 0))
	}
	space, err := NewSpace(d)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for k, ind := range Indicators() {
		if l := space.ModelLabel(k); l != Labels()[k] {
			t.Errorf("label %q, want %q", l, Labels()[k])
		}
		m, _ := space.Model(k)
		f, err := TemperedFactory(d, ind)
		if err != nil {
			t.Fatal(err)
		}
		tm, err := f(0)
		if err != nil {
			t.Fatal(err)
		}
		beta := make([]float64, m.Dim())
		for trial := 0; trial < 3; trial++ {
			for i := range beta {
				beta[i] = 1 + 2*rng.NormFloat64()
			}
			got, err := m.LogDensity(beta)
			if err != nil {
				t.Fatal(err)
			}
			if want := refLogPost(d, ind, beta, true); math.Abs(got-want) > 1e-9*math.Abs(want) {
				t.Errorf("%v: log posterior %.12g, reference %.12g", ind, got, want)
			}
			lpr, llik, err := tm.LogPriorLik(beta, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := refLogPost(d, ind, beta, false); math.Abs(lpr-want) > 1e-9*math.Abs(want) {
				t.Errorf("%v: log prior %.12g, reference %.12g", ind, lpr, want)
			}
			if math.Abs(lpr+llik-got) > 1e-9*math.Abs(got) {
				t.Errorf("%v: prior + likelihood %g, posterior %g", ind, lpr+llik, got)
			}
			g := make([]float64, len(beta))
			if _, err := m.LogDensityGrad(beta, g); err != nil {
				t.Fatal(err)
			}
			want := checks.CentralGradient(m.LogDensity, beta, 1e-5)
			for i := range g {
				if math.Abs(g[i]-want[i]) > 1e-5*(1+math.Abs(want[i])) {
					t.Errorf("%v: gradient[%d] %.10g, finite differences %.10g", ind, i, g[i], want[i])
				}
			}
		}
	}
}

func TestAlignment(t *testing.T) {
	cases := []struct {
		a, b []int
		want []int
	}{
		{[]int{1, 0, 0, 0}, []int{1, 1, 0, 0}, []int{0, 1}},
		{[]int{1, 1, 0, 0}, []int{1, 0, 1, 1}, []int{0, 1, 2}},
		{[]int{1, 0, 1, 1}, []int{1, 1, 1, 1}, []int{0, 3, 1, 2}},
		{[]int{1, 1, 0, 0}, []int{1, 1, 1, 1}, []int{0, 1, 2, 3}},
	}
	for _, c := range cases {
		if got := Alignment(c.a, c.b); !slices.Equal(got, c.want) {
			t.Errorf("Alignment(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	perm := Permutations(Indicators())
	for k := range perm {
		for kp := range perm[k] {
			if (perm[k][kp] != nil) != (k < kp) {
				t.Errorf("permutation %d→%d present: %v", k, kp, perm[k][kp] != nil)
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	if _, err := ReadData(strings.NewReader("y,X.1\n1,1\n")); err == nil {
		t.Error("missing columns accepted")
	}
	if _, err := ReadData(strings.NewReader("y,X.1,X.2,X.3,X.4\n1,1,2,3,nan\n")); err == nil {
		t.Error("NaN accepted")
	}
	d := loadData(t)
	if _, err := NewModel(d, []int{0, 0, 0, 0}); err == nil {
		t.Error("empty model accepted")
	}
	if _, err := NewModel(d, []int{1, 1}); err == nil {
		t.Error("short indicator accepted")
	}
	cfg := DefaultConfig()
	cfg.Proposals = []string{"lopes-west"}
	if err := cfg.Validate(); err == nil {
		t.Error("unknown proposal type accepted")
	}
}

// TestRunTiny runs the whole experiment at toy sizes and writes its
// figures.
func TestRunTiny(t *testing.T) {
	if raceDetector && testing.Short() {
		// The whole experiment outlasted ten minutes under the race
		// detector on a loaded machine; trj.Run's concurrency, all the
		// detector would check here, is covered by the root package's
		// race pass. The pass without -race runs it.
		t.Skip("skipped with -race -short (run without -race)")
	}
	cfg := tinyConfig()
	cfg.ScatterSources = 20
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Settings["data"]; got != datasets.Label(datasets.RobustRegression) {
		t.Errorf("settings name the data %v", got)
	}
	if !slices.Equal(res.Models, []string{"1,0,0,0", "1,1,0,0", "1,0,1,1", "1,1,1,1"}) {
		t.Errorf("labels %v", res.Models)
	}
	for _, kind := range ProposalTypes() {
		p := res.Proposals[kind]
		if p == nil || p.Bridge == nil || p.Bridge.Replicates != 2 {
			t.Fatalf("%s: no bridge replicates", kind)
		}
		if len(res.Proposed[kind]) == 0 {
			t.Errorf("%s: no proposals for the scatter", kind)
		}
	}
	// The balance estimate is recorded for unreliable bridge estimates only.
	bad, _ := res.Settings["bridge_unreliable"].([]string)
	bal, _ := res.Settings["bridge_balance"].(map[string][][]float64)
	for kind, v := range bal {
		if !slices.Contains(bad, kind) || len(v) != 2 || len(v[0]) != 4 || len(v[1]) != 4 {
			t.Errorf("%s: balance estimate %v recorded (unreliable: %v)", kind, v, bad)
		}
	}
	t.Logf("unreliable %v, balance recorded for %d", bad, len(bal))
	dir := t.TempDir()
	if _, err := res.WriteFigures(dir); err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{"robustvs_bridge", "robustvs_proposals"} {
		if _, err := os.Stat(filepath.Join(dir, base+".svg")); err != nil {
			t.Errorf("%s not written", base)
		}
	}
}

// TestLoadConfigData checks that a data file on disk and the embedded copy
// read the same, and that each is named as what it is.
func TestLoadConfigData(t *testing.T) {
	checks.ConfigDataLoads(t, datasets.RobustRegression, loadConfigData)
}

// cancelOn is a progress writer that cancels a run when a line with
// trigger is logged.
type cancelOn struct {
	trigger string
	cancel  context.CancelFunc
}

func (c cancelOn) Write(b []byte) (int, error) {
	if strings.Contains(string(b), c.trigger) {
		c.cancel()
	}
	return len(b), nil
}

// tinyConfig is the experiment at toy sizes.
func tinyConfig() Config {
	cfg := DefaultConfig()
	cfg.PilotDraws = 100
	cfg.BridgeReplicates = 2
	for _, o := range []*int{&cfg.Train.Iterations, &cfg.CTrain.Iterations} {
		*o = 10
	}
	cfg.Train.DoubleAt, cfg.CTrain.DoubleAt = nil, nil
	cfg.CTrain.StopWindow = 0
	cfg.RQMA.HiddenPerDim, cfg.CRQMA.HiddenPerDim = 2, 2
	return cfg
}

// TestRunInterruptedKeepsFinished cancels the run as the second proposal
// type starts: Run must return the first one's result with the error.
func TestRunInterruptedKeepsFinished(t *testing.T) {
	cfg := tinyConfig()
	cfg.Proposals = []string{experiment.ProposalAffine, experiment.ProposalIndepAux}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.Progress = experiment.NewProgress(cancelOn{"robustvs: " + experiment.ProposalIndepAux, cancel})
	res, err := Run(ctx, cfg)
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want the cancellation", err)
	}
	if res == nil || res.Proposals[experiment.ProposalAffine] == nil || res.Proposals[experiment.ProposalIndepAux] != nil {
		t.Fatalf("result %+v: want the affine proposal's result only", res)
	}
	if res.Settings["data"] == nil {
		t.Error("the partial result lost its settings")
	}
}

// TestBadData: data the likelihood cannot use are refused naming the
// datum or the column, before any pilot.
func TestBadData(t *testing.T) {
	d := loadData(t)
	n, _ := d.X.Dims()
	cases := []struct {
		name string
		edit func(d *Data)
		want string
	}{
		{"constant covariate", func(d *Data) {
			for i := range n {
				d.X.Set(i, 2, 0.5)
			}
		}, "covariate X.3 is constant (0.5 in every row)"},
		{"overflowing response", func(d *Data) { d.Y[4] = 1e300 }, "y of row 5 is 1e+300"},
		{"infinite covariate", func(d *Data) { d.X.Set(2, 1, math.Inf(1)) }, "X.2 of row 3 is +Inf"},
	}
	for _, c := range cases {
		bad := &Data{Y: slices.Clone(d.Y), X: mat.DenseCopyOf(d.X)}
		c.edit(bad)
		_, err := NewModel(bad, []int{1, 1, 1, 1})
		if err == nil || !errors.Is(err, ErrData) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: NewModel: %v, want ErrData with %q", c.name, err, c.want)
		}
	}
	// From a file, through Run: refused before the pilots.
	dir := t.TempDir()
	raw, err := datasets.ReadFile(datasets.RobustRegression)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	for i := 1; i < len(lines); i++ {
		if f := strings.Split(lines[i], ","); len(f) > 4 {
			f[4] = "2" // X.3
			lines[i] = strings.Join(f, ",")
		}
	}
	path := filepath.Join(dir, "constant.csv")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := tinyConfig()
	cfg.DataPath = path
	if res, err := Run(context.Background(), cfg); res != nil || err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "covariate X.3 is constant") {
		t.Errorf("Run on a constant covariate: result %v, error %v", res != nil, err)
	}
}
