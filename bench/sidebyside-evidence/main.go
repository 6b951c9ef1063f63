// Command sidebyside-evidence measures model probabilities by trj.Run's
// defaults and by rstan + bridgesampling, as an R user runs them, on three
// problems with known answers (issue 26):
//
//   - regression: the 16 subsets of four predictors of a conjugate
//     (normal-inverse-gamma) linear regression, exact evidences in closed
//     form, probabilities from about 0.5 down to 10⁻¹²;
//   - robustvs: the paper's robust variable selection (models/robustvs,
//     exact probabilities by quadrature);
//   - factor: factor analysis with 2 or 3 factors (models/factor), scored
//     on π(2) against factorRefP2 ± factorRefSE2.
//
// Run from the module root (R with rstan and bridgesampling installed):
//
//	go run ./bench/sidebyside-evidence -seeds 1,2,3
//	go run ./bench/sidebyside-evidence -table bench/sidebyside-evidence/results.csv
//
// trj runs in this process: trj.Run(ctx, space, &trj.Settings{Seed: s}),
// every other setting the default; its CPU-seconds are the process's user +
// system time (getrusage) around trj.Run, the space built before. Every
// estimate trj.Run reports is scored (rows "per-model", "bridge",
// "chains", and "read", Result.Read's choice among them); the per-model evidences are what its table says to read for
// rare models and Bayes factors. Stan runs through evidence.R: per model
// rstan's sampling (4 chains of 1000 warm-up and 5000 kept draws, one after
// another), bridge_sampler and then post_prob; its CPU-seconds are rstan's
// own warm-up and sampling times (clock()) plus bridge_sampler's
// (proc.time), summed over the models, compilation excluded (cached in
// -cache). Stan's standard errors are bridge_sampler's error_measures cv
// (the relative error of each marginal likelihood, so the error of its log)
// carried to the probabilities by the delta method, as trj does for its
// per-model evidences.
//
// Every run appends one row per estimate to -out.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/trjgo/trj"
)

func main() {
	out := flag.String("out", filepath.Join("bench", "sidebyside-evidence", "results.csv"), "CSV of every run (appended to)")
	problems := flag.String("problems", "regression,robustvs,factor", "problems")
	systems := flag.String("systems", "trj,stan", "systems, run one after the other for each seed")
	seeds := flag.String("seeds", "1,2,3", "seeds")
	rscript := flag.String("rscript", "Rscript", "Rscript command")
	cache := flag.String("cache", filepath.Join(os.TempDir(), "trj-sidebyside-evidence"), "folder of the compiled Stan models")
	stanIter := flag.Int("stan-iter", 6000, "Stan: iterations per chain, warm-up included")
	stanWarmup := flag.Int("stan-warmup", 1000, "Stan: warm-up iterations per chain")
	stanChains := flag.Int("stan-chains", 4, "Stan: chains per model")
	tableFile := flag.String("table", "", "instead: print the README table of this results file")
	flag.Parse()
	var err error
	if *tableFile != "" {
		err = printTable(*tableFile)
	} else {
		var seedList []int
		if seedList, err = ints(*seeds); err == nil {
			err = run(*out, split(*problems), split(*systems), seedList, *rscript, *cache, stanSettings{*stanIter, *stanWarmup, *stanChains})
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside-evidence:", err)
		os.Exit(1)
	}
}

type stanSettings struct{ iter, warmup, chains int }

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func ints(s string) ([]int, error) {
	var v []int
	for _, f := range split(s) {
		i, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", f)
		}
		v = append(v, i)
	}
	return v, nil
}

// row is one scored estimate of one run.
type row struct {
	Problem, System, Estimate string
	Seed                      int
	CPU                       float64
	P, SE                     []float64
	Score                     score
	Note                      string
}

func run(out string, problems, systems []string, seeds []int, rscript, cache string, st stanSettings) error {
	tmp, err := os.MkdirTemp("", "sidebyside-evidence")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, name := range problems {
		pr, err := newProblem(name)
		if err != nil {
			return err
		}
		data := filepath.Join(tmp, name+".csv")
		if err := pr.writeData(data); err != nil {
			return err
		}
		for _, seed := range seeds {
			for _, sys := range systems {
				var rows []row
				switch sys {
				case "trj":
					rows, err = runTrj(pr, seed)
				case "stan":
					rows, err = runStan(pr, seed, data, tmp, rscript, cache, st)
				default:
					err = fmt.Errorf("unknown system %q (trj, stan)", sys)
				}
				if err != nil {
					return fmt.Errorf("%s seed %d %s: %w", name, seed, sys, err)
				}
				for _, r := range rows {
					fmt.Fprintf(os.Stderr, "%-10s seed %d %-4s %-9s %7.1f CPU s, max |err| %.2g (SE %.2g), max |z| %.2f, Σerr² %.3g; %s\n",
						r.Problem, r.Seed, r.System, r.Estimate, r.CPU, r.Score.MaxErr, r.Score.SEAtMax, r.Score.MaxZ, r.Score.SumSq, r.Note)
					if err := appendCSV(out, r); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// runTrj runs trj.Run with default settings but the seed and scores each
// of its estimates.
func runTrj(pr *problem, seed int) ([]row, error) {
	c0 := cpuSeconds()
	res, err := trj.Run(context.Background(), pr.space, &trj.Settings{Seed: uint64(seed)})
	cpu := cpuSeconds() - c0
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "%s", res)
	var kinds []string
	for _, t := range res.Transports {
		kinds = append(kinds, t.Kind)
	}
	base := row{Problem: pr.name, System: "trj", Seed: seed, CPU: cpu}
	var rows []row
	add := func(est string, p, se []float64, note string) {
		r := base
		r.Estimate, r.P, r.SE, r.Note = est, p, se, note
		r.Score = scoreProbs(p, se, pr.ref, pr.refSE)
		rows = append(rows, r)
	}
	if e := res.ModelEvidence; e != nil {
		note := "transports " + strings.Join(kinds, "/")
		if pr.logZ != nil {
			z := make([]float64, len(pr.logZ))
			for k := range z {
				z[k] = (e.LogZ[k] - pr.logZ[k]) / e.LogZSE[k]
			}
			note += fmt.Sprintf(", log Z max |z| %.2f, %s", maxAbs(z), rareNote(e.P, pr.ref))
		}
		add("per-model", e.P, e.SE, note)
	} else {
		fmt.Fprintf(os.Stderr, "no per-model evidence: %s\n", res.ModelEvidenceError)
	}
	if p, se, balance := res.Bridge.Reported(); p != nil {
		note := fmt.Sprintf("min accept ESS %.0f", res.Bridge.MinAcceptESS)
		if balance {
			note += ", balance (Bartolucci unreliable)"
		}
		add("bridge", p, se, note)
	}
	if res.Chain != nil {
		p := make([]float64, len(res.Chain))
		se := make([]float64, len(res.Chain))
		mixed := true
		for k, c := range res.Chain {
			p[k], se[k] = c.P, c.MCSE
			mixed = mixed && c.Mixed
		}
		add("chains", p, se, fmt.Sprintf("%d kept steps, all mixed %v", res.Steps, mixed))
		// A model the chains never entered (or never left) has no MCSE:
		// its z-score is left out and "within 4 SE" is read from its
		// Wilson interval at 4 SE (pipeline.Estimate.Interval), as for every
		// model.
		sc := &rows[len(rows)-1].Score
		sc.MaxZ, sc.Within4 = 0, true
		for k, c := range res.Chain {
			if c.Mixed && c.MCSE > 0 {
				sc.MaxZ = max(sc.MaxZ, math.Abs(scoreProbs(p[k:k+1], se[k:k+1], pr.ref[k:k+1], sub(pr.refSE, k)).MaxZ))
			}
			lo, hi := c.Interval(4)
			w := 4 * sub1(pr.refSE, k)
			if !(pr.ref[k] >= lo-w && pr.ref[k] <= hi+w) {
				sc.Within4 = false
			}
		}
		if math.Abs(sc.ZAtMax) > 0 && math.IsInf(sc.ZAtMax, 0) {
			sc.ZAtMax = math.NaN()
		}
	}
	if rd := res.Read(); rd != nil {
		// What the table's "read" column shows: per model, the estimate
		// of least SE among the chains and the evidences that agree with
		// them.
		p := make([]float64, len(rd))
		se := make([]float64, len(rd))
		from := map[string]int{}
		for k, m := range rd {
			p[k], se[k] = m.P, m.SE
			from[m.From]++
		}
		add("read", p, se, fmt.Sprintf("from %v", from))
	}
	return rows, nil
}

// sub is refSE[k:k+1], or nil for an exact reference.
func sub(refSE []float64, k int) []float64 {
	if refSE == nil {
		return nil
	}
	return refSE[k : k+1]
}

// sub1 is refSE[k], or 0 for an exact reference.
func sub1(refSE []float64, k int) float64 {
	if refSE == nil {
		return 0
	}
	return refSE[k]
}

// rareNote is the largest relative error of the models whose reference
// probability is below 10⁻⁹.
func rareNote(p, ref []float64) string {
	var rel float64
	n := 0
	for k := range ref {
		if ref[k] < 1e-9 {
			rel = max(rel, math.Abs(p[k]/ref[k]-1))
			n++
		}
	}
	return fmt.Sprintf("%d models below 1e-9, largest relative error %.3f", n, rel)
}

func maxAbs(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}

// runStan runs evidence.R for one problem and seed and scores post_prob's
// probabilities.
func runStan(pr *problem, seed int, data, tmp, rscript, cache string, st stanSettings) ([]row, error) {
	f := filepath.Join(tmp, "stan-out.csv")
	os.Remove(f)
	script := filepath.Join("bench", "sidebyside-evidence", "evidence.R")
	cmd := exec.Command(rscript, script, pr.name, data, strconv.Itoa(seed), cache, f,
		strconv.Itoa(st.iter), strconv.Itoa(st.warmup), strconv.Itoa(st.chains))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, stderr.String())
	}
	recs, err := readCSV(f)
	if err != nil {
		return nil, err
	}
	K := len(pr.ref)
	if len(recs) != K+1 {
		return nil, fmt.Errorf("evidence.R wrote %d rows for %d models", len(recs)-1, K)
	}
	col := map[string]int{}
	for j, h := range recs[0] {
		col[h] = j
	}
	get := func(i int, name string) (float64, error) {
		j, ok := col[name]
		if !ok {
			return 0, fmt.Errorf("evidence.R output has no column %q", name)
		}
		s := recs[i][j]
		if s == "NA" || s == "NaN" {
			return math.NaN(), nil
		}
		return strconv.ParseFloat(s, 64)
	}
	logml, logmlSE, post := make([]float64, K), make([]float64, K), make([]float64, K)
	var warm, samp, bridge, rhat, div float64
	for k := range K {
		v := make([]float64, 8)
		for j, name := range []string{"logml", "logml_se", "post_prob", "cpu_warmup", "cpu_sample", "cpu_bridge", "max_rhat", "divergent"} {
			if v[j], err = get(k+1, name); err != nil {
				return nil, err
			}
		}
		logml[k], logmlSE[k], post[k] = v[0], v[1], v[2]
		warm, samp, bridge = warm+v[3], samp+v[4], bridge+v[5]
		rhat, div = max(rhat, v[6]), div+v[7]
	}
	p, se, err := trj.PosteriorProbabilities(logml, logmlSE, pr.prior)
	if err != nil {
		return nil, err
	}
	for k := range p {
		if math.Abs(p[k]-post[k]) > 1e-6*max(p[k], 1e-300) && math.Abs(p[k]-post[k]) > 1e-12 {
			return nil, fmt.Errorf("model %d: post_prob %g, from the log marginal likelihoods %g", k, post[k], p[k])
		}
	}
	note := fmt.Sprintf("CPU warm-up %.1f + sampling %.1f + bridge_sampler %.1f, max R̂ %.3f, divergent %.0f", warm, samp, bridge, rhat, div)
	if pr.logZ != nil {
		z := make([]float64, K)
		for k := range z {
			z[k] = (logml[k] - pr.logZ[k]) / logmlSE[k]
		}
		note += fmt.Sprintf(", log Z max |z| %.2f, %s", maxAbs(z), rareNote(post, pr.ref))
	}
	r := row{Problem: pr.name, System: "stan", Estimate: "bridge_sampler", Seed: seed, CPU: warm + samp + bridge, P: post, SE: se, Note: note}
	r.Score = scoreProbs(post, se, pr.ref, pr.refSE)
	return []row{r}, nil
}

var csvHeader = []string{"problem", "seed", "system", "estimate", "cpu_s", "max_abs_err", "se_at_max", "z_at_max", "max_abs_z",
	"within_4se", "sum_sq_err", "cpu_x_sum_sq", "p", "se", "note"}

func appendCSV(path string, r row) error {
	_, err := os.Stat(path)
	header := errors.Is(err, os.ErrNotExist)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	w := newCSVWriter(f)
	if header {
		w.Write(csvHeader)
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	join := func(v []float64) string {
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = g(x)
		}
		return strings.Join(s, ";")
	}
	s := r.Score
	w.Write([]string{r.Problem, strconv.Itoa(r.Seed), r.System, r.Estimate, fmt.Sprintf("%.2f", r.CPU), g(s.MaxErr), g(s.SEAtMax), g(s.ZAtMax), g(s.MaxZ),
		strconv.FormatBool(s.Within4), g(s.SumSq), g(r.CPU * s.SumSq), join(r.P), join(r.SE), r.Note})
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
