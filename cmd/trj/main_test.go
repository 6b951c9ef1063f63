package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/draws"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// fakeModel is a standard normal in two dimensions.
type fakeModel struct{}

func (fakeModel) ParamNames() []string { return []string{"theta.1", "theta.2"} }

type fakeRegistry struct{}

func (fakeRegistry) Names() []string { return []string{"normal2"} }
func (fakeRegistry) Model(name, data string) (Model, error) {
	if name != "normal2" {
		return nil, fmt.Errorf("no model %q", name)
	}
	if data != "" {
		if _, err := os.Stat(data); err != nil {
			return nil, err
		}
	}
	return fakeModel{}, nil
}

// iidSampler draws exactly from the fake model, one goroutine per chain,
// reporting progress as a real sampler does.
func iidSampler(ctx context.Context, m Model, cfg SampleConfig) (*draws.Draws, []draws.Setting, error) {
	d, err := draws.New(draws.Layout{Diagnostics: []string{draws.LP}, Params: m.ParamNames()}, cfg.Chains)
	if err != nil {
		return nil, nil, err
	}
	var wg sync.WaitGroup
	errs := make([]error, cfg.Chains)
	for c := range cfg.Chains {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.FirstChain+c)))
			for it := range cfg.Warmup + cfg.Draws {
				if cfg.Progress != nil {
					cfg.Progress(kernels.Progress{Chain: cfg.FirstChain + c, Done: it + 1, Total: cfg.Warmup + cfg.Draws, Warmup: it < cfg.Warmup})
				}
				if it < cfg.Warmup {
					continue
				}
				x, y := rng.NormFloat64(), rng.NormFloat64()
				if err := d.Append(c, []float64{x, y}, []float64{-(x*x + y*y) / 2}); err != nil {
					errs[c] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return d, []draws.Setting{{Key: "step_size", Value: "0.5"}}, errors.Join(errs...)
}

func failingSampler(context.Context, Model, SampleConfig) (*draws.Draws, []draws.Setting, error) {
	return nil, nil, errors.New("diverged everywhere")
}

func testBackend() backend {
	return backend{models: fakeRegistry{}, samplers: map[string]Sampler{"nuts": iidSampler, "rwm": failingSampler}}
}

func runArgs(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb, testBackend())
	return code, out.String(), errb.String()
}

func TestDispatch(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{nil, exitUsage, "", "usage: trj"},
		{[]string{"help"}, exitOK, "usage: trj", ""},
		{[]string{"-h"}, exitOK, "usage: trj", ""},
		{[]string{"frobnicate"}, exitUsage, "", `unknown command "frobnicate"`},
		{[]string{"models"}, exitOK, "normal2\n", ""},
		{[]string{"models", "x"}, exitUsage, "", "unexpected argument"},
		{[]string{"sample", "-h"}, exitOK, "", "-warmup"},
		{[]string{"summary", "-h"}, exitOK, "", "usage: trj summary"},
		{[]string{"summary"}, exitUsage, "", "no CSV files"},
		{[]string{"summary", "/nonexistent/x.csv"}, exitFail, "", "nonexistent"},
	} {
		code, out, errs := runArgs(tc.args...)
		if code != tc.code || !strings.Contains(out, tc.inStdout) || !strings.Contains(errs, tc.inStderr) {
			t.Errorf("trj %q: code %d, stdout %q, stderr %q; want code %d, stdout ∋ %q, stderr ∋ %q",
				tc.args, code, out, errs, tc.code, tc.inStdout, tc.inStderr)
		}
	}
}

func TestSampleFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{}, "-model is required"},
		{[]string{"-model", "normal2", "-chains", "0"}, "-chains 0"},
		{[]string{"-model", "normal2", "-draws", "0"}, "-draws 0"},
		{[]string{"-model", "normal2", "-warmup", "-1"}, "-warmup -1"},
		{[]string{"-model", "normal2", "-sampler", "hmc"}, `-sampler "hmc"`},
		{[]string{"-model", "normal2", "-seed", "-3"}, "invalid value"},
		{[]string{"-model", "normal2", "-chains", "four"}, "invalid value"},
		{[]string{"-model", "normal2", "-bogus"}, "flag provided but not defined"},
		{[]string{"-model", "normal2", "extra"}, `unexpected argument "extra"`},
	} {
		code, out, errs := runArgs(append([]string{"sample"}, tc.args...)...)
		if code != exitUsage || out != "" || !strings.Contains(errs, tc.msg) {
			t.Errorf("trj sample %q: code %d, stdout %q, stderr %q; want usage error mentioning %q", tc.args, code, out, errs, tc.msg)
		}
	}
}

func TestSampleRuntimeErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-model", "nope"}, `no model "nope" (models: normal2)`},
		{[]string{"-model", "normal2", "-data", "/nonexistent/data.json"}, "nonexistent"},
		{[]string{"-model", "normal2", "-sampler", "smc"}, `sampler "smc" is not available`},
		{[]string{"-model", "normal2", "-sampler", "rwm"}, "rwm on normal2: diverged everywhere"},
		{[]string{"-model", "normal2", "-o", "/dev/null/dir/out.csv", "-quiet"}, "cannot create the folder of /dev/null/dir/out_1.csv"},
	} {
		code, _, errs := runArgs(append([]string{"sample"}, tc.args...)...)
		if code != exitFail || !strings.Contains(errs, tc.msg) {
			t.Errorf("trj sample %q: code %d, stderr %q; want failure mentioning %q", tc.args, code, errs, tc.msg)
		}
	}
	var errb bytes.Buffer
	if code := run(context.Background(), []string{"sample", "-model", "x"}, &bytes.Buffer{}, &errb, defaultBackend()); code != exitFail ||
		!strings.Contains(errb.String(), `no model "x" (models: `) || !strings.Contains(errb.String(), "eight_schools_noncentered") {
		t.Errorf("default backend: code %d, stderr %q", code, errb.String())
	}
}

// TestSampleEndToEnd runs the fake sampler through the CLI, then reads the
// files back with "trj summary", which must print the same table.
func TestSampleEndToEnd(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "fit.csv")
	code, stdout, stderr := runArgs("sample", "-model", "normal2", "-chains", "3", "-warmup", "20", "-draws", "200", "-seed", "7", "-o", out)
	if code != exitOK {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"3 chains: each with 200 draws", "\nlp__ ", "\ntheta.1 ", "\ntheta.2 ", "R_hat"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	// Ten progress lines per chain, warm-up labelled, and the file list.
	if n := strings.Count(stderr, "chain 2: iteration"); n != 10 {
		t.Errorf("%d progress lines for chain 2, want 10:\n%s", n, stderr)
	}
	for _, want := range []string{"chain 1: iteration  22 / 220 (10%) [sampling]", "chain 3: iteration 220 / 220 (100%) [sampling]", "wrote " + filepath.Join(dir, "fit_1.csv")} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	files := draws.ChainFileNames(out, 3)
	d, config, err := draws.ReadFiles(files...)
	if err != nil {
		t.Fatal(err)
	}
	if d.Chains() != 3 || d.Len(2) != 200 {
		t.Errorf("read %d chains of %d draws", d.Chains(), d.Len(2))
	}
	for _, want := range []draws.Setting{{Key: "num_samples", Value: "200"}, {Key: "num_warmup", Value: "20"}, {Key: "save_warmup", Value: "0"},
		{Key: "seed", Value: "7"}, {Key: "algorithm", Value: "nuts"}, {Key: "step_size", Value: "0.5"}, {Key: "chain_id", Value: "1"}} {
		if !slices.Contains(config, want) {
			t.Errorf("config %v lacks %v", config, want)
		}
	}
	code, again, stderr := runArgs(append([]string{"summary"}, files...)...)
	if code != exitOK || again != stdout {
		t.Errorf("trj summary: code %d, stderr %q\n%s\nwant\n%s", code, stderr, again, stdout)
	}
}

func TestSampleOneChainQuiet(t *testing.T) {
	out := filepath.Join(t.TempDir(), "one.csv")
	code, stdout, stderr := runArgs("sample", "-model", "normal2", "-chains", "1", "-warmup", "0", "-draws", "50", "-o", out, "-quiet")
	if code != exitOK || stderr != "" || !strings.Contains(stdout, "1 chains: each with 50 draws") {
		t.Fatalf("code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, _, err := draws.ReadCSV(f)
	if err != nil || d.Len(0) != 50 {
		t.Errorf("one-chain file: %v, %d draws", err, d.Len(0))
	}
}

func TestProgressConcurrent(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 4, 5, 5)
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			for it := range 10 {
				p.report(kernels.Progress{Chain: c, Done: it + 1})
			}
		})
	}
	wg.Wait()
	p.report(kernels.Progress{Chain: 9, Done: 1}) // unknown chain: ignored
	if n := strings.Count(buf.String(), "\n"); n != 40 {
		t.Errorf("%d lines, want 40:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "chain 4: iteration  5 / 10 (50%) [warmup]") {
		t.Errorf("no warm-up line:\n%s", buf.String())
	}
}

// skipInRacePass skips a long end-to-end test that runs a single
// goroutine's work (or work the package's other tests already run
// concurrently) when the tests run with -race -short, CI's race pass: the
// race detector slows it 5-10x and finds nothing there to check, and CI's
// first pass runs it in full without -race. why says what it runs.
func skipInRacePass(t *testing.T, why string) {
	t.Helper()
	if raceDetector && testing.Short() {
		t.Skip("skipped with -race -short (run without -race): " + why)
	}
}

// normalModel is a ppl.Model of n independent standard normals whose
// gradient calls are counted in evals (shared by clones); after limit
// calls (if > 0) it calls onLimit once and each later call waits for done
// to be closed, so that the interruption lands mid-run however fast the
// machine.
type normalModel struct {
	n       int
	evals   *atomic.Int64
	limit   int64
	onLimit func()
	done    <-chan struct{}
}

func (m *normalModel) Dim() int { return m.n }
func (m *normalModel) LogDensity(u []float64) (float64, error) {
	lp := -0.5 * float64(m.n) * math.Log(2*math.Pi)
	for _, v := range u {
		lp -= v * v / 2
	}
	return lp, nil
}
func (m *normalModel) LogDensityGrad(u, grad []float64) (float64, error) {
	if k := m.evals.Add(1); m.limit > 0 && k >= m.limit {
		if k == m.limit {
			m.onLimit()
		}
		<-m.done
	}
	for i, v := range u {
		grad[i] = -v
	}
	return m.LogDensity(u)
}
func (m *normalModel) ParamNames() []string {
	names := make([]string, m.n)
	for i := range names {
		names[i] = fmt.Sprintf("z.%d", i+1)
	}
	return names
}
func (m *normalModel) Constrain(u, dst []float64) error { copy(dst, u); return nil }
func (m *normalModel) Init(rng *rand.Rand, u []float64) error {
	for i := range u {
		u[i] = 4*rng.Float64() - 2
	}
	return nil
}
func (m *normalModel) Clone() ppl.Model { c := *m; return &c }

// normalRegistry serves one normalModel as "normal".
type normalRegistry struct{ m *normalModel }

func (normalRegistry) Names() []string { return []string{"normal"} }
func (r normalRegistry) Model(name, _ string) (Model, error) {
	if name != "normal" {
		return nil, fmt.Errorf("no model %q", name)
	}
	return r.m, nil
}

// interruptBackend is the real samplers on a normalModel.
func interruptBackend(m *normalModel) backend {
	b := defaultBackend()
	b.models = normalRegistry{m}
	return b
}

// readChains reads the CSV files of a run.
func readChains(t *testing.T, names []string) (*draws.Draws, [][]draws.Setting) {
	t.Helper()
	var sets []*draws.Draws
	var cfgs [][]draws.Setting
	for _, n := range names {
		d, cfg, err := draws.ReadFiles(n)
		if err != nil {
			t.Fatalf("%s is not a valid CSV file: %v", n, err)
		}
		sets = append(sets, d)
		cfgs = append(cfgs, cfg)
	}
	d, err := draws.Combine(sets...)
	if err != nil {
		t.Fatal(err)
	}
	return d, cfgs
}

// TestSampleInterruptKeepsDraws stops "trj sample -o" mid-run, once by a
// cancelled context and once by a real SIGINT, and checks that the files
// are valid CSV marked interrupted whose rows are bit-identical to the
// first rows of an uninterrupted run with the same seed, that the summary
// is printed, and that the exit code says "interrupted".
func TestSampleInterruptKeepsDraws(t *testing.T) {
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"sample", "-model", "normal", "-chains", "2", "-warmup", "60", "-draws", "400", "-seed", "7", "-o", filepath.Join(dir, out), "-quiet"}
	}
	full := &normalModel{n: 3, evals: new(atomic.Int64)}
	var out, errb bytes.Buffer
	if code := run(context.Background(), args("full.csv"), &out, &errb, interruptBackend(full)); code != exitOK {
		t.Fatalf("full run: code %d: %s", code, errb.String())
	}
	ref, _ := readChains(t, draws.ChainFileNames(filepath.Join(dir, "full.csv"), 2))
	total := full.evals.Load()

	for _, how := range []string{"cancel", "SIGINT"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			onLimit := cancel
			if how == "SIGINT" {
				var stop context.CancelFunc
				ctx, stop = signalContext()
				defer stop()
				onLimit = func() { syscall.Kill(os.Getpid(), syscall.SIGINT) }
			}
			// Stop about halfway through the gradient evaluations.
			m := &normalModel{n: 3, evals: new(atomic.Int64), limit: total / 2, onLimit: onLimit, done: ctx.Done()}
			var out, errb bytes.Buffer
			name := how + ".csv"
			code := run(ctx, args(name), &out, &errb, interruptBackend(m))
			if code != exitInterrupted || !strings.Contains(errb.String(), "interrupted") {
				t.Fatalf("code %d, stderr %q", code, errb.String())
			}
			got, cfgs := readChains(t, draws.ChainFileNames(filepath.Join(dir, name), 2))
			kept, short := 0, 0
			for c := range 2 {
				n := got.Len(c)
				marked := slices.ContainsFunc(cfgs[c], func(s draws.Setting) bool { return s.Key == draws.Interrupted })
				if marked != (n < ref.Len(c)) {
					t.Errorf("chain %d: %d of %d draws, marked interrupted: %v", c+1, n, ref.Len(c), marked)
				}
				if n < ref.Len(c) {
					short++
				}
				for i := range n {
					if !slices.Equal(got.Params(c, i), ref.Params(c, i)) || !slices.Equal(got.Diagnostics(c, i), ref.Diagnostics(c, i)) {
						t.Fatalf("chain %d draw %d differs from the uninterrupted run", c+1, i+1)
					}
				}
				kept += n
			}
			if kept == 0 || short == 0 {
				t.Fatalf("%d draws kept, %d chains cut short", kept, short)
			}
			if !strings.Contains(out.String(), "z.1") {
				t.Errorf("no summary of the kept draws:\n%s", out.String())
			}
			t.Logf("interrupted after %d and %d kept draws; stderr:\n%s", got.Len(0), got.Len(1), errb.String())
			// trj summary reads the files back and says they were cut short.
			var sout, serr bytes.Buffer
			files := draws.ChainFileNames(filepath.Join(dir, name), 2)
			if code := run(context.Background(), append([]string{"summary"}, files...), &sout, &serr, interruptBackend(m)); code != exitOK ||
				!strings.Contains(serr.String(), "interrupted before the end") || !strings.Contains(sout.String(), "z.1") {
				t.Errorf("trj summary of the interrupted files: exit %d, stderr %q", code, serr.String())
			}
		})
	}
}

// TestSampleChecksOutputFirst gives -o in a missing folder: the run must
// fail before any gradient is computed.
func TestSampleChecksOutputFirst(t *testing.T) {
	m := &normalModel{n: 2, evals: new(atomic.Int64)}
	// A folder under a file cannot be created.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"sample", "-model", "normal", "-o", filepath.Join(file, "x.csv")}, &out, &errb, interruptBackend(m))
	if code != exitFail || !strings.Contains(errb.String(), "cannot create the folder") || m.evals.Load() != 0 {
		t.Errorf("code %d, %d gradient evaluations, stderr %q", code, m.evals.Load(), errb.String())
	}
}

func runDefault(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb, defaultBackend())
	return code, out.String(), errb.String()
}

// TestGalleryNUTSEndToEnd samples a gallery model with the real NUTS
// backend and reads the CSV files back.
func TestGalleryNUTSEndToEnd(t *testing.T) {
	out := filepath.Join(t.TempDir(), "es.csv")
	code, stdout, stderr := runDefault("sample", "-model", "eight_schools_noncentered",
		"-chains", "2", "-warmup", "150", "-draws", "100", "-seed", "3", "-o", out)
	if code != exitOK {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"model eight_schools_noncentered, data embedded:posteriordb/eight_schools-eight_schools_noncentered.json\n",
		"2 chains: each with 100 draws", "\ntau ", "\ntheta.8 ", "max R_hat", "divergences: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "chain 2: iteration 250 / 250 (100%) [sampling]") || !strings.Contains(stderr, "wall time") {
		t.Errorf("stderr:\n%s", stderr)
	}
	d, config, err := draws.ReadFiles(draws.ChainFileNames(out, 2)...)
	if err != nil {
		t.Fatal(err)
	}
	l := d.Layout()
	if !slices.Equal(l.Diagnostics, draws.NUTSColumns()) || len(l.Params) != 18 || l.Params[9] != "tau" || l.Params[10] != "theta.1" {
		t.Errorf("layout %+v", l)
	}
	keys := map[string]bool{}
	for _, s := range config {
		keys[s.Key] = true
		if s.Key == "data_file" && s.Value != "embedded:posteriordb/eight_schools-eight_schools_noncentered.json" {
			t.Errorf("data_file %q", s.Value)
		}
	}
	for _, k := range []string{"Step size", "warmup_grad_evals", "sampling_grad_evals", "num_warmup", "data_file", "chain_id"} {
		if !keys[k] {
			t.Errorf("CSV comments lack %s", k)
		}
	}
	// Each chain's file holds its own adaptation block and elapsed times.
	for _, name := range draws.ChainFileNames(out, 2) {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"\n# Adaptation terminated\n# Step size = ", "\n# Diagonal elements of inverse mass matrix:\n# ", "seconds (Sampling)\n"} {
			if !strings.Contains(string(raw), want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
	// theta = theta_trans·tau + mu in every draw.
	for c := 0; c < 2; c++ {
		for i := 0; i < d.Len(c); i++ {
			p := d.Params(c, i)
			if want := p[0]*p[9] + p[8]; math.Abs(p[10]-want) > 1e-12*(1+math.Abs(want)) {
				t.Fatalf("chain %d draw %d: theta.1 = %v, want %v", c, i, p[10], want)
			}
		}
	}
}

// TestGalleryRWMAndNoWarmup runs RWM without warm-up, one chain, quietly.
func TestGalleryRWMAndNoWarmup(t *testing.T) {
	code, stdout, stderr := runDefault("sample", "-model", "eight_schools_noncentered",
		"-sampler", "rwm", "-chains", "1", "-warmup", "0", "-draws", "200", "-quiet")
	if code != exitOK || stderr != "" || !strings.Contains(stdout, "1 chains: each with 200 draws") {
		t.Fatalf("code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if strings.Contains(stdout, "divergences") {
		t.Errorf("RWM output reports divergences:\n%s", stdout)
	}
}

// TestGalleryDataOverrides checks that $TRJ_DATA and -data replace the
// embedded data and that the output names the file read.
func TestGalleryDataOverrides(t *testing.T) {
	dir := t.TempDir()
	raw, err := datasets.ReadFile("posteriordb/sblrc-blr.json")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "posteriordb", "sblrc-blr.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	short := []string{"-chains", "1", "-warmup", "50", "-draws", "20", "-quiet"}
	t.Setenv(dataDirEnv, dir)
	code, stdout, stderr := runDefault(append([]string{"sample", "-model", "blr"}, short...)...)
	if code != exitOK || !strings.Contains(stdout, "model blr, data "+p+"\n") {
		t.Errorf("TRJ_DATA set: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	t.Setenv(dataDirEnv, t.TempDir())
	if code, _, stderr := runDefault("sample", "-model", "blr", "-quiet"); code != exitFail || !strings.Contains(stderr, dataDirEnv) {
		t.Errorf("empty data folder: code %d, stderr %q", code, stderr)
	}
	code, stdout, stderr = runDefault(append([]string{"sample", "-model", "blr", "-data", p}, short...)...)
	if code != exitOK || !strings.Contains(stdout, "model blr, data "+p+"\n") {
		t.Errorf("-data given: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// eightSchoolsLogEvidence is log ∫ p(y, θ̃, μ, τ) by quadrature over
// (μ, log τ), with θ̃ integrated out analytically.
func eightSchoolsLogEvidence() float64 {
	y := []float64{28, 8, -3, 7, -1, 1, 18, 12}
	sigma := []float64{15, 10, 16, 11, 9, 11, 10, 18}
	const muLo, muHi, ltLo, ltHi, n = -40.0, 50.0, -14.0, 8.0, 700
	hm, hl := (muHi-muLo)/n, (ltHi-ltLo)/n
	lps := make([]float64, 0, n*n)
	for i := 0; i < n; i++ {
		mu := muLo + (float64(i)+0.5)*hm
		for k := 0; k < n; k++ {
			lt := ltLo + (float64(k)+0.5)*hl
			tau := math.Exp(lt)
			// Half-Cauchy(0, 5) density times the Jacobian dτ = τ d(log τ).
			lp := distuv.Normal{Mu: 0, Sigma: 5}.LogProb(mu) + math.Log(2/(math.Pi*5*(1+tau*tau/25))) + lt
			for j := range y {
				lp += distuv.Normal{Mu: mu, Sigma: math.Hypot(sigma[j], tau)}.LogProb(y[j])
			}
			lps = append(lps, lp)
		}
	}
	return floats.LogSumExp(lps) + math.Log(hm*hl)
}

// TestGallerySMCEvidence checks the SMC sampler's log evidence against
// quadrature: replicate runs give the Monte Carlo standard error.
func TestGallerySMCEvidence(t *testing.T) {
	truth := eightSchoolsLogEvidence()
	re := regexp.MustCompile(`log evidence: (\S+)`)
	var logZ []float64
	for seed := 1; seed <= 5; seed++ {
		code, stdout, stderr := runDefault("sample", "-model", "eight_schools_noncentered",
			"-sampler", "smc", "-draws", "500", "-seed", strconv.Itoa(seed), "-quiet")
		if code != exitOK {
			t.Fatalf("code %d, stderr %q", code, stderr)
		}
		if !strings.Contains(stdout, "1 chains: each with 500 draws") {
			t.Errorf("SMC output is not one chain of 500 particles:\n%s", stdout)
		}
		m := re.FindStringSubmatch(stdout)
		if m == nil {
			t.Fatalf("no log evidence in\n%s", stdout)
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		logZ = append(logZ, v)
	}
	mean, sd := stat.MeanStdDev(logZ, nil)
	se := sd / math.Sqrt(float64(len(logZ)))
	t.Logf("log evidence: SMC %.4f ± %.4f (5 runs of 500 particles), quadrature %.4f", mean, se, truth)
	if math.Abs(mean-truth) > 4*se {
		t.Errorf("SMC log evidence %.4f, quadrature %.4f: |diff| > 4·SE = %.4f (runs %v)", mean, truth, 4*se, logZ)
	}
}

// TestGalleryMetricFlags runs NUTS with a dense metric and checks that the
// CSV header records it, and that bad values are usage errors.
func TestGalleryMetricFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "dense.csv")
	code, _, stderr := runDefault("sample", "-model", "eight_schools_noncentered", "-chains", "1",
		"-warmup", "200", "-draws", "50", "-metric", "dense_e", "-adapt-delta", "0.9", "-o", out, "-quiet")
	if code != exitOK {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
	_, config, err := draws.ReadFiles(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range config {
		got[s.Key] = s.Value
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(raw), "# Elements of inverse mass matrix:\n")
	rows := strings.Split(block, "\n")[:10]
	for i, r := range rows {
		if !strings.HasPrefix(r, "# ") || len(strings.Split(r, ",")) != 10 {
			t.Errorf("dense metric row %d: %q", i, r)
		}
	}
	if got["metric"] != "dense_e" || got["delta"] != "0.9" {
		t.Errorf("header: metric %q, delta %q", got["metric"], got["delta"])
	}
	for _, args := range [][]string{{"-metric", "dense"}, {"-adapt-delta", "1"}, {"-adapt-delta", "0"}, {"-smc-move", "hmc"}} {
		code, _, stderr := runDefault(append([]string{"sample", "-model", "blr"}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, args[0]) {
			t.Errorf("%v: code %d, stderr %q", args, code, stderr)
		}
	}
}
