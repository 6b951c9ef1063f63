// Command nutsdiag shows what trj's NUTS warm-up adapted on a posteriordb
// posterior and what it bought, beside Stan's figures from stan_diag.R: per
// chain the adapted step size and diagonal metric, the mean tree depth,
// leapfrog steps per draw and acceptance statistic; per seed each
// reference quantity's bulk ESS and the least bulk ESS per gradient of the
// sampling phase (the figure that decides ESS per CPU-second when both
// sides pay the same per gradient).
//
//	go run ./bench/nutsdiag -posterior garch-garch11 -seeds 1,2,3
//
// The run is that of bench/pdbtable: default NUTS, 4 chains of 1000
// warm-up and 1000 kept iterations. It also prints the posterior variances
// of the unconstrained coordinates (pooled over seeds and chains), which
// the adapted metric estimates.
package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models"
	"github.com/trjgo/trj/ppl/diag"
)

func main() {
	posterior := flag.String("posterior", "garch-garch11", "posteriordb name of a gallery posterior")
	seeds := flag.String("seeds", "1,2,3", "comma-separated seeds, one 4-chain run each")
	chains := flag.Int("chains", 4, "chains per run")
	quiet := flag.Bool("q", false, "print the per-seed lines only")
	drawsCSV := flag.String("draws", "", "CSV file to receive the reference quantities' kept draws (seed, chain, then one column each), to check the ESS with rstan::ess_bulk")
	flag.Parse()
	if err := run(*posterior, *seeds, *chains, *quiet, *drawsCSV); err != nil {
		fmt.Fprintln(os.Stderr, "nutsdiag:", err)
		os.Exit(1)
	}
}

func run(posterior, seedList string, chains int, quiet bool, drawsCSV string) error {
	e, ok := models.Lookup(posterior)
	if !ok {
		return fmt.Errorf("no gallery model %q", posterior)
	}
	m, err := e.New("")
	if err != nil {
		return err
	}
	names := m.ParamNames()
	ref := referenceQuantities(e.Posterior, names)
	dim := m.Dim()
	pooled := make([][]float64, dim)
	var dump *csv.Writer
	if drawsCSV != "" {
		f, err := os.Create(drawsCSV)
		if err != nil {
			return err
		}
		defer f.Close()
		dump = csv.NewWriter(f)
		defer dump.Flush()
		head := []string{"seed", "chain"}
		for _, j := range ref {
			head = append(head, names[j])
		}
		_ = dump.Write(head)
	}
	var sumRatio, sumRatio2 float64
	var nSeeds int
	for _, f := range strings.Split(seedList, ",") {
		seed, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return fmt.Errorf("-seeds: %w", err)
		}
		res, err := kernels.Sample(context.Background(), func(int) (kernels.Target, error) { return m.Clone(), nil },
			&kernels.SampleSettings{Chains: chains, Seed: seed})
		if err != nil {
			return err
		}
		cols := make([][][]float64, len(names))
		grads, warmGrads := 0, 0
		x := make([]float64, len(names))
		for _, ch := range res.Chains {
			grads += ch.SampleGradEvals
			warmGrads += ch.WarmupGradEvals
			var depth, leap, acc float64
			div := 0
			for j := range cols {
				cols[j] = append(cols[j], nil)
			}
			for i, info := range ch.Info {
				depth += float64(info.TreeDepth)
				leap += float64(info.NumLeapfrog)
				acc += info.AcceptStat
				if info.Divergent {
					div++
				}
				u := ch.Draw(i)
				for j, v := range u {
					pooled[j] = append(pooled[j], v)
				}
				if err := m.Constrain(u, x); err != nil {
					return err
				}
				for j, v := range x {
					cols[j][ch.Chain] = append(cols[j][ch.Chain], v)
				}
				if dump != nil {
					rec := []string{strconv.FormatUint(seed, 10), strconv.Itoa(ch.Chain + 1)}
					for _, j := range ref {
						rec = append(rec, strconv.FormatFloat(x[j], 'g', 17, 64))
					}
					_ = dump.Write(rec)
				}
			}
			n := float64(len(ch.Info))
			if !quiet {
				fmt.Printf("trj seed %d chain %d: eps %.4f depth %.3f leapfrog %.2f accept %.3f div %d metric %s\n",
					seed, ch.Chain+1, ch.StepSize, depth/n, leap/n, acc/n, div, fmtSlice(ch.Metric.InvMassDiag()))
			}
		}
		minESS, worst := math.Inf(1), ""
		var parts []string
		for _, j := range ref {
			ess, err := diag.ESSBulk(cols[j])
			if err != nil {
				return fmt.Errorf("%s: %w", names[j], err)
			}
			parts = append(parts, fmt.Sprintf("%s %.0f", names[j], ess))
			if ess < minESS {
				minESS, worst = ess, names[j]
			}
		}
		r := minESS / float64(grads)
		sumRatio += r
		sumRatio2 += r * r
		nSeeds++
		fmt.Printf("trj seed %d: warm-up grads %d, grads %d min ESS %.1f (%s) ESS/grad %.5f ; %s\n",
			seed, warmGrads, grads, minESS, worst, r, strings.Join(parts, ", "))
	}
	mean := sumRatio / float64(nSeeds)
	sd := math.Sqrt(math.Max(0, sumRatio2/float64(nSeeds)-mean*mean))
	fmt.Printf("trj %s: mean ESS/grad %.5f (sd over %d seeds %.5f)\n", posterior, mean, nSeeds, sd)
	vars := make([]float64, dim)
	for j, v := range pooled {
		vars[j] = stat.Variance(v, nil)
	}
	fmt.Printf("unconstrained posterior variances: %s\n", fmtSlice(vars))
	return nil
}

// referenceQuantities returns the indices of names that posteriordb's
// reference draws hold, as bench/pdbtable takes its least ESS over them; all
// of names when the reference summary cannot be read.
func referenceQuantities(posterior string, names []string) []int {
	idx := map[string]int{}
	for i, n := range names {
		idx[n] = i
	}
	var out []int
	if refNames, err := readRefNames(posterior); err == nil {
		for _, n := range refNames {
			if i, ok := idx[n]; ok {
				out = append(out, i)
			}
		}
	}
	if len(out) == 0 {
		for i := range names {
			out = append(out, i)
		}
	}
	return out
}

func fmtSlice(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'g', 6, 64)
	}
	return strings.Join(s, ", ")
}

// readRefNames returns the quantities of posterior's reference summary in
// models/posteriordb (run from the module's root).
func readRefNames(posterior string) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join("models", "posteriordb", "testdata", "reference", posterior+".json"))
	if err != nil {
		return nil, err
	}
	var s struct {
		Params []struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", posterior, err)
	}
	out := make([]string, len(s.Params))
	for i, p := range s.Params {
		out[i] = p.Name
	}
	return out, nil
}
