package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

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
