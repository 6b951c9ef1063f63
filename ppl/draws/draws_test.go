package draws

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/trjgo/trj/ppl/diag"
)

// sameBits compares float64 slices bit for bit, so NaN equals NaN and −0
// differs from 0.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func equalDraws(t *testing.T, got, want *Draws) {
	t.Helper()
	if !got.layout.equal(want.layout) {
		t.Fatalf("layout %+v, want %+v", got.layout, want.layout)
	}
	if got.Chains() != want.Chains() {
		t.Fatalf("%d chains, want %d", got.Chains(), want.Chains())
	}
	for c := range want.chains {
		if !sameBits(got.chains[c].values, want.chains[c].values) {
			t.Errorf("chain %d values differ:\n got %v\nwant %v", c, got.chains[c].values, want.chains[c].values)
		}
		if !slices.Equal(got.chains[c].models, want.chains[c].models) {
			t.Errorf("chain %d models %v, want %v", c, got.chains[c].models, want.chains[c].models)
		}
	}
}

// fixture returns two chains of NUTS-style draws whose values stress the
// number format: subnormals, huge and tiny magnitudes, −0, NaN and ±Inf.
func fixture(t *testing.T, transdim bool) *Draws {
	t.Helper()
	d, err := New(Layout{Diagnostics: NUTSColumns(), Params: []string{"mu", "theta.1", "theta.2"}, Transdimensional: transdim}, 2)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	special := []float64{0.1, 1e-310, -1e300, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 123456789012345678}
	for c := range 2 {
		for i := range 9 {
			params := []float64{rng.NormFloat64(), special[i%len(special)], float64(i)}
			diagnostics := []float64{-rng.ExpFloat64(), rng.Float64(), 0.25, float64(i % 4), float64(int(1)<<(i%4) - 1), float64(i % 2), rng.ExpFloat64()}
			if transdim {
				err = d.AppendModel(c, i%3, params, diagnostics)
			} else {
				err = d.Append(c, params, diagnostics)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return d
}

func TestRoundTripWriter(t *testing.T) {
	config := []Setting{{"method", "sample (Default)"}, {"num_samples", "9"}, {"seed", "42"}, {"sampler", "nuts"}, {"note", "a = b"}}
	for _, transdim := range []bool{false, true} {
		d := fixture(t, transdim)
		for c := range d.Chains() {
			var buf bytes.Buffer
			if err := d.WriteCSV(&buf, c, config); err != nil {
				t.Fatal(err)
			}
			got, cfg, err := ReadCSV(&buf)
			if err != nil {
				t.Fatalf("%v\n%s", err, buf.String())
			}
			want, _ := New(d.layout, 1)
			want.chains[0] = d.chains[c]
			equalDraws(t, got, want)
			wantCfg := slices.Clone(config)
			wantCfg[0].Value = "sample" // the (Default) marker is CmdStan's, not part of the value
			if !slices.Equal(cfg, wantCfg) {
				t.Errorf("config %v, want %v", cfg, wantCfg)
			}
		}
	}
}

func TestRoundTripFiles(t *testing.T) {
	d := fixture(t, true)
	base := filepath.Join(t.TempDir(), "fit.csv")
	names, err := d.WriteFiles(base, []Setting{{"seed", "7"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(filepath.Dir(base), "fit_1.csv"), filepath.Join(filepath.Dir(base), "fit_2.csv")}; !slices.Equal(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	got, cfg, err := ReadFiles(names...)
	if err != nil {
		t.Fatal(err)
	}
	equalDraws(t, got, d)
	if want := []Setting{{"seed", "7"}, {"chain_id", "1"}}; !slices.Equal(cfg, want) {
		t.Errorf("config %v, want %v", cfg, want)
	}
}

// TestCSVWriterStreams writes draws one at a time and checks that the file
// equals the one WriteCSV makes from the stored draws.
func TestCSVWriterStreams(t *testing.T) {
	for _, transdim := range []bool{false, true} {
		d := fixture(t, transdim)
		config := []Setting{{"seed", "3"}}
		var want, got bytes.Buffer
		if err := d.WriteCSV(&want, 1, config); err != nil {
			t.Fatal(err)
		}
		cw, err := NewCSVWriter(&got, d.Layout(), config)
		if err != nil {
			t.Fatal(err)
		}
		for i := range d.Len(1) {
			if transdim {
				err = cw.WriteModel(d.ModelIndex(1, i), d.Params(1, i), d.Diagnostics(1, i))
			} else {
				err = cw.Write(d.Params(1, i), d.Diagnostics(1, i))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := cw.Flush(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("streamed:\n%s\nWriteCSV:\n%s", got.String(), want.String())
		}
		if transdim {
			err = cw.Write(d.Params(1, 0), d.Diagnostics(1, 0))
		} else {
			err = cw.WriteModel(0, d.Params(1, 0), d.Diagnostics(1, 0))
		}
		if err == nil {
			t.Error("model index mismatch: no error")
		}
		if cw.Write(nil, nil) == nil || cw.WriteModel(-1, nil, nil) == nil {
			t.Error("wrong lengths: no error")
		}
	}
	if _, err := NewCSVWriter(&bytes.Buffer{}, Layout{Params: []string{"a,b"}}, nil); !errors.Is(err, ErrLayout) {
		t.Errorf("bad layout: %v", err)
	}
	if _, err := NewCSVWriter(&bytes.Buffer{}, Layout{Params: []string{"a"}}, []Setting{{"", "x"}}); err == nil {
		t.Error("empty key: no error")
	}
}

// cmdstanOutput mimics a CmdStan output file: indented arguments with
// (Default) markers, adaptation comments between header and draws, timing
// comments at the end, CRLF line ends, a NaN in a parameter and -inf lp__.
const cmdstanOutput = "# stan_version_major = 2\r\n" +
	"# model = bernoulli_model\r\n" +
	"# method = sample (Default)\r\n" +
	"#   sample\r\n" +
	"#     num_samples = 3\r\n" +
	"#     num_warmup = 1000 (Default)\r\n" +
	"lp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,energy__,theta,y_rep.1\r\n" +
	"# Adaptation terminated\r\n" +
	"# Step size = 0.893542\r\n" +
	"# Diagonal elements of inverse mass matrix:\r\n" +
	"# 0.483503\r\n" +
	"-7.02,0.94,0.89,1,3,0,7.27,0.213,1\r\n" +
	"-inf,1,0.89,2,3,0,7.02,0.232,nan\r\n" +
	"\r\n" +
	"-6.75,0.87,0.89,1,1,0,6.9,0.27,0\r\n" +
	"# \r\n" +
	"#  Elapsed Time: 0.005 seconds (Warm-up)\r\n"

func TestReadCmdStan(t *testing.T) {
	d, cfg, err := ReadCSV(strings.NewReader(cmdstanOutput))
	if err != nil {
		t.Fatal(err)
	}
	l := d.Layout()
	if !slices.Equal(l.Diagnostics, NUTSColumns()) || !slices.Equal(l.Params, []string{"theta", "y_rep.1"}) || l.Transdimensional {
		t.Fatalf("layout %+v", l)
	}
	if d.Len(0) != 3 {
		t.Fatalf("%d draws, want 3", d.Len(0))
	}
	if p := d.Params(0, 1); p[0] != 0.232 || !math.IsNaN(p[1]) {
		t.Errorf("draw 1 params %v", p)
	}
	if lp := d.Diagnostics(0, 1)[0]; !math.IsInf(lp, -1) {
		t.Errorf("draw 1 lp__ = %v, want -inf", lp)
	}
	want := []Setting{{"stan_version_major", "2"}, {"model", "bernoulli_model"}, {"method", "sample"},
		{"num_samples", "3"}, {"num_warmup", "1000"}, {"Step size", "0.893542"}}
	if !slices.Equal(cfg, want) {
		t.Errorf("config %q, want %q", cfg, want)
	}
}

func TestReadMalformed(t *testing.T) {
	const head = "lp__,treedepth__,model__,a\n"
	for _, tc := range []struct{ name, in, msg string }{
		{"empty", "", "no header"},
		{"comments only", "# a = 1\n", "no header"},
		{"short row", head + "1,2,3\n", "has 3 fields"},
		{"long row", head + "1,2,3,4,5\n", "has 5 fields"},
		{"text", head + "1,2,3,x\n", `"x" is not a number`},
		{"empty field", head + "1,2,3,\n", `"" is not a number`},
		{"fractional treedepth", head + "1,2.5,3,4\n", "treedepth__"},
		{"nan treedepth", head + "1,nan,3,4\n", "treedepth__"},
		{"inf model", head + "1,2,inf,4\n", "model__"},
		{"negative model", head + "1,2,-1,4\n", "model index"},
		{"duplicate column", "a,b,a\n1,2,3\n", "duplicate column"},
		{"empty column", "a,,b\n1,2,3\n", "empty column name"},
		{"two model columns", "model__,model__\n1,2\n", "duplicate column"},
	} {
		_, _, err := ReadCSV(strings.NewReader(tc.in))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want ErrFormat mentioning %q", tc.name, err, tc.msg)
		}
	}
	// NaN is accepted where CmdStan may write it.
	if _, _, err := ReadCSV(strings.NewReader(head + "nan,2,3,nan\n")); err != nil {
		t.Errorf("nan in lp__ and a parameter: %v", err)
	}
}

func TestLayoutAndAppendErrors(t *testing.T) {
	for _, l := range []Layout{
		{Params: []string{"a", "a"}},
		{Params: []string{"a,b"}},
		{Params: []string{""}},
		{Params: []string{" a"}},
		{Params: []string{"a__"}},
		{Params: []string{Model}},
		{Diagnostics: []string{"lp"}},
	} {
		if _, err := New(l, 1); !errors.Is(err, ErrLayout) {
			t.Errorf("New(%+v): err = %v, want ErrLayout", l, err)
		}
	}
	if _, err := New(Layout{}, 0); err == nil {
		t.Error("New with 0 chains: no error")
	}
	d, err := New(Layout{Diagnostics: []string{LP, TreeDepth}, Params: []string{"x"}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"chain":      d.Append(2, []float64{1}, []float64{0, 1}),
		"params":     d.Append(0, []float64{1, 2}, []float64{0, 1}),
		"diag":       d.Append(0, []float64{1}, []float64{0}),
		"treedepth":  d.Append(0, []float64{1}, []float64{0, 1.5}),
		"model":      d.AppendModel(0, 1, []float64{1}, []float64{0, 1}),
		"no model":   mustTransdim(t).Append(0, []float64{1}, nil),
		"neg model":  mustTransdim(t).AppendModel(0, -1, []float64{1}, nil),
		"write past": d.WriteCSV(&bytes.Buffer{}, 5, nil),
		"bad key":    d.WriteCSV(&bytes.Buffer{}, 0, []Setting{{"a=b", "c"}}),
		"bad value":  d.WriteCSV(&bytes.Buffer{}, 0, []Setting{{"a", "c\nd"}}),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if d.Len(0) != 0 {
		t.Errorf("failed appends stored %d draws", d.Len(0))
	}
	if _, err := d.Column("nope"); err == nil {
		t.Error("Column(nope): no error")
	}
	if _, err := Combine(d, mustTransdim(t)); err == nil {
		t.Error("Combine with different layouts: no error")
	}
}

func mustTransdim(t *testing.T) *Draws {
	d, err := New(Layout{Params: []string{"x"}, Transdimensional: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestConcurrentAppend fills chains from their own goroutines, as parallel
// samplers do; run with -race.
func TestConcurrentAppend(t *testing.T) {
	d, err := New(Layout{Diagnostics: []string{LP}, Params: []string{"x"}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			for i := range 100 {
				if err := d.Append(c, []float64{float64(c*1000 + i)}, []float64{0}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for c := range 4 {
		if d.Len(c) != 100 || d.Params(c, 99)[0] != float64(c*1000+99) {
			t.Errorf("chain %d: %d draws, last %v", c, d.Len(c), d.Params(c, d.Len(c)-1))
		}
	}
}

func TestSummaryKnownDraws(t *testing.T) {
	// 1 … 100 in two chains: the chains do not overlap at all.
	d, err := New(Layout{Params: []string{"k"}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 100; i++ {
		if err := d.Append((i-1)/50, []float64{float64(i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Summarize(d)
	if err != nil {
		t.Fatal(err)
	}
	st := s.Stats[0]
	// Type 7 quantiles: h = 99p, so 5% → 5 + 0.95, 95% → 95 + 0.05.
	want := Stats{Name: "k", N: 100, Mean: 50.5, SD: math.Sqrt(100 * 101 / 12.0), Q5: 5.95, Q50: 50.5, Q95: 95.05}
	for _, f := range []struct {
		name      string
		got, want float64
	}{{"Mean", st.Mean, want.Mean}, {"SD", st.SD, want.SD}, {"Q5", st.Q5, want.Q5}, {"Q50", st.Q50, want.Q50}, {"Q95", st.Q95, want.Q95}} {
		if math.Abs(f.got-f.want) > 1e-12*math.Abs(f.want) {
			t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
		}
	}
	if st.Name != "k" || st.N != 100 || st.Rhat < 1.5 || s.Chains != 2 || s.Draws != 50 {
		t.Errorf("summary %+v of separated chains, want R̂ ≫ 1", s)
	}
}

// TestSummaryIID checks the summary of iid N(0,1) draws against package
// diag and against the truth within four Monte Carlo standard errors.
func TestSummaryIID(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	d, err := New(Layout{Diagnostics: []string{LP, StepSize}, Params: []string{"z", "absent"}, Transdimensional: true}, 4)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	for c := range 4 {
		for range n {
			z := rng.NormFloat64()
			k, absent := 1, math.NaN()
			if rng.Float64() < 0.3 {
				k, absent = 2, 1.0
			}
			if err := d.AppendModel(c, k, []float64{z, absent}, []float64{-z * z / 2, 0.5}); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, err := Summarize(d)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{s.Stats[0].Name, s.Stats[1].Name, s.Stats[2].Name}; !slices.Equal(got, []string{LP, "z", "absent"}) {
		t.Fatalf("rows %v", got)
	}
	z := s.Stats[1]
	x, _ := d.Column("z")
	for _, f := range []struct {
		name      string
		got       float64
		fn        func([][]float64) (float64, error)
		truth, se float64
	}{
		{"Mean", z.Mean, nil, 0, z.MCSE},
		{"Q5", z.Q5, func(x [][]float64) (float64, error) { return diag.Quantile(x, 0.05) }, -1.6448536269514729, mcseQ(t, x, 0.05)},
		{"Q50", z.Q50, func(x [][]float64) (float64, error) { return diag.Quantile(x, 0.5) }, 0, mcseQ(t, x, 0.5)},
		{"Q95", z.Q95, func(x [][]float64) (float64, error) { return diag.Quantile(x, 0.95) }, 1.6448536269514729, mcseQ(t, x, 0.95)},
		{"MCSE", z.MCSE, diag.MCSEMean, math.NaN(), 0},
		{"ESSBulk", z.ESSBulk, diag.ESSBulk, math.NaN(), 0},
		{"ESSTail", z.ESSTail, diag.ESSTail, math.NaN(), 0},
		{"Rhat", z.Rhat, diag.Rhat, math.NaN(), 0},
	} {
		if f.fn != nil {
			if want, _ := f.fn(x); f.got != want {
				t.Errorf("%s = %v, diag gives %v", f.name, f.got, want)
			}
		}
		if !math.IsNaN(f.truth) && math.Abs(f.got-f.truth) > 4*f.se {
			t.Errorf("%s = %v, truth %v, 4·MCSE = %v", f.name, f.got, f.truth, 4*f.se)
		}
	}
	if math.Abs(z.SD-1) > 4/math.Sqrt(2*4*n) { // sd of the sample sd ≈ 1/√(2S)
		t.Errorf("SD = %v, want 1", z.SD)
	}
	if st := s.Stats[2]; st.N >= 4*n || st.Mean != 1 || !math.IsNaN(st.Rhat) || st.DiagnosticErr == nil {
		t.Errorf("partly absent parameter: %+v", st)
	}
	if len(s.Models) != 2 || s.Models[0].Model != 1 || s.Models[1].Model != 2 || s.Models[0].Count+s.Models[1].Count != 4*n {
		t.Fatalf("models %+v", s.Models)
	}
	if m := s.Models[1]; math.Abs(m.Prob-0.3) > 4*m.MCSE || math.Abs(m.MCSE-math.Sqrt(0.21/(4*n))) > 0.2*m.MCSE {
		t.Errorf("model 2: %+v, want Prob 0.3 and MCSE ≈ %v", m, math.Sqrt(0.21/(4*n)))
	}
	if st, _ := Summarize(d, StepSize); !errors.Is(st.Stats[0].DiagnosticErr, diag.ErrConstant) || st.Stats[0].Mean != 0.5 {
		t.Errorf("constant column: %+v", st.Stats[0])
	}
	var buf bytes.Buffer
	if err := s.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"4 chains: each with 1000 draws", "ESS_bulk", "R_hat", "\nlp__ ", "\nz ", "\nabsent ", "nan", "model__"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func mcseQ(t *testing.T, x [][]float64, p float64) float64 {
	v, err := diag.MCSEQuantile(x, p)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSummaryErrors(t *testing.T) {
	d, _ := New(Layout{Params: []string{"x"}}, 2)
	if _, err := Summarize(d); err == nil {
		t.Error("no draws: no error")
	}
	_ = d.Append(0, []float64{1}, nil)
	if _, err := Summarize(d); err == nil {
		t.Error("unequal chains: no error")
	}
	_ = d.Append(1, []float64{1}, nil)
	if _, err := Summarize(d, "y"); err == nil {
		t.Error("unknown column: no error")
	}
}

func TestSigFigs(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "0"}, {1.23456, "1.23"}, {-7.0213, "-7.02"}, {123.456, "123"}, {12345.6, "12346"}, {0.0123456, "0.0123"}, {1.5e-5, "1.50e-05"}, {2.5e7, "2.50e+07"}, {math.NaN(), "nan"}, {math.Inf(-1), "-inf"}} {
		if got := sigFigs(tc.v, 3); got != tc.want {
			t.Errorf("sigFigs(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestNilAndNegativeInputs checks that nil sets and negative chain counts
// give errors or empty results rather than panics.
func TestNilAndNegativeInputs(t *testing.T) {
	if names := ChainFileNames("fit.csv", -1); len(names) != 0 {
		t.Errorf("ChainFileNames(-1) = %v, want none", names)
	}
	if _, err := Combine(nil); err == nil {
		t.Error("Combine(nil): no error")
	}
	if _, err := Summarize(nil); err == nil {
		t.Error("Summarize(nil): no error")
	}
	if _, err := NewCSVWriter(nil, Layout{Params: []string{"x"}}, nil); err == nil {
		t.Error("NewCSVWriter(nil writer): no error")
	}
}
