// Command pdbtable measures trj's NUTS on posteriordb's 46 reference
// posteriors and writes the gallery's table of them: each posterior's
// dimension, its check against the summary of posteriordb's reference
// draws, trj's bulk ESS per CPU-second and, where Stan was run on it (see
// stan.R), the ratio to Stan's.
//
//	go run ./bench/pdbtable -measure 'nes|blr'   # (re)measure, into trj.csv
//	go run ./bench/pdbtable -out docs/gallery/README.md
//
// A measurement runs trj's default NUTS (1000 warm-up and 1000 kept
// iterations, diagonal metric, target acceptance 0.8) as 4 chains one
// after another on one thread, as rstan's cores = 1 does, and counts the
// CPU seconds (getrusage) of the sampling phases only, as rstan's timings
// do. ESS is the least bulk ESS over the quantities of the reference draws.
// Measurements are kept in a CSV file, so that a slow posterior is
// measured once and the table is rewritten without rerunning anything.
package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"syscall"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models"
	"github.com/trjgo/trj/ppl/diag"
)

func main() {
	measure := flag.String("measure", "", "regular expression: measure trj on the posteriors it matches (by posterior name)")
	out := flag.String("out", "", "markdown file whose marked block receives the table")
	trjCSV := flag.String("trj", "bench/pdbtable/trj.csv", "CSV file of trj's measurements (read, and updated by -measure)")
	stanCSV := flag.String("stan", "bench/pdbtable/stan.csv", "CSV file of Stan's runs written by stan.R (its _ess.csv beside it)")
	refDir := flag.String("ref", "models/posteriordb/testdata/reference", "folder of the reference summaries")
	seed := flag.Uint64("seed", 1, "seed of the trj runs")
	flag.Parse()
	if err := run(*measure, *out, *trjCSV, *stanCSV, *refDir, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "pdbtable:", err)
		os.Exit(1)
	}
}

func run(measure, out, trjCSV, stanCSV, refDir string, seed uint64) error {
	rows, err := readTrj(trjCSV)
	if err != nil {
		return err
	}
	if measure != "" {
		re, err := regexp.Compile(measure)
		if err != nil {
			return fmt.Errorf("-measure: %w", err)
		}
		// One thread, as Stan's chains run with cores = 1: the CPU
		// seconds then count no parallel garbage collection either.
		runtime.GOMAXPROCS(1)
		for _, e := range posteriordbEntries() {
			if !re.MatchString(e.Posterior) {
				continue
			}
			r, err := measureOne(e, refDir, seed)
			if err != nil {
				return fmt.Errorf("%s: %w", e.Posterior, err)
			}
			fmt.Printf("%s: dim %d, ESS %.0f in %.2f CPU-s = %.1f /s, largest |z| %.2f (%s)\n",
				r.Posterior, r.Dim, r.MinESS, r.CPU, r.MinESS/r.CPU, r.MaxZ, r.Where)
			rows[r.Posterior] = r
			if err := writeTrj(trjCSV, rows); err != nil {
				return err
			}
		}
	}
	if out == "" {
		return nil
	}
	stan, err := readStan(stanCSV, refDir)
	if err != nil {
		return err
	}
	table, err := renderTable(rows, stan)
	if err != nil {
		return err
	}
	return replaceBlock(out, table)
}

// posteriordbEntries returns the gallery's posteriordb posteriors.
func posteriordbEntries() []models.Entry {
	var out []models.Entry
	for _, e := range models.All() {
		if e.Posterior != "" {
			out = append(out, e)
		}
	}
	return out
}

// trjRow is one posterior's measurement.
type trjRow struct {
	Posterior string
	Dim       int
	MinESS    float64 // least bulk ESS over the reference's quantities
	CPU       float64 // CPU seconds of the 4 sampling phases
	MaxZ      float64 // largest |z| against the reference summary
	Where     string  // the quantity and statistic of MaxZ
	Grads     int     // gradients of the sampling phases
	Divergent int
}

// refSummary is the part of a reference summary file (the format of
// models/posteriordb's TestGenerateReferenceSummaries) the table uses.
type refSummary struct {
	Params []struct {
		Name     string  `json:"name"`
		Mean     float64 `json:"mean"`
		MeanMCSE float64 `json:"mean_mcse"`
		SD       float64 `json:"sd"`
		SDMCSE   float64 `json:"sd_mcse"`
		Q05      float64 `json:"q05"`
		Q05MCSE  float64 `json:"q05_mcse"`
		Q95      float64 `json:"q95"`
		Q95MCSE  float64 `json:"q95_mcse"`
	} `json:"params"`
}

func readRef(dir, posterior string) (*refSummary, error) {
	raw, err := os.ReadFile(filepath.Join(dir, posterior+".json"))
	if err != nil {
		return nil, err
	}
	var s refSummary
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", posterior, err)
	}
	if len(s.Params) == 0 {
		return nil, fmt.Errorf("%s: the reference summary has no parameters", posterior)
	}
	return &s, nil
}

// cpuSeconds is the process's user plus system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// measureOne runs the 4 chains of e's posterior one after another, each
// as its shard of one 4-chain run (so the chains are those of trj sample
// with the same seed), and checks the draws against the reference.
func measureOne(e models.Entry, refDir string, seed uint64) (trjRow, error) {
	ref, err := readRef(refDir, e.Posterior)
	if err != nil {
		return trjRow{}, err
	}
	m, err := e.New("")
	if err != nil {
		return trjRow{}, err
	}
	names := m.ParamNames()
	idx := map[string]int{}
	for i, n := range names {
		idx[n] = i
	}
	for _, p := range ref.Params {
		if _, ok := idx[p.Name]; !ok {
			return trjRow{}, fmt.Errorf("the model has no quantity %s of the reference", p.Name)
		}
	}
	const chains, warmup = 4, 1000
	row := trjRow{Posterior: e.Posterior, Dim: m.Dim()}
	cols := make([][][]float64, len(names))
	for c := 0; c < chains; c++ {
		cm := m.Clone()
		var mid float64
		start := cpuSeconds()
		res, err := kernels.Sample(context.Background(), func(int) (kernels.Target, error) { return cm, nil },
			&kernels.SampleSettings{Chains: chains, Shard: []int{c}, Seed: seed, Warmup: warmup,
				Progress: func(p kernels.Progress) {
					if p.Done == warmup {
						mid = cpuSeconds()
					}
				}})
		if err != nil {
			return trjRow{}, err
		}
		end := cpuSeconds()
		if mid == 0 {
			mid = start
		}
		row.CPU += end - mid
		ch := res.Chains[0]
		row.Grads += ch.SampleGradEvals
		x := make([]float64, len(names))
		for j := range cols {
			cols[j] = append(cols[j], make([]float64, 0, len(ch.Info)))
		}
		for i, info := range ch.Info {
			if info.Divergent {
				row.Divergent++
			}
			if err := cm.Constrain(ch.Draw(i), x); err != nil {
				return trjRow{}, err
			}
			for j, v := range x {
				cols[j][c] = append(cols[j][c], v)
			}
		}
	}
	row.MinESS = math.Inf(1)
	for _, p := range ref.Params {
		x := cols[idx[p.Name]]
		ess, err := diag.ESSBulk(x)
		if err != nil {
			return trjRow{}, fmt.Errorf("%s: %w", p.Name, err)
		}
		row.MinESS = math.Min(row.MinESS, ess)
		zs, err := zScores(x, p.Mean, p.MeanMCSE, p.SD, p.SDMCSE, p.Q05, p.Q05MCSE, p.Q95, p.Q95MCSE)
		if err != nil {
			return trjRow{}, fmt.Errorf("%s: %w", p.Name, err)
		}
		for what, z := range zs {
			if math.Abs(z) > row.MaxZ || math.IsNaN(z) {
				row.MaxZ, row.Where = math.Abs(z), p.Name+" "+what
			}
		}
	}
	return row, nil
}

// zScores standardises the differences of the chains' mean, sd and 5 %
// and 95 % quantiles from the reference's by both sides' Monte Carlo
// standard errors, as models/posteriordb's TestReference does (the sd's
// MCSE by the delta method from the MCSE of the mean of (x − x̄)²). The
// quantiles are skipped when the reference has none.
func zScores(x [][]float64, mean, meanSE, sd, sdSE, q05, q05SE, q95, q95SE float64) (map[string]float64, error) {
	var all []float64
	for _, c := range x {
		all = append(all, c...)
	}
	m, s := stat.MeanStdDev(all, nil)
	mSE, err := diag.MCSEMean(x)
	if err != nil {
		return nil, err
	}
	sq := make([][]float64, len(x))
	for i, c := range x {
		for _, v := range c {
			sq[i] = append(sq[i], (v-m)*(v-m))
		}
	}
	vSE, err := diag.MCSEMean(sq)
	if err != nil {
		return nil, err
	}
	z := map[string]float64{
		"mean": (m - mean) / math.Hypot(mSE, meanSE),
		"sd":   (s - sd) / math.Hypot(vSE/(2*s), sdSE),
	}
	if q05SE > 0 {
		for _, q := range []struct {
			what       string
			p, ref, se float64
		}{{"q05", 0.05, q05, q05SE}, {"q95", 0.95, q95, q95SE}} {
			v, err := diag.Quantile(x, q.p)
			if err != nil {
				return nil, err
			}
			se, err := diag.MCSEQuantile(x, q.p)
			if err != nil {
				return nil, err
			}
			z[q.what] = (v - q.ref) / math.Hypot(se, q.se)
		}
	}
	return z, nil
}

var trjHeader = []string{"posterior", "dim", "min_ess_bulk", "cpu_sample_s", "max_abs_z", "where", "grads", "divergent"}

func readTrj(path string) (map[string]trjRow, error) {
	rows := map[string]trjRow{}
	recs, err := readCSV(path)
	if errors.Is(err, os.ErrNotExist) {
		return rows, nil
	}
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if len(r) != len(trjHeader) {
			return nil, fmt.Errorf("%s: a row of %d fields, want %d", path, len(r), len(trjHeader))
		}
		var row trjRow
		var errs [6]error
		row.Posterior, row.Where = r[0], r[5]
		row.Dim, errs[0] = strconv.Atoi(r[1])
		row.MinESS, errs[1] = strconv.ParseFloat(r[2], 64)
		row.CPU, errs[2] = strconv.ParseFloat(r[3], 64)
		row.MaxZ, errs[3] = strconv.ParseFloat(r[4], 64)
		row.Grads, errs[4] = strconv.Atoi(r[6])
		row.Divergent, errs[5] = strconv.Atoi(r[7])
		if err := errors.Join(errs[:]...); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, r[0], err)
		}
		rows[row.Posterior] = row
	}
	return rows, nil
}

func writeTrj(path string, rows map[string]trjRow) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(trjHeader)
	for _, e := range posteriordbEntries() {
		r, ok := rows[e.Posterior]
		if !ok {
			continue
		}
		_ = w.Write([]string{r.Posterior, strconv.Itoa(r.Dim), fmt.Sprintf("%.1f", r.MinESS), fmt.Sprintf("%.4f", r.CPU),
			fmt.Sprintf("%.2f", r.MaxZ), r.Where, strconv.Itoa(r.Grads), strconv.Itoa(r.Divergent)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readCSV returns a CSV file's records after its header.
func readCSV(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no header", path)
	}
	return recs[1:], nil
}

// stanRow is Stan's figure for one posterior.
type stanRow struct {
	ESSPerCPU float64
	// MinESS is the least bulk ESS over the reference's quantities.
	MinESS float64
	// GradMicros is the sampling phases' CPU microseconds per gradient.
	GradMicros float64
}

// readStan reads stan.R's rows and, where it has them, the per-quantity
// ESS beside them, taking the least over the reference's quantities; the
// row's own least ESS (over the parameters block) otherwise.
func readStan(path, refDir string) (map[string]stanRow, error) {
	out := map[string]stanRow{}
	recs, err := readCSV(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	perQ := map[string]map[string]float64{}
	long, err := readCSV(path[:len(path)-len(filepath.Ext(path))] + "_ess.csv")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, r := range long {
		if len(r) != 3 {
			return nil, fmt.Errorf("%s: a row of %d fields, want 3", path, len(r))
		}
		// R writes NA for a quantity without an ESS (a generated quantity
		// constant within chains); only the reference's quantities count.
		v := math.NaN()
		if r[2] != "NA" {
			var err error
			if v, err = strconv.ParseFloat(r[2], 64); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		if perQ[r[0]] == nil {
			perQ[r[0]] = map[string]float64{}
		}
		perQ[r[0]][r[1]] = v
	}
	for _, r := range recs {
		if len(r) < 7 {
			return nil, fmt.Errorf("%s: a row of %d fields, want 8", path, len(r))
		}
		minESS, err1 := strconv.ParseFloat(r[1], 64)
		cpu, err2 := strconv.ParseFloat(r[3], 64)
		grads, err3 := strconv.ParseFloat(r[6], 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, r[0], err)
		}
		if q := perQ[r[0]]; q != nil {
			ref, err := readRef(refDir, r[0])
			if err != nil {
				return nil, err
			}
			minESS = math.Inf(1)
			for _, p := range ref.Params {
				v, ok := q[p.Name]
				if !ok || math.IsNaN(v) {
					return nil, fmt.Errorf("%s: Stan's run of %s has no ESS of %s", path, r[0], p.Name)
				}
				minESS = math.Min(minESS, v)
			}
		}
		out[r[0]] = stanRow{ESSPerCPU: minESS / cpu, MinESS: minESS, GradMicros: 1e6 * cpu / grads}
	}
	return out, nil
}

// The block of the markdown file that renderTable's output replaces.
const (
	beginMarker = "<!-- pdbtable begin: generated by go run ./bench/pdbtable -out docs/gallery/README.md -->"
	endMarker   = "<!-- pdbtable end -->"
)

// replaceBlock rewrites the marked block of the file at path.
func replaceBlock(path, block string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(raw)
	re := regexp.MustCompile(`(?s)` + regexp.QuoteMeta(beginMarker) + `.*?` + regexp.QuoteMeta(endMarker))
	if !re.MatchString(s) {
		return fmt.Errorf("%s: no block between %q and %q", path, beginMarker, endMarker)
	}
	s = re.ReplaceAllLiteralString(s, beginMarker+"\n"+block+endMarker)
	return os.WriteFile(path, []byte(s), 0o644)
}

// writeLine writes to w; the caller's buffer cannot fail.
func writeLine(w io.Writer, format string, a ...any) { _, _ = fmt.Fprintf(w, format, a...) }

// dimensions returns each posteriordb entry's dimension, built on its
// embedded data.
func dimensions() (map[string]int, error) {
	out := map[string]int{}
	for _, e := range posteriordbEntries() {
		m, err := e.New("")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Posterior, err)
		}
		out[e.Posterior] = m.Dim()
	}
	return out, nil
}
