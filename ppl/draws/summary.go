package draws

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/ppl/diag"
)

// Stats summarizes the draws of one column.
//
// Mean, SD and the quantiles use the N finite draws. MCSE (of the mean),
// ESSBulk, ESSTail and Rhat are NaN where package diag leaves them undefined:
// for constant columns, chains too short to split, and columns with any
// non-finite draw (such as parameters absent from some models of a
// transdimensional run, stored as NaN), whose draws are no longer one
// sequence per chain.
type Stats struct {
	Name          string
	N             int // finite draws
	Mean, MCSE    float64
	SD            float64
	Q5, Q50, Q95  float64
	ESSBulk       float64
	ESSTail       float64
	Rhat          float64 // max of rank-normalized bulk and tail split-R̂
	DiagnosticErr error   // why the MCSE, ESS or R̂ are NaN, if they are
}

// ModelStats is the posterior frequency of one model in a transdimensional
// run.
type ModelStats struct {
	Model int
	Count int     // draws in the model
	Prob  float64 // Count / all draws
	// MCSE is the Monte Carlo standard error of Prob, √(Prob(1−Prob)/ESS)
	// with ESS that of the model's indicator; NaN when the indicator is
	// constant (the model was always or never visited).
	MCSE float64
}

// Summary is the output of Summarize.
type Summary struct {
	Chains int
	Draws  int // per chain
	Stats  []Stats
	Models []ModelStats // transdimensional runs only, by increasing model index
}

// Summarize computes Stats for the named columns of d (diagnostics or
// parameters) or, when no names are given, for lp__ (if present) and every
// parameter. All chains must have the same number of draws, at least one.
func Summarize(d *Draws, names ...string) (*Summary, error) {
	if d == nil {
		return nil, errors.New("draws: no draws to summarize")
	}
	n := d.Len(0)
	for c := range d.Chains() {
		if d.Len(c) != n {
			return nil, fmt.Errorf("draws: chain %d has %d draws, chain 0 has %d; summaries need equal chains", c, d.Len(c), n)
		}
	}
	if n == 0 {
		return nil, errors.New("draws: no draws to summarize")
	}
	if len(names) == 0 {
		if slices.Contains(d.layout.Diagnostics, LP) {
			names = append(names, LP)
		}
		names = append(names, d.layout.Params...)
	}
	s := &Summary{Chains: d.Chains(), Draws: n}
	for _, name := range names {
		x, err := d.Column(name)
		if err != nil {
			return nil, err
		}
		s.Stats = append(s.Stats, columnStats(name, x))
	}
	if d.layout.Transdimensional {
		s.Models = modelStats(d)
	}
	return s, nil
}

func columnStats(name string, x [][]float64) Stats {
	st := Stats{Name: name}
	var finite []float64
	for _, c := range x {
		for _, v := range c {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				finite = append(finite, v)
			}
		}
	}
	st.N = len(finite)
	nan := math.NaN()
	st.Mean, st.SD, st.Q5, st.Q50, st.Q95 = nan, nan, nan, nan, nan
	st.MCSE, st.ESSBulk, st.ESSTail, st.Rhat = nan, nan, nan, nan
	if st.N == 0 {
		st.DiagnosticErr = errors.New("no finite draws")
		return st
	}
	slices.Sort(finite)
	pool := [][]float64{finite}
	st.Mean, st.SD = stat.MeanStdDev(finite, nil) // SD is NaN for one draw
	st.Q5, _ = diag.Quantile(pool, 0.05)
	st.Q50, _ = diag.Quantile(pool, 0.5)
	st.Q95, _ = diag.Quantile(pool, 0.95)
	if st.N < len(x)*len(x[0]) {
		st.DiagnosticErr = fmt.Errorf("%d of %d draws are not finite", len(x)*len(x[0])-st.N, len(x)*len(x[0]))
		return st
	}
	var err error
	if st.MCSE, err = diag.MCSEMean(x); err != nil {
		st.DiagnosticErr = err
		return st
	}
	st.ESSBulk, _ = diag.ESSBulk(x)
	st.ESSTail, _ = diag.ESSTail(x)
	if st.Rhat, err = diag.Rhat(x); err != nil {
		st.DiagnosticErr = err
	}
	return st
}

func modelStats(d *Draws) []ModelStats {
	models := d.Models()
	counts := make(map[int]int)
	total := 0
	for _, c := range models {
		for _, k := range c {
			counts[k]++
			total++
		}
	}
	keys := make([]int, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]ModelStats, len(keys))
	for i, k := range keys {
		p := float64(counts[k]) / float64(total)
		ind := make([][]float64, len(models))
		for c, chain := range models {
			ind[c] = make([]float64, len(chain))
			for j, m := range chain {
				if m == k {
					ind[c][j] = 1
				}
			}
		}
		mcse := math.NaN()
		if ess, err := diag.ESS(ind); err == nil {
			mcse = math.Sqrt(p * (1 - p) / ess)
		}
		out[i] = ModelStats{Model: k, Count: counts[k], Prob: p, MCSE: mcse}
	}
	return out
}

// WriteTable writes s as a fixed-width table in the style of CmdStan's
// stansummary, followed by the model frequencies of a transdimensional run.
func (s *Summary) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d chains: each with %d draws; %d draws in all.\n\n", s.Chains, s.Draws, s.Chains*s.Draws)
	width := len("name")
	for _, st := range s.Stats {
		width = max(width, len(st.Name))
	}
	cols := []string{"Mean", "MCSE", "StdDev", "5%", "50%", "95%", "ESS_bulk", "ESS_tail", "R_hat"}
	fmt.Fprintf(&b, "%-*s", width, "")
	for _, c := range cols {
		fmt.Fprintf(&b, " %9s", c)
	}
	b.WriteByte('\n')
	for _, st := range s.Stats {
		fmt.Fprintf(&b, "%-*s", width, st.Name)
		for _, v := range []float64{st.Mean, st.MCSE, st.SD, st.Q5, st.Q50, st.Q95} {
			fmt.Fprintf(&b, " %9s", sigFigs(v, 3))
		}
		fmt.Fprintf(&b, " %9s %9s %9s\n", fixed(st.ESSBulk, 0), fixed(st.ESSTail, 0), fixed(st.Rhat, 3))
	}
	if len(s.Models) > 0 {
		fmt.Fprintf(&b, "\n%-8s %9s %9s %9s\n", "model__", "Draws", "Prob", "MCSE")
		for _, m := range s.Models {
			fmt.Fprintf(&b, "%-8d %9d %9s %9s\n", m.Model, m.Count, fixed(m.Prob, 4), sigFigs(m.MCSE, 2))
		}
	}
	b.WriteString("\nESS_bulk and ESS_tail are the rank-normalized bulk and tail effective sample sizes, MCSE the\n" +
		"Monte Carlo standard error of the mean, and R_hat the larger of the rank-normalized bulk and\n" +
		"folded split-R̂ (Vehtari et al. 2021); R_hat > 1.01 means the chains have not mixed.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// sigFigs formats v with n significant figures, in plain decimals when that
// is short and in exponent form otherwise.
func sigFigs(v float64, n int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strings.ToLower(strconv.FormatFloat(v, 'g', -1, 64))
	}
	if v == 0 {
		return "0"
	}
	e := int(math.Floor(math.Log10(math.Abs(v))))
	if e < -3 || e >= 6 {
		return strconv.FormatFloat(v, 'e', n-1, 64)
	}
	return strconv.FormatFloat(v, 'f', max(n-1-e, 0), 64)
}

func fixed(v float64, decimals int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strings.ToLower(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}
