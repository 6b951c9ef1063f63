package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
