package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/trjgo/trj/models"
)

// TestSampleEveryModelFromEmptyDir samples every gallery model briefly from
// an empty working directory with $TRJ_DATA unset: each runs on the data
// built into trj, and the output says so.
func TestSampleEveryModelFromEmptyDir(t *testing.T) {
	skipInRacePass(t, "one chain of every gallery model, one after another")
	t.Setenv(dataDirEnv, "")
	t.Chdir(t.TempDir())
	for _, e := range models.All() {
		code, stdout, stderr := runDefault("sample", "-model", e.Name, "-chains", "1", "-warmup", "30", "-draws", "20", "-seed", "2", "-quiet")
		if code != exitOK {
			t.Errorf("%s: exit %d, stderr %q", e.Name, code, stderr)
			continue
		}
		if want := "model " + e.Name + ", data embedded:" + e.DataFile + "\n"; !strings.Contains(stdout, want) {
			t.Errorf("%s: output lacks %q:\n%s", e.Name, want, stdout)
		}
	}
	entries, err := os.ReadDir(".")
	if err != nil || len(entries) != 0 {
		t.Errorf("sampling without -o wrote into the working directory: %v %v", entries, err)
	}
}

// TestModelsLists checks that "trj models" gives each model's name,
// dimension, data size and description.
func TestModelsLists(t *testing.T) {
	skipInRacePass(t, "builds every gallery model, one after another")
	code, stdout, stderr := runDefault("models")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	all := models.All()
	if len(lines) != len(all)+1 || !strings.HasPrefix(lines[0], "model ") {
		t.Fatalf("want a header and %d rows:\n%s", len(all), stdout)
	}
	row := regexp.MustCompile(`^(\S+) +(\d+) +(\d+(\.\d)? [kM]?B) +(.+)$`)
	for i, e := range all {
		m := row.FindStringSubmatch(lines[i+1])
		if m == nil || m[1] != e.Name || m[5] != e.Description {
			t.Errorf("row %d: %q", i+1, lines[i+1])
		}
	}
	got := map[string][]string{}
	for _, l := range lines[1:] {
		if m := row.FindStringSubmatch(l); m != nil {
			got[m[1]] = m[2:4]
		}
	}
	for name, want := range map[string][]string{"eight_schools_noncentered": {"10", "95 B"}, "diamonds": {"26", "2.4 MB"}, "kilpisjarvi": {"3", "837 B"}} {
		if g := got[name]; len(g) != 2 || g[0] != want[0] || g[1] != want[1] {
			t.Errorf("%s: dimension and data size %v, want %v", name, g, want)
		}
	}
}

// TestBuiltBinaryFromEmptyDir builds trj and runs it from an empty
// directory, as a user who installed it would: the gallery's data are
// inside the binary.
func TestBuiltBinaryFromEmptyDir(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the binary with")
	}
	bin := filepath.Join(t.TempDir(), "trj")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, dataDirEnv+"=") {
			env = append(env, kv)
		}
	}
	for _, args := range [][]string{
		{"models"},
		{"sample", "-model", "diamonds", "-chains", "1", "-warmup", "20", "-draws", "10", "-quiet"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("trj %s: %v\n%s", strings.Join(args, " "), err, out)
			continue
		}
		if args[0] == "sample" && !strings.Contains(string(out), "data embedded:posteriordb/diamonds-diamonds.json") {
			t.Errorf("trj %s: output does not name the embedded data:\n%s", strings.Join(args, " "), out)
		}
	}
}

// TestRunFactorAndRobustVS runs "trj run factor" and "trj run robustvs" at
// toy sizes from an empty working directory, on the embedded data.
func TestRunFactorAndRobustVS(t *testing.T) {
	// Under the race detector the factor run alone took 15 minutes on the
	// loaded 2-core machine, most of CI's race pass; TestRunSASEndToEnd
	// runs the same concurrent pipeline (trj.Run) from the CLI under -race.
	skipInRacePass(t, "the factor and robustvs experiments, whose concurrent stages TestRunSASEndToEnd also runs")
	t.Setenv(dataDirEnv, "")
	dir := t.TempDir()
	t.Chdir(t.TempDir())
	tiny := []string{"-quiet", "-train-draws", "100", "-bridge-reps", "2", "-train-iters", "5", "-scatter-sources", "10"}
	for _, c := range []struct {
		name  string
		extra []string
		want  []string
		figs  []string
	}{
		{"factor", []string{"-chains", "2", "-steps", "50", "-train-draws", "400"}, []string{"data: embedded:exchange_rates_standardized.csv\n", "π(2)", "π(3)", "lopes-west", "rqma"}, []string{"factor_running.png", "factor_bridge.svg", "factor_proposals.png"}},
		{"robustvs", nil, []string{"data: embedded:robust_regression_vs.csv\n", "π(1,1,1,1)", "crqma", "indep-aux", "0.6200"}, []string{"robustvs_bridge.png", "robustvs_proposals.svg"}},
	} {
		if testing.Short() && c.name == "robustvs" {
			// robustvs keeps trj's default chains (8 × 5000 steps, run on
			// until they mix); under the race detector that alone took
			// over 18 minutes on a 2-core machine. The full run covers it.
			continue
		}
		out := filepath.Join(dir, c.name)
		js := filepath.Join(dir, c.name+".json")
		args := append(append([]string{"run", c.name, "-out", out, "-json", js}, tiny...), c.extra...)
		code, stdout, stderr := runArgs(args...)
		if code != exitOK {
			t.Fatalf("%s: exit %d, stderr:\n%s", c.name, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%s: table lacks %q:\n%s", c.name, w, stdout)
			}
		}
		for _, f := range c.figs {
			if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s: %s: %v", c.name, f, err)
			}
		}
		b, err := os.ReadFile(js)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Experiment string                     `json:"experiment"`
			Proposals  map[string]json.RawMessage `json:"proposals"`
		}
		if err := json.Unmarshal(b, &r); err != nil || r.Experiment != c.name || len(r.Proposals) == 0 {
			t.Errorf("%s: JSON %v: %+v", c.name, err, r)
		}
	}
}
