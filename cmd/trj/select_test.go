package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/trjgo/trj/ppl"
)

// selectCSV writes a small regression data set: y = 1 + 1.5 x1 + noise,
// x2 and x3 null; a binary y for logistic, counts for poisson.
func selectCSV(t *testing.T, dir, family string) string {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("x1,resp,x2,x3\n")
	for range 40 {
		x := []float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		y := 1 + 1.5*x[0] + r.NormFloat64()
		switch family {
		case "logistic":
			y = 0
			if r.Float64() < 1/(1+math.Exp(-1.5*x[0])) {
				y = 1
			}
		case "poisson":
			y = float64(r.IntN(4))
		}
		fmt.Fprintf(&b, "%.4f,%g,%.4f,%.4f\n", x[0], y, x[1], x[2])
	}
	return writeTestFile(t, dir, family+".csv", b.String())
}

// readJSONMap reads the JSON object in the file path, returning it decoded
// and as read.
func readJSONMap(t *testing.T, path string) (map[string]any, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m, b
}

// writeTestFile writes text to the file name in dir and returns its path.
func writeTestFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSelectBadInput: each bad input ends with a usage or run error
// naming the cause, before any sampling.
func TestSelectBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return writeTestFile(t, dir, name, text) }
	good := selectCSV(t, dir, "gaussian")
	onlyY := write("onlyy.csv", "y\n1\n2\n3\n")
	word := write("word.csv", "y,x1,x2\n1,0.5,1\n2,abc,2\n3,0.1,3\n")
	na := write("na.csv", "y,x1,x2\n1,0.5,1\n2,NA,2\n3,0.1,3\n")
	constant := write("const.csv", "y,x1,x2\n1,0.5,7\n2,0.2,7\n3,0.1,7\n")
	nonBinary := write("nonbin.csv", "y,x1\n0,0.5\n1,0.2\n2,0.1\n")
	negCount := write("negcount.csv", "y,x1\n0,0.5\n-1,0.2\n2,0.1\n")
	fracCount := write("fraccount.csv", "y,x1\n0,0.5\n1.5,0.2\n2,0.1\n")
	empty := write("empty.csv", "")
	ragged := write("ragged.csv", "y,x1\n1,2\n3\n")
	dup := write("dup.csv", "y,x1,x1\n1,2,3\n3,4,5\n")
	oneRow := write("onerow.csv", "y,x1\n1,2\n")
	sel := func(args ...string) []string { return append([]string{"select", "-quiet"}, args...) }
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no -data", sel("-y", "y"), exitUsage, "-data is required"},
		{"no -y", sel("-data", good), exitUsage, "-y is required"},
		{"unknown family", sel("-data", good, "-y", "resp", "-family", "probit"), exitUsage, `-family "probit"`},
		{"negative g", sel("-data", good, "-y", "resp", "-g", "-1"), exitUsage, "-g -1"},
		{"g for logistic", sel("-data", good, "-y", "resp", "-family", "logistic", "-g", "2"), exitUsage, "gaussian family's prior"},
		{"unknown prior", sel("-data", good, "-y", "resp", "-prior", "cauchy"), exitUsage, `-prior "cauchy"`},
		{"-a for the g-prior", sel("-data", good, "-y", "resp", "-a", "3"), exitUsage, "-a does not apply to -prior g"},
		{"-b for hyper-g", sel("-data", good, "-y", "resp", "-prior", "hyper-g", "-b", "1"), exitUsage, "-b does not apply to -prior hyper-g"},
		{"hyper-g a = 2", sel("-data", good, "-y", "resp", "-prior", "hyper-g", "-a", "2"), exitUsage, "a > 2"},
		{"prior for logistic", sel("-data", good, "-y", "resp", "-family", "logistic", "-prior", "zs"), exitUsage, "gaussian family's prior"},
		{"bad model prior", sel("-data", good, "-y", "resp", "-model-prior", "beta(1,1)"), exitUsage, `-model-prior "beta(1,1)"`},
		{"bad bernoulli", sel("-data", good, "-y", "resp", "-model-prior", "bernoulli(1.5)"), exitUsage, "0 < Q < 1"},
		{"prior-sd for gaussian", sel("-data", good, "-y", "resp", "-prior-sd", "2"), exitUsage, "-prior-sd"},
		{"no chains", sel("-data", good, "-y", "resp", "-chains", "0"), exitUsage, "-chains 0"},
		{"unknown proposal", sel("-data", good, "-y", "resp", "-proposal", "mh"), exitUsage, `unknown selection proposal "mh"`},
		{"no steps", sel("-data", good, "-y", "resp", "-steps", "0"), exitUsage, "-steps 0"},
		{"shard without -o or -json", sel("-data", good, "-y", "resp", "-shard", "1/2"), exitUsage, "-shard needs -json or -o"},
		{"merge of nothing", sel("-merge"), exitUsage, "-merge needs"},
		{"merge of a missing file", sel("-merge", filepath.Join(dir, "none.json")), exitFail, "none.json"},
		{"more shards than chains", sel("-data", good, "-y", "resp", "-shard", "1/5", "-o", dir), exitUsage, "cannot be split"},
		{"stray argument", sel("-data", good, "-y", "resp", "extra"), exitUsage, `unexpected argument "extra"`},
		{"missing file", sel("-data", filepath.Join(dir, "none.csv"), "-y", "y"), exitFail, "none.csv"},
		{"missing embedded set", sel("-data", "embedded:select/none.csv", "-y", "y"), exitFail, `no embedded data set "select/none.csv"`},
		{"p = 0", sel("-data", onlyY, "-y", "y"), exitFail, "no predictor columns"},
		{"unknown -y column", sel("-data", good, "-y", "y"), exitFail, `-y "y": no such column`},
		{"non-numeric cell", sel("-data", word, "-y", "y"), exitFail, `line 3, column "x1": "abc" is not a number`},
		{"missing value", sel("-data", na, "-y", "y"), exitFail, `1 row(s) have missing values (NA, empty, NaN, nan or .): line 3 (x1); columns with missing values: x1. Drop those rows with -na drop`},
		{"constant column", sel("-data", constant, "-y", "y"), exitFail, `column "x2" is constant`},
		{"non-binary y for logistic", sel("-data", nonBinary, "-y", "y", "-family", "logistic"), exitFail, "line 4: -family logistic needs the response \"y\" to be 0 or 1, but it is 2"},
		{"negative count for poisson", sel("-data", negCount, "-y", "y", "-family", "poisson"), exitFail, "non-negative integer count, but it is -1"},
		{"fractional count for poisson", sel("-data", fracCount, "-y", "y", "-family", "poisson"), exitFail, "but it is 1.5"},
		{"empty file", sel("-data", empty, "-y", "y"), exitFail, "empty file"},
		{"ragged row", sel("-data", ragged, "-y", "y"), exitFail, "wrong number of fields"},
		{"duplicate column", sel("-data", dup, "-y", "y"), exitFail, `two columns are named "x1"`},
		{"one observation", sel("-data", oneRow, "-y", "y"), exitFail, "need at least 2"},
		{"-json under a file", sel("-data", good, "-y", "resp", "-json", filepath.Join(good, "r.json")), exitFail, "-json: cannot"},
		{"-o under a file", sel("-data", good, "-y", "resp", "-o", filepath.Join(good, "draws")), exitFail, "-o: cannot create"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(context.Background(), c.args, &out, &errb, backend{})
		if code != c.code || !strings.Contains(errb.String(), c.stderr) {
			t.Errorf("%s: trj %q: exit %d, stderr %q; want exit %d, stderr with %q", c.name, c.args, code, errb.String(), c.code, c.stderr)
		}
		if strings.Contains(out.String(), "inclusion") {
			t.Errorf("%s: sampled before refusing", c.name)
		}
	}
}

// TestSelectRuns runs each family on a small data set and checks the
// table and the JSON: the strong predictor is found.
func TestSelectRuns(t *testing.T) {
	dir := t.TempDir()
	for _, fam := range []string{"gaussian", "logistic", "poisson"} {
		data := selectCSV(t, dir, fam)
		js := filepath.Join(dir, fam+".json")
		draws := filepath.Join(dir, fam+"-draws")
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"select", "-data", data, "-y", "resp", "-family", fam, "-chains", "2", "-warmup", "100", "-steps", "300", "-json", js, "-o", draws}, &out, &errb, backend{})
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", fam, code, errb.String())
		}
		if !strings.Contains(out.String(), "Posterior inclusion probabilities") || !strings.Contains(errb.String(), "100% of the steps") {
			t.Errorf("%s: output %q, stderr %q", fam, out.String(), errb.String())
		}
		var res struct {
			Family string
			Prior  struct {
				Name       string
				Values     map[string]float64
				ModelPrior string `json:"model_prior"`
			}
			Names []string
			PIP   []struct{ P float64 }
			Steps int
		}
		b, err := os.ReadFile(js)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		if res.Family != fam || len(res.Names) != 3 || res.Names[0] != "x1" || res.Names[1] != "x2" || res.Steps != 600 || res.Prior.Name == "" || len(res.Prior.Values) == 0 || res.Prior.ModelPrior != "beta-binomial(1, 1)" {
			t.Errorf("%s: JSON %s", fam, b)
		}
		if fam != "poisson" && res.PIP[0].P < 0.9 {
			t.Errorf("%s: PIP of x1 = %v, want near 1", fam, res.PIP[0].P)
		}
		files, _ := filepath.Glob(filepath.Join(draws, "select-*.csv"))
		if len(files) != 2 {
			t.Errorf("%s: draws files %v", fam, files)
		}
		for _, fig := range []string{"pips.png", "running_pips.png"} {
			if fi, err := os.Stat(filepath.Join(draws, fig)); err != nil || fi.Size() == 0 {
				t.Errorf("%s: figure %s not written: %v", fam, fig, err)
			}
		}
	}
}

// cancelWriter cancels a context when a progress line is written to it.
type cancelWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel func()
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(p, []byte("% of the steps")) {
		w.cancel()
	}
	return w.buf.Write(p)
}

// TestSelectProposalFlag: -proposal picks the family, and the table names
// it.
func TestSelectProposalFlag(t *testing.T) {
	dir := t.TempDir()
	data := selectCSV(t, dir, "gaussian")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"select", "-quiet", "-data", data, "-y", "resp", "-proposal", "laplace", "-chains", "2", "-warmup", "50", "-steps", "100"}, &out, &errb, backend{})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	// The table's first line names the family ("Laplace" is also a
	// column of every table).
	if !strings.Contains(out.String(), ", laplace transports,") {
		t.Errorf("the table does not name the laplace family:\n%s", out.String())
	}
}

// TestSelectInterrupted: a run stopped by a signal prints and writes the
// partial result of every step its chains finished (the JSON's "complete"
// false, "stopped" the reason; the table saying so), the figures and the
// chain files marked interrupted, and exits with 130.
func TestSelectInterrupted(t *testing.T) {
	dir := t.TempDir()
	data := selectCSV(t, dir, "gaussian")
	js, outDir := filepath.Join(dir, "r.json"), filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errw := &cancelWriter{cancel: cancel}
	var out bytes.Buffer
	code := run(ctx, []string{"select", "-data", data, "-y", "resp", "-chains", "2", "-warmup", "10", "-steps", "100000", "-json", js, "-o", outDir}, &out, errw, backend{})
	if code != exitInterrupted || !strings.Contains(errw.buf.String(), "interrupted") {
		t.Fatalf("exit %d, stderr %q", code, errw.buf.String())
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Complete   *bool  `json:"complete"`
		Stopped    string `json:"stopped"`
		Steps      int    `json:"steps"`
		Chains     []int  `json:"chains"`
		ChainSteps []int  `json:"chain_steps"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Complete == nil || *res.Complete || res.Stopped == "" || res.Steps == 0 || res.Steps >= 200000 || len(res.ChainSteps) != len(res.Chains) || sum(res.ChainSteps) != res.Steps {
		t.Errorf("JSON: complete %v, stopped %q, %d steps, chains %v", res.Complete, res.Stopped, res.Steps, res.ChainSteps)
	}
	if !strings.Contains(out.String(), "Posterior inclusion probabilities") || !strings.Contains(out.String(), "PARTIAL RESULT") {
		t.Errorf("table: %q", out.String())
	}
	for _, f := range []string{"pips.png", "running_pips.png"} {
		if _, err := os.Stat(filepath.Join(outDir, f)); err != nil {
			t.Errorf("figure: %v", err)
		}
	}
	// With one processor chain 1 has not started when the signal comes:
	// it kept no step and has no file.
	for i, n := range res.ChainSteps {
		c := res.Chains[i]
		if n == 0 {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(outDir, fmt.Sprintf("select-%d.csv", c)))
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for _, l := range strings.Split(string(raw), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				rows++
			}
		}
		if rows-1 != n || !strings.Contains(string(raw), "\n# interrupted = ") {
			t.Errorf("chain %d: %d rows for %d kept steps, marked interrupted %v", c, rows-1, n, strings.Contains(string(raw), "# interrupted"))
		}
	}
}

// TestSelectShardsMerge runs a run as two shards and merges their results:
// the merged steps are the whole run's, and the chains are those of both.
func TestSelectShardsMerge(t *testing.T) {
	dir := t.TempDir()
	data := selectCSV(t, dir, "gaussian")
	var parts []string
	for i := 1; i <= 2; i++ {
		js := filepath.Join(dir, fmt.Sprintf("part%d.json", i))
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"select", "-quiet", "-data", data, "-y", "resp", "-chains", "2", "-warmup", "50", "-steps", "200", "-shard", fmt.Sprintf("%d/2", i), "-json", js}, &out, &errb, backend{})
		if code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, code, errb.String())
		}
		parts = append(parts, js)
	}
	all := filepath.Join(dir, "all.json")
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"select", "-merge", "-json", all}, parts...), &out, &errb, backend{})
	if code != exitOK || !strings.Contains(out.String(), "Posterior inclusion probabilities") {
		t.Fatalf("merge: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	b, err := os.ReadFile(all)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Family string
		Chains []int
		Steps  int
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Family != "gaussian" || len(res.Chains) != 2 || res.Steps != 400 {
		t.Errorf("merged: family %q, chains %v, %d steps", res.Family, res.Chains, res.Steps)
	}
	other := selectCSV(t, dir, "poisson")
	js := filepath.Join(dir, "other.json")
	if code := run(context.Background(), []string{"select", "-quiet", "-data", other, "-y", "resp", "-family", "poisson", "-chains", "2", "-warmup", "50", "-steps", "100", "-shard", "2/2", "-json", js}, &out, &errb, backend{}); code != exitOK {
		t.Fatalf("poisson shard: exit %d: %s", code, errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"select", "-merge", parts[0], js}, &out, &errb, backend{}); code != exitFail || !strings.Contains(errb.String(), "another run") {
		t.Errorf("merge of two runs: exit %d, stderr %q", code, errb.String())
	}
}

// TestSelectHelpAndEmbedded: -h prints the flags, and -data embedded:NAME
// reads a data set built into trj.
func TestSelectHelpAndEmbedded(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"select", "-h"}, &out, &errb, backend{}); code != exitOK || !strings.Contains(errb.String(), "-family") {
		t.Errorf("select -h: exit %d, stderr %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	code := run(context.Background(), []string{"select", "-quiet", "-data", "embedded:select/logistic_p15.csv", "-y", "y", "-family", "logistic", "-chains", "1", "-warmup", "20", "-steps", "50"}, &out, &errb, backend{})
	if code != exitOK || !strings.Contains(out.String(), "x15") {
		t.Errorf("embedded data: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

func sum(x []int) int {
	s := 0
	for _, v := range x {
		s += v
	}
	return s
}

// TestSelectModelPriorParse: -model-prior reads its three forms leniently
// (spaces, case).
func TestSelectModelPriorParse(t *testing.T) {
	for in, want := range map[string]ppl.ModelPrior{
		"beta-binomial(1,1)":      ppl.BetaBinomial{A: 1, B: 1},
		" Beta-Binomial( 2 , 5 )": ppl.BetaBinomial{A: 2, B: 5},
		"UNIFORM":                 ppl.UniformModels{},
		"bernoulli(0.2)":          ppl.Bernoulli{Q: 0.2},
	} {
		got, err := parseModelPrior(in)
		if err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
}
