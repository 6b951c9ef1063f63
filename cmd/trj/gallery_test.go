package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/ppl/draws"
)

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
