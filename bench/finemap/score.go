package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/selection"
)

// readReference reads the reference JSON at path.
func readReference(path string) (*Reference, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ref Reference
	if err := json.Unmarshal(b, &ref); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(ref.PIP) == 0 || len(ref.PIP) != len(ref.MCSE) || len(ref.PIP) != len(ref.Names) {
		return nil, fmt.Errorf("%s: %d PIPs, %d MCSEs and %d names: want as many of each, at least one", path, len(ref.PIP), len(ref.MCSE), len(ref.Names))
	}
	return &ref, nil
}

// agreement is how a run's PIPs compare with the reference's: the largest
// error and |z| over every term, and R̂ over the mixed ones.
type agreement struct {
	maxErr, maxZ, maxRhat float64
	worst                 int
	// maxZCommon is the largest |z| over the terms of reference PIP at
	// least 0.001, and over4 counts the terms of |z| > 4: at PIPs near
	// 2·10⁻⁴ a run of 160,000 steps holds a term a few times, and its
	// batch-means MCSE is then too small to trust.
	maxZCommon float64
	over4      int
}

func compare(names []string, pip []pipeline.Estimate, ref *Reference) (agreement, error) {
	var a agreement
	if len(pip) != len(ref.PIP) || len(names) != len(pip) {
		return a, fmt.Errorf("the run has %d terms (%d names), the reference %d", len(pip), len(names), len(ref.PIP))
	}
	for j, e := range pip {
		if names[j] != ref.Names[j] {
			return a, fmt.Errorf("term %d is %q in the run, %q in the reference", j, names[j], ref.Names[j])
		}
		d := math.Abs(e.P - ref.PIP[j])
		if d > a.maxErr {
			a.maxErr, a.worst = d, j
		}
		if se := math.Hypot(e.MCSE, ref.MCSE[j]); se > 0 {
			a.maxZ = max(a.maxZ, d/se)
			if ref.PIP[j] >= 0.001 {
				a.maxZCommon = max(a.maxZCommon, d/se)
			}
			if d/se > 4 {
				a.over4++
			}
		}
		if e.Mixed {
			a.maxRhat = max(a.maxRhat, e.Rhat)
		}
	}
	return a, nil
}

// runTrj runs selection.Run on the embedded data with settings (nil:
// defaults).
func runTrj(s *selection.Settings) (*selection.Result, error) {
	d, err := readN3()
	if err != nil {
		return nil, err
	}
	sp, err := glmselect.Gaussian(d.X, d.Y, &glmselect.Settings{Names: d.Names})
	if err != nil {
		return nil, err
	}
	return selection.Run(context.Background(), sp, s)
}

// savedRun is what -trj keeps of a run (-save), so that a run made before
// the reference is final can be scored against it later (-rescore).
type savedRun struct {
	Seed      uint64              `json:"seed"`
	Proposal  string              `json:"proposal"`
	Chains    int                 `json:"chains"`
	Steps     int                 `json:"steps_per_chain"`
	CPU       float64             `json:"cpu_seconds"`
	PeakMB    int64               `json:"peak_rss_mb"`
	Names     []string            `json:"names"`
	PIP       []pipeline.Estimate `json:"pip"`
	PIPVisits []pipeline.Estimate `json:"pip_visits,omitempty"`
	Warnings  []string            `json:"warnings,omitempty"`
}

// scoreTrj runs selection.Run with its defaults but the seed, saves what
// it needs of the run to save (when not empty) and prints its
// CPU-seconds, peak memory, largest R̂ and its agreement with the
// reference.
func scoreTrj(path, save string, seed uint64) error {
	cpu0 := cpuSeconds()
	res, err := runTrj(&selection.Settings{Seed: seed})
	if err != nil {
		return err
	}
	cpu := cpuSeconds() - cpu0
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	run := &savedRun{Seed: seed, Proposal: res.Proposal, Chains: res.NumChains, Steps: res.StepsPerChain, CPU: cpu,
		PeakMB: int64(ru.Maxrss) / 1024, Names: res.Names, PIP: res.PIP, PIPVisits: res.PIPVisits, Warnings: res.Warnings}
	if save != "" {
		b, err := json.Marshal(run)
		if err != nil {
			return err
		}
		if err := os.WriteFile(save, b, 0o644); err != nil {
			return err
		}
	}
	return printScore(path, run)
}

// rescore prints the score of each saved run against the reference.
func rescore(path string, saved []string) error {
	for _, f := range saved {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var run savedRun
		if err := json.Unmarshal(b, &run); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if err := printScore(path, &run); err != nil {
			return err
		}
	}
	return nil
}

func printScore(path string, run *savedRun) error {
	ref, err := readReference(path)
	if err != nil {
		return err
	}
	a, err := compare(run.Names, run.PIP, ref)
	if err != nil {
		return err
	}
	fmt.Printf("trj seed %d (%s, %d chains × %d steps): CPU %.1f s, peak RSS %d MB; PIPs: max R̂ %.4f, max |PIP error| %.4f (%s), max |z| %.2f (%d terms over 4; %.2f over the terms of reference PIP ≥ 0.001)\n",
		run.Seed, run.Proposal, run.Chains, run.Steps, run.CPU, run.PeakMB, a.maxRhat, a.maxErr, run.Names[a.worst], a.maxZ, a.over4, a.maxZCommon)
	if len(run.PIPVisits) == len(run.PIP) {
		b, err := compare(run.Names, run.PIPVisits, ref)
		if err != nil {
			return err
		}
		fmt.Printf("  visit frequencies: max R̂ %.4f, max |PIP error| %.4f (%s), max |z| %.2f (%d terms over 4; %.2f over the terms of reference PIP ≥ 0.001)\n",
			b.maxRhat, b.maxErr, run.Names[b.worst], b.maxZ, b.over4, b.maxZCommon)
	}
	for _, j := range topTerms(ref.PIP, 5) {
		e := run.PIP[j]
		fmt.Printf("  %-6s trj %.4f ± %.4f (R̂ %.4f)  reference %.4f ± %.4f\n", run.Names[j], e.P, e.MCSE, e.Rhat, ref.PIP[j], ref.MCSE[j])
	}
	for _, w := range run.Warnings {
		fmt.Println("  warning:", w)
	}
	return nil
}

// susieOut is the JSON susie.R prints.
type susieOut struct {
	Version string  `json:"susieR"`
	CPU     float64 `json:"cpu_seconds"`
	Sets    []struct {
		Effect   string   `json:"effect"`
		Terms    []string `json:"terms"`
		Coverage float64  `json:"coverage"`
		Purity   float64  `json:"min_abs_corr"`
	} `json:"credible_sets"`
	PIP map[string]float64 `json:"pip"`
}

// runSusie runs bench/finemap/susie.R on the embedded data and prints its
// CPU-seconds, its PIPs of the reference's top terms beside the
// reference's, and its credible sets with the reference's probability
// mass in each (the sum of the reference PIPs of its terms).
func runSusie(path string) error {
	ref, err := readReference(path)
	if err != nil {
		return err
	}
	if _, err := os.Stat("bench/finemap/susie.R"); err != nil {
		return fmt.Errorf("%w (run from the module root)", err)
	}
	cmd := exec.Command("Rscript", "bench/finemap/susie.R", "models/datasets/"+dataName)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("susie.R (Rscript): %w", err)
	}
	var s susieOut
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("susie.R's output: %w", err)
	}
	fmt.Printf("SuSiE (susieR %s, L = 10): CPU %.2f s (the fit alone)\n", s.Version, s.CPU)
	for _, j := range topTerms(ref.PIP, 10) {
		fmt.Printf("  %-6s SuSiE %.4f  reference %.4f ± %.4f\n", ref.Names[j], s.PIP[ref.Names[j]], ref.PIP[j], ref.MCSE[j])
	}
	index := map[string]int{}
	for j, n := range ref.Names {
		index[n] = j
	}
	for _, cs := range s.Sets {
		var mass float64
		for _, t := range cs.Terms {
			mass += ref.PIP[index[t]]
		}
		fmt.Printf("  credible set %s: %d terms (%s), coverage %.3f, min |corr| %.3f; reference PIPs sum to %.3f\n",
			cs.Effect, len(cs.Terms), listTerms(cs.Terms, 6), cs.Coverage, cs.Purity, mass)
	}
	return nil
}

// listTerms lists up to k names, then how many more.
func listTerms(names []string, k int) string {
	if len(names) <= k {
		return strings.Join(names, " ")
	}
	return fmt.Sprintf("%s … (%d more)", strings.Join(names[:k], " "), len(names)-k)
}
