package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/ppl/draws"
)

// TestBadInputsCLI is the command line's bad-input suite: each case must
// end with the given exit code and a message naming what is wrong, never
// a panic, a hang, a NaN passed off as a result or work thrown away. The
// library's cases are in the packages' own TestBadInputs… tests.
func TestBadInputsCLI(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return writeTestFile(t, dir, name, text) }
	good := write("good.csv", "lp__,x\n-1,0.5\n-2,0.25\n-1.5,0.75\n-1.2,0.1\n")
	bom := write("bom.csv", "\ufefflp__,x\n-1,0.5\n-2,0.25\n-1.5,0.75\n-1.2,0.1\n")
	ragged := write("ragged.csv", "lp__,x\n-1,0.5\n-2\n")
	empty := write("empty.csv", "")
	word := write("word.csv", "lp__,x\n-1,abc\n")
	other := write("other.csv", "lp__,y\n-1,0.5\n")
	badTree := write("tree.csv", "treedepth__,x\n2.5,1\n")
	sample := func(args ...string) []string {
		return append([]string{"sample", "-model", "normal", "-quiet"}, args...)
	}
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string // in the error output
		stdout string // in the output, if the command succeeds
	}{
		{"draws beyond memory", sample("-draws", "1000000000000"), exitFail, "run too large", ""},
		{"chains beyond memory", sample("-chains", "100000000"), exitFail, "100000000 chains", ""},
		{"warm-up overflowing an int", sample("-warmup", "9223372036854775807"), exitUsage, "more iterations", ""},
		{"-o in a new folder", sample("-o", filepath.Join(dir, "new", "x.csv")), exitOK, "", "lp__"},
		{"-o under a file", sample("-o", filepath.Join(good, "x.csv")), exitFail, "-o: cannot create the folder", ""},
		{"-o a folder", sample("-chains", "1", "-o", dir), exitFail, "-o: cannot write", ""},
		{"no chains", sample("-chains", "0"), exitUsage, "-chains 0", ""},
		{"no draws", sample("-draws", "0"), exitUsage, "-draws 0", ""},
		{"negative warm-up", sample("-warmup", "-1"), exitUsage, "-warmup -1", ""},
		{"adapt-delta above 1", sample("-adapt-delta", "1.5"), exitUsage, "-adapt-delta 1.5", ""},
		{"adapt-delta NaN", sample("-adapt-delta", "NaN"), exitUsage, "-adapt-delta NaN", ""},
		{"unknown metric", sample("-metric", "dense"), exitUsage, `-metric "dense"`, ""},
		{"unknown sampler", sample("-sampler", "hmc"), exitUsage, `-sampler "hmc"`, ""},
		{"unknown SMC move", sample("-smc-move", "mala"), exitUsage, `-smc-move "mala"`, ""},
		{"negative seed", sample("-seed", "-1"), exitUsage, "-seed", ""},
		{"no model", []string{"sample"}, exitUsage, "-model is required", ""},
		{"unknown model", []string{"sample", "-model", "nope"}, exitFail, `no model "nope"`, ""},
		{"stray argument", sample("extra"), exitUsage, `unexpected argument "extra"`, ""},
		{"bad shard", sample("-shard", "3/2", "-o", filepath.Join(dir, "s.csv")), exitUsage, "shard", ""},
		{"summary of nothing", []string{"summary"}, exitUsage, "no CSV files", ""},
		{"summary of a missing file", []string{"summary", filepath.Join(dir, "none.csv")}, exitFail, "none.csv", ""},
		{"summary of a ragged CSV", []string{"summary", ragged}, exitFail, "line 3 has 1 fields", ""},
		{"summary of an empty file", []string{"summary", empty}, exitFail, "no header", ""},
		{"summary of a word", []string{"summary", word}, exitFail, `"abc" is not a number`, ""},
		{"summary of a fractional tree depth", []string{"summary", badTree}, exitFail, "not an integer", ""},
		{"summary of files with different columns", []string{"summary", good, other}, exitFail, "columns", ""},
		{"summary of a CSV with a byte-order mark", []string{"summary", bom}, exitOK, "", "lp__"},
		{"run with one replicate chain", []string{"run", "sas", "-chains", "1"}, exitUsage, "at least 2 replicate chains", ""},
		{"run with one step", []string{"run", "sas", "-steps", "1"}, exitUsage, "sas runs chains of at least 4 steps", ""},
		{"run with fewer steps than sas needs", []string{"run", "sas", "-steps", "3"}, exitUsage, "-steps 3: sas runs chains of at least 4 steps", ""},
		{"run with fewer steps than factor needs", []string{"run", "factor", "-steps", "2"}, exitUsage, "-steps 2: factor runs chains of at least 4 steps", ""},
		{"run with -o and no -shard", []string{"run", "sas", "-o", filepath.Join(dir, "p.json")}, exitUsage, "needs -shard i/n; for a whole run give -json", ""},
		{"run of factor with -shard 1/1", []string{"run", "factor", "-shard", "1/1"}, exitUsage, "-shard applies to sas", ""},
		{"run with -json under a file", []string{"run", "sas", "-quiet", "-out", dir, "-json", filepath.Join(good, "r.json")}, exitFail, "-json: cannot create the folder", ""},
		{"run with -out under a file", []string{"run", "sas", "-quiet", "-out", filepath.Join(good, "figs")}, exitFail, "-out: cannot create", ""},
		{"run of an unknown experiment", []string{"run", "nope"}, exitUsage, `unknown experiment "nope"`, ""},
		{"unknown command", []string{"smaple"}, exitUsage, `unknown command "smaple"`, ""},
	}
	for _, c := range cases {
		m := &normalModel{n: 2, evals: new(atomic.Int64)}
		var out, errb bytes.Buffer
		code := run(context.Background(), c.args, &out, &errb, interruptBackend(m))
		if code != c.code || !strings.Contains(errb.String(), c.stderr) || !strings.Contains(out.String(), c.stdout) {
			t.Errorf("%s: trj %q: exit %d, stderr %q, stdout %q; want exit %d, stderr with %q, stdout with %q",
				c.name, c.args, code, errb.String(), out.String(), c.code, c.stderr, c.stdout)
		}
		if code != exitOK && m.evals.Load() != 0 {
			t.Errorf("%s: %d gradient evaluations before refusing", c.name, m.evals.Load())
		}
	}
	// -o in a folder that did not exist: trj made it and wrote every chain.
	for _, f := range draws.ChainFileNames(filepath.Join(dir, "new", "x.csv"), 4) {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("-o in a new folder: %v", err)
		}
	}
}

// TestBadDataFiles gives every command that reads a data file (trj run
// factor and robustvs, trj select, trj sample of a posteriordb model) the
// same bad files: each is refused before any work with an error naming
// the file and what is wrong, through the one reader of package datasets.
func TestBadDataFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return writeTestFile(t, dir, name, text) }
	embedded := func(name string) string {
		b, err := datasets.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	rvs := embedded(datasets.RobustRegression)
	fx := embedded(datasets.ExchangeRates)
	sel := embedded(datasets.SelectLinear)
	// A constant covariate X.3 (the fifth field of every row).
	lines := strings.Split(rvs, "\n")
	for i := 1; i < len(lines); i++ {
		if f := strings.Split(lines[i], ","); len(f) > 4 {
			f[4] = "2"
			lines[i] = strings.Join(f, ",")
		}
	}
	constant := strings.Join(lines, "\n")
	// overflow puts 1e300 into field col of the first row (the last field
	// when col < 0).
	overflow := func(csv string, col int) string {
		ls := strings.SplitN(csv, "\n", 3)
		f := strings.Split(ls[1], ",")
		if col < 0 {
			col = len(f) - 1
		}
		f[col] = "1e300"
		ls[1] = strings.Join(f, ",")
		return strings.Join(ls, "\n")
	}
	const schools = `"J": 8, "y": [28, 8, -3, 7, -1, 1, 18, 12], "sigma": [15, 10, 16, 11, 9, 11, 10, 18]`
	// Small sizes, so that a file wrongly accepted costs seconds.
	runData := func(exp, path string) []string {
		return []string{"run", exp, "-quiet", "-out", dir, "-data", path, "-train-draws", "100", "-bridge-reps", "2", "-train-iters", "5"}
	}
	selData := func(path string) []string { return []string{"select", "-quiet", "-data", path, "-y", "y"} }
	sample := func(path string) []string {
		return []string{"sample", "-quiet", "-model", "eight_schools_centered", "-data", path}
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"robustvs UTF-16", runData("robustvs", write("rvs16.csv", checks.UTF16(rvs))), "rvs16.csv: robustvs: bad data: datasets: bad data file: the file is UTF-16; save it as UTF-8"},
		{"robustvs semicolons", runData("robustvs", write("rvs;.csv", strings.ReplaceAll(rvs, ",", ";"))), "separated by ';'"},
		{"robustvs overflowing datum", runData("robustvs", write("rvsbig.csv", overflow(rvs, 1))), `line 2 column "y": "1e300" is too large`},
		{"robustvs constant covariate", runData("robustvs", write("rvsconst.csv", constant)), "covariate X.3 is constant (2 in every row)"},
		{"factor UTF-16", runData("factor", write("fx16.csv", checks.UTF16(fx))), "fx16.csv: factor: bad data: datasets: bad data file: the file is UTF-16"},
		{"factor semicolons", runData("factor", write("fx;.csv", strings.ReplaceAll(fx, ",", ";"))), "separated by ';'"},
		{"factor overflowing datum", runData("factor", write("fxbig.csv", overflow(fx, -1))), `line 2 column 6 (x6): "1e300" is too large`},
		{"select UTF-16", selData(write("sel16.csv", checks.UTF16(sel))), "sel16.csv: datasets: bad data file: the file is UTF-16"},
		{"select semicolons", selData(write("sel;.csv", strings.ReplaceAll(sel, ",", ";"))), "separated by ';'"},
		{"select overflowing datum", selData(write("selbig.csv", overflow(sel, -1))), `line 2, column "x20": "1e300" is too large`},
		{"sample JSON trailing garbage", sample(write("tg.json", "{"+schools+"}\nxyz")), "tg.json: datasets: bad data file: text after the data object"},
		{"sample two JSON objects", sample(write("two.json", "{"+schools+"}\n{"+schools+"}")), "a second JSON object"},
		{"sample duplicate key", sample(write("dup.json", "{"+schools+`, "y": [1, 2, 3, 4, 5, 6, 7, 8]}`)), `key "y" appears twice`},
		{"sample UTF-16 JSON", sample(write("s16.json", checks.UTF16("{"+schools+"}"))), "the file is UTF-16"},
		{"sample overflowing datum", sample(write("big.json", `{"J": 8, "y": [1e300, 8, -3, 7, -1, 1, 18, 12], "sigma": [15, 10, 16, 11, 9, 11, 10, 18]}`)), `field "y": element 1 is 1e+300: beyond 1e+150`},
	}
	for _, c := range cases {
		code, stdout, stderr := runDefault(c.args...)
		if code != exitFail || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: trj %q: exit %d, stderr %q, stdout %.100q; want exit %d and %q", c.name, c.args, code, stderr, stdout, exitFail, c.want)
		}
	}
	// A byte-order mark is accepted (factor.ReadData and robustvs.ReadData
	// are checked in models/datasets; a full run of either is long).
	bom := write("bom.json", "\ufeff{"+schools+"}")
	code, _, stderr := runDefault("sample", "-quiet", "-model", "eight_schools_centered", "-chains", "1", "-warmup", "20", "-draws", "20",
		"-data", bom)
	if code != exitOK {
		t.Errorf("sample with a byte-order mark in the JSON data: exit %d, %s", code, stderr)
	}
}
