// Command sidebyside-select measures variable selection by trj, BMS and
// JAGS on the data sets of models/datasets/select: the largest absolute
// error of the posterior inclusion probabilities (PIPs) against each
// method's own reference, and the CPU-seconds of the sampling (compile and
// set-up excluded), over seeds and run lengths.
//
// Run from the module root (R with the BMS and rjags packages, and JAGS,
// installed for the R tools):
//
//	go run ./bench/sidebyside-select -out bench/sidebyside-select/results.csv
//
// With -scale 20,50,100 it instead measures selection.Run's memory (peak RSS of
// a fresh process per p) and time per step as the number of candidate
// terms grows, on the linear set widened by null columns (same n).
//
// trj runs in this process: the CPU time of the process (all goroutines,
// getrusage) around selection.Run, the space built before. BMS and JAGS run
// through Rscript and the scripts here, which time their sampling with
// proc.time (BMS: bms(), burn-in included; JAGS: adaptation/burn-in and
// coda.samples, jags.model's compilation excluded).
//
// References: trj and JAGS (the same normal-inverse-gamma prior) against
// the exact PIPs of select/linear_p20_nig_exact.json; BMS (Zellner's
// g-prior, g = "UIP", mprior = "random") against the exact PIPs of the
// same prior, select/linear_p20_gprior_exact.json; on the logistic set trj
// and JAGS against the importance-sampling reference
// select/logistic_p15_is.json. BMS has no logistic regression.
//
// The real data sets of issue 32 (-problems uscrime,fls,pima) score the
// coefficients too: every tool runs BMS's g-prior on UScrime and FLS (JAGS
// by jags_gprior.R, which explains how), scored against
// select/uscrime_gprior_exact.json and select/fls_gprior_mc3.json; Pima
// runs trj's logistic prior (trj, jags_pima.R) against select/pima_is.json.
// The R scripts of these problems append the coefficients' means and sds
// after the PIPs; the table adds the largest coefficient error over the
// reference posterior sd and CPU × error².
package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/selection"
)

// reference is the part of a reference JSON the harness uses.
type reference struct {
	Problem  string             `json:"problem"`
	Prior    map[string]float64 `json:"-"`
	PIP      []float64          `json:"pip"`
	PIPSE    []float64          `json:"pip_se"`
	CoefMean []float64          `json:"coef_mean"`
	CoefSD   []float64          `json:"coef_sd"`
}

func loadReference(name string) (*reference, error) {
	b, err := datasets.ReadFile("select/" + name)
	if err != nil {
		return nil, err
	}
	var r reference
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var raw struct {
		Prior map[string]any `json:"prior"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	r.Prior = map[string]float64{}
	for k, v := range raw.Prior {
		if f, ok := v.(float64); ok {
			r.Prior[k] = f
		}
	}
	return &r, nil
}

// problem is one data set with its references.
type problem struct {
	name    string // "linear", "logistic", "uscrime", "fls" or "pima"
	data    string // embedded name
	nigRef  string // reference of trj and JAGS
	bmsRef  string // reference of BMS ("" when BMS cannot run it)
	bmsR    string // BMS script
	jagsR   string // JAGS script
	coef    bool   // the R scripts report coefficients too (the real data sets)
	family  string
	x       *mat.Dense
	y       []float64
	dataCSV string // path of the data on disk, for R
}

// result is one measured run.
type result struct {
	Problem, Tool, Reference string
	Seed                     int
	Warmup, Steps            int
	CPUSeconds               float64
	MaxAbsErr, MeanAbsErr    float64
	MaxZ                     float64 // trj: max |error| / (MCSE ⊕ reference SE)
	// CoefErr is the largest |error of a coefficient's posterior mean| /
	// its reference posterior sd (NaN when the run or the reference has no
	// coefficients).
	CoefErr  float64
	PIP      []float64
	Mean, SD []float64 // model-averaged coefficient means and sds (data units)
	MCSE     []float64 // trj only
	note     string    // trj: acceptances and ESS, for the log
}

// trjProposal is the -proposal flag's family (nil: trj's default), and
// trjInformed the -informed flag (selection.Settings.Informed).
var (
	trjProposal selection.Proposal
	trjInformed bool
)

func parseProposal(name string) (selection.Proposal, error) {
	if name == "" || name == "default" {
		return nil, nil
	}
	return selection.ParseProposal(name)
}

func main() {
	out := flag.String("out", filepath.Join("bench", "sidebyside-select", "results.csv"), "CSV of every run (appended to)")
	problems := flag.String("problems", "linear,logistic", "data sets")
	tools := flag.String("tools", "trj,bms,jags", "tools")
	seeds := flag.String("seeds", "1,2,3", "seeds")
	trjSteps := flag.String("trj-steps", "1000,4000,16000", "trj: kept steps per chain (warm-up: a fifth, at least 200)")
	chains := flag.Int("chains", 4, "trj: chains")
	bmsIter := flag.String("bms-iter", "10000,100000,1000000", "BMS: iterations (burn-in: a fifth)")
	jagsIter := flag.String("jags-iter", "1000,4000,16000", "JAGS: iterations (adaptation/burn-in: a fifth)")
	rscript := flag.String("rscript", "Rscript", "Rscript command")
	scaleP := flag.String("scale", "", "instead: measure memory and time of selection.Run at these numbers of terms (e.g. 20,50,100), each in a fresh process")
	scaleOneP := flag.Int("scale-one", 0, "internal: one -scale measurement")
	scaleWarmup := flag.Int("scale-warmup", 500, "-scale: warm-up steps per chain")
	scaleSteps := flag.Int("scale-steps", 2000, "-scale: kept steps per chain")
	scoreFile := flag.String("score", "", "instead: score the rows an R script wrote to this file (runs made by hand) against the reference of -problems (one), appending to -out")
	tableFiles := flag.String("table", "", "instead: print the summary table of these results files (comma separated)")
	proposal := flag.String("proposal", "", "trj: the selection.Proposal family (laplace, global, identity, amortised, ctrj, fullcond; default trj's); rows are labelled trj-<family>")
	flag.BoolVar(&trjInformed, "informed", false, "trj: informed choice of the term to add or drop (selection.Settings.Informed); rows are labelled trj-informed")
	flag.Parse()
	var err0 error
	if trjProposal, err0 = parseProposal(*proposal); err0 != nil {
		fmt.Fprintln(os.Stderr, err0)
		os.Exit(2)
	}
	if *scoreFile != "" || *tableFiles != "" {
		var err error
		if *scoreFile != "" {
			err = score(*scoreFile, *problems, *out)
		} else {
			err = tableOf(split(*tableFiles))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "sidebyside-select:", err)
			os.Exit(1)
		}
		return
	}
	if *scaleOneP > 0 || *scaleP != "" {
		var err error
		if *scaleOneP > 0 {
			err = scaleOne(*scaleOneP, *chains, *scaleWarmup, *scaleSteps)
		} else {
			err = scale(ints(*scaleP), *chains, *scaleWarmup, *scaleSteps)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "sidebyside-select:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*out, split(*problems), split(*tools), ints(*seeds), ints(*trjSteps), *chains, ints(*bmsIter), ints(*jagsIter), *rscript); err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside-select:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func ints(s string) []int {
	var v []int
	for _, f := range split(s) {
		i, err := strconv.Atoi(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sidebyside-select: %q is not an integer\n", f)
			os.Exit(2)
		}
		v = append(v, i)
	}
	return v
}

func run(out string, problems, tools []string, seeds, trjSteps []int, chains int, bmsIter, jagsIter []int, rscript string) error {
	tmp, err := os.MkdirTemp("", "sidebyside-select")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var results []result
	for _, pn := range problems {
		pr, err := loadProblem(pn, tmp)
		if err != nil {
			return err
		}
		nig, err := loadReference(pr.nigRef)
		if err != nil {
			// Run anyway; -table scores the stored PIPs once the
			// reference exists.
			fmt.Fprintf(os.Stderr, "no reference yet (%v): errors left NaN\n", err)
			nig = nil
		}
		for _, tool := range tools {
			for _, seed := range seeds {
				var lengths []int
				switch tool {
				case "trj":
					lengths = trjSteps
				case "bms":
					if pr.bmsRef == "" {
						continue
					}
					lengths = bmsIter
				case "jags":
					lengths = jagsIter
				default:
					return fmt.Errorf("unknown tool %q", tool)
				}
				for _, n := range lengths {
					var r result
					var err error
					ref := nig
					refName := pr.nigRef
					switch tool {
					case "trj":
						r, err = runTrj(pr, seed, n, chains)
					case "bms":
						if ref, err = loadReference(pr.bmsRef); err != nil {
							return err
						}
						refName = pr.bmsRef
						r, err = runR(rscript, tmp, "BMS", pr.bmsR, []string{pr.dataCSV, itoa(seed), itoa(n / 5), itoa(n)}, pr.coef)
					case "jags":
						if ref == nil {
							return fmt.Errorf("JAGS needs the prior settings of %s", pr.nigRef)
						}
						var extra []string
						switch {
						case pr.coef:
						case pr.family == "gaussian":
							extra = []string{ftoa(ref.Prior["g"]), ftoa(ref.Prior["a"]), ftoa(ref.Prior["b"])}
						default:
							extra = []string{ftoa(ref.Prior["s0"]), ftoa(ref.Prior["s"])}
						}
						r, err = runR(rscript, tmp, "JAGS", pr.jagsR, append([]string{pr.dataCSV, itoa(seed), itoa(n / 5), itoa(n)}, extra...), pr.coef)
					}
					if err != nil {
						return fmt.Errorf("%s %s seed %d length %d: %w", pn, tool, seed, n, err)
					}
					r.Problem, r.Reference = pn, refName
					r.MaxAbsErr, r.MeanAbsErr, r.CoefErr = math.NaN(), math.NaN(), math.NaN()
					if ref != nil {
						r.MaxAbsErr, r.MeanAbsErr = errors2(r.PIP, ref.PIP)
						r.MaxZ = maxZ(r, ref)
						r.CoefErr = coefErr(r, ref)
					}
					results = append(results, r)
					fmt.Fprintf(os.Stderr, "%-8s %-4s seed %d steps %7d: %8.2f CPU s, max |PIP err| %.4f, max |coef err|/sd %.4f%s\n", pn, r.Tool, seed, r.Steps, r.CPUSeconds, r.MaxAbsErr, r.CoefErr, r.note)
					if err := appendCSV(out, r); err != nil {
						return err
					}
				}
			}
		}
	}
	fmt.Print(table(results))
	return nil
}

func itoa(i int) string     { return strconv.Itoa(i) }
func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func errors2(got, want []float64) (maxErr, meanErr float64) {
	for j := range want {
		e := math.Abs(got[j] - want[j])
		maxErr = math.Max(maxErr, e)
		meanErr += e / float64(len(want))
	}
	return
}

// coefErr is the largest |error of a coefficient's posterior mean| over
// the terms, in units of the reference's posterior sd of the coefficient
// (NaN without coefficients on either side).
func coefErr(r result, ref *reference) float64 {
	if len(r.Mean) == 0 || len(ref.CoefMean) != len(r.Mean) || len(ref.CoefSD) != len(r.Mean) {
		return math.NaN()
	}
	var e float64
	for j, m := range r.Mean {
		if ref.CoefSD[j] > 0 {
			e = math.Max(e, math.Abs(m-ref.CoefMean[j])/ref.CoefSD[j])
		}
	}
	return e
}

func loadProblem(name, tmp string) (*problem, error) {
	var pr problem
	switch name {
	case "linear":
		pr = problem{name: name, data: datasets.SelectLinear, nigRef: "linear_p20_nig_exact.json", bmsRef: "linear_p20_gprior_exact.json", bmsR: "bms_linear.R", jagsR: "jags_linear.R", family: "gaussian"}
	case "logistic":
		pr = problem{name: name, data: datasets.SelectLogistic, nigRef: "logistic_p15_is.json", jagsR: "jags_logistic.R", family: "logistic"}
	// The real data sets of issue 32: every tool runs BMS's g-prior
	// (trj's Gaussian default, JAGS exactly as jags_gprior.R explains),
	// so one reference scores all three; Pima has trj's logistic prior.
	case "uscrime":
		pr = problem{name: name, data: "select/uscrime.csv", nigRef: "uscrime_gprior_exact.json", bmsRef: "uscrime_gprior_exact.json", bmsR: "bms_real.R", jagsR: "jags_gprior.R", family: "gaussian", coef: true}
	case "fls":
		pr = problem{name: name, data: "select/fls.csv", nigRef: "fls_gprior_mc3.json", bmsRef: "fls_gprior_mc3.json", bmsR: "bms_real.R", jagsR: "jags_gprior.R", family: "gaussian", coef: true}
	case "pima":
		pr = problem{name: name, data: "select/pima.csv", nigRef: "pima_is.json", jagsR: "jags_pima.R", family: "logistic", coef: true}
	default:
		return nil, fmt.Errorf("unknown problem %q (linear, logistic, uscrime, fls, pima)", name)
	}
	b, err := datasets.ReadFile(pr.data)
	if err != nil {
		return nil, err
	}
	pr.dataCSV = filepath.Join(tmp, filepath.Base(pr.data))
	if err := os.WriteFile(pr.dataCSV, b, 0o644); err != nil {
		return nil, err
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, err
	}
	n, p := len(rows)-1, len(rows[0])-1
	pr.x = mat.NewDense(n, p, nil)
	pr.y = make([]float64, n)
	for i, row := range rows[1:] {
		for j, s := range row {
			switch s {
			case "Yes":
				s = "1"
			case "No":
				s = "0"
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, err
			}
			if j == 0 {
				pr.y[i] = v
			} else {
				pr.x.Set(i, j-1, v)
			}
		}
	}
	return &pr, nil
}

// runTrj runs selection.Run with default settings but the run length, and
// measures the process's CPU time around it.
func runTrj(pr *problem, seed, steps, chains int) (result, error) {
	var sp *ppl.SelectionSpace
	var err error
	switch {
	case pr.family == "gaussian" && !pr.coef:
		// The normal-inverse-gamma prior of the stored trj reference
		// (linear_p20_nig_exact.json); BMS runs its own g-prior.
		sp, err = glmselect.Gaussian(pr.x, pr.y, &glmselect.Settings{Prior: glmselect.NormalInverseGamma{}})
	case pr.family == "gaussian":
		// trj's default, BMS's g-prior: the real data sets' reference.
		sp, err = glmselect.Gaussian(pr.x, pr.y, nil)
	default:
		sp, err = glmselect.Logistic(pr.x, pr.y, nil)
	}
	if err != nil {
		return result{}, err
	}
	warm := max(200, steps/5)
	c0 := cpuSeconds()
	res, err := selection.Run(context.Background(), sp, &selection.Settings{Seed: uint64(seed), Chains: chains, Warmup: warm, Steps: steps, Proposal: trjProposal, Informed: trjInformed})
	cpu := cpuSeconds() - c0
	if err != nil {
		return result{}, err
	}
	r := result{Tool: "trj", Seed: seed, Warmup: warm, Steps: steps, CPUSeconds: cpu}
	if trjProposal != nil {
		r.Tool = "trj-" + trjProposal.String()
	}
	if trjInformed {
		r.Tool += "-informed"
	}
	r.note = moveNote(res)
	for _, e := range res.PIP {
		r.PIP = append(r.PIP, e.P)
		r.MCSE = append(r.MCSE, e.MCSE)
	}
	// glmselect's coefficients are per unit of each predictor, the
	// references' units.
	for _, c := range res.Coefficients {
		r.Mean = append(r.Mean, float64(c.Mean))
		r.SD = append(r.SD, float64(c.SD))
	}
	return r, nil
}

// maxZ is trj's largest |PIP error| / (MCSE ⊕ reference SE) over the terms
// whose reference PIP is in [0.02, 0.98] (0 for other tools). Near 0 and 1
// a short chain sees a term's rare changes a handful of times and batch
// means understate the MCSE, which says nothing of the sampler.
func maxZ(r result, ref *reference) float64 {
	var z float64
	for j := range r.MCSE {
		se := r.MCSE[j]
		if se == 0 || ref.PIP[j] < 0.02 || ref.PIP[j] > 0.98 {
			continue
		}
		if ref.PIPSE != nil {
			se = math.Hypot(se, ref.PIPSE[j])
		}
		z = math.Max(z, math.Abs(r.PIP[j]-ref.PIP[j])/se)
	}
	return z
}

// runR runs one R script, which appends a row to a CSV: tool, seed, burn,
// iter, cpu_seconds, PIPs, then (coef) the coefficients' means and sds.
func runR(rscript, tmp, tool, script string, args []string, coef bool) (result, error) {
	f := filepath.Join(tmp, "r-out.csv")
	os.Remove(f)
	dir := filepath.Join("bench", "sidebyside-select")
	cmd := exec.Command(rscript, append([]string{filepath.Join(dir, script)}, append(args, f)...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("%v: %s", err, stderr.String())
	}
	rows, err := readCSV(f)
	if err != nil || len(rows) != 2 {
		return result{}, fmt.Errorf("reading %s output: %v (%d rows)", script, err, len(rows))
	}
	row := rows[1]
	var r result
	r.Tool = tool
	v := make([]float64, len(row)-1)
	for i, s := range row[1:] {
		if v[i], err = strconv.ParseFloat(s, 64); err != nil {
			return result{}, fmt.Errorf("%s output: %q: %w", script, s, err)
		}
	}
	r.Seed, r.Warmup, r.Steps, r.CPUSeconds = int(v[0]), int(v[1]), int(v[2]), v[3]
	r.PIP = v[4:]
	if coef {
		p := len(r.PIP) / 3
		r.PIP, r.Mean, r.SD = r.PIP[:p], r.PIP[p:2*p], r.PIP[2*p:]
	}
	return r, nil
}

func appendCSV(path string, r result) error {
	_, err := os.Stat(path)
	header := errors.Is(err, os.ErrNotExist)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if header {
		h := []string{"problem", "tool", "reference", "seed", "warmup", "steps", "cpu_seconds", "max_abs_err", "mean_abs_err", "trj_max_z"}
		for j := range r.PIP {
			h = append(h, fmt.Sprintf("pip%d", j+1))
		}
		for j := range r.PIP {
			h = append(h, fmt.Sprintf("mcse%d", j+1))
		}
		if len(r.Mean) > 0 {
			for j := range r.PIP {
				h = append(h, fmt.Sprintf("mean%d", j+1))
			}
			for j := range r.PIP {
				h = append(h, fmt.Sprintf("sd%d", j+1))
			}
		}
		w.Write(h)
	}
	row := []string{r.Problem, r.Tool, r.Reference, itoa(r.Seed), itoa(r.Warmup), itoa(r.Steps),
		fmt.Sprintf("%.3f", r.CPUSeconds), fmt.Sprintf("%.4f", r.MaxAbsErr), fmt.Sprintf("%.4f", r.MeanAbsErr), fmt.Sprintf("%.2f", r.MaxZ)}
	for _, v := range r.PIP {
		row = append(row, fmt.Sprintf("%.5f", v))
	}
	for j := range r.PIP {
		if j < len(r.MCSE) {
			row = append(row, fmt.Sprintf("%.5f", r.MCSE[j]))
		} else {
			row = append(row, "")
		}
	}
	for _, v := range append(append([]float64(nil), r.Mean...), r.SD...) {
		row = append(row, fmt.Sprintf("%.6g", v))
	}
	w.Write(row)
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// table summarises the runs by problem, tool and length: CPU-seconds and
// max |PIP error| averaged over seeds, with the seeds' range.
func table(rs []result) string {
	type key struct {
		problem, tool string
		steps         int
	}
	groups := map[key][]result{}
	var keys []key
	for _, r := range rs {
		k := key{r.Problem, r.Tool, r.Steps}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.SliceStable(keys, func(a, b int) bool {
		if keys[a].problem != keys[b].problem {
			return keys[a].problem < keys[b].problem
		}
		if keys[a].tool != keys[b].tool {
			return keys[a].tool < keys[b].tool
		}
		return keys[a].steps < keys[b].steps
	})
	var b strings.Builder
	fmt.Fprintln(&b, "| problem | tool | steps | seeds | CPU s (mean) | max abs PIP error (mean over seeds) | (range) | CPU × PIP error² | max coef error / sd | CPU × coef error² | trj: largest PIP z-score |")
	fmt.Fprintln(&b, "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
	for _, k := range keys {
		g := groups[k]
		var cpu, e, e2, c, c2 float64
		z := math.Inf(-1)
		var es []float64
		for _, r := range g {
			cpu += r.CPUSeconds / float64(len(g))
			e += r.MaxAbsErr / float64(len(g))
			e2 += r.MaxAbsErr * r.MaxAbsErr / float64(len(g))
			c += r.CoefErr / float64(len(g))
			c2 += r.CoefErr * r.CoefErr / float64(len(g))
			es = append(es, r.MaxAbsErr)
			if !math.IsNaN(r.MaxZ) {
				z = math.Max(z, r.MaxZ)
			}
		}
		zs := "—"
		if k.tool == "trj" && !math.IsInf(z, -1) {
			zs = fmt.Sprintf("%.2f", z)
		}
		cs, cs2 := "—", "—"
		if !math.IsNaN(c) {
			cs, cs2 = fmt.Sprintf("%.3f", c), fmt.Sprintf("%.3g", cpu*c2)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %.2f | %.4f | %.4f–%.4f | %.3g | %s | %s | %s |\n", k.problem, k.tool, k.steps, len(g), cpu, e, slices.Min(es), slices.Max(es), cpu*e2, cs, cs2, zs)
	}
	return b.String()
}

// moveNote is a run's acceptance of each move and within-model step and
// its smallest PIP ESS over the terms that changed.
func moveNote(res *selection.Result) string {
	var b strings.Builder
	for _, m := range res.Moves {
		fmt.Fprintf(&b, ", %s %.3f", m.Move, float64(m.Accepted)/math.Max(1, float64(m.Proposed)))
	}
	fmt.Fprintf(&b, ", within %.3f", float64(res.Within.Accepted)/math.Max(1, float64(res.Within.Proposed)))
	ess := math.Inf(1)
	for _, e := range res.PIP {
		if e.Mixed && e.MCSE > 0 {
			ess = math.Min(ess, e.ESS)
		}
	}
	fmt.Fprintf(&b, ", min ESS %.0f, visited %d, built %d", ess, res.Visited, res.Built)
	return b.String()
}
