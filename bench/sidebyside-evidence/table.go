package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
)

func newCSVWriter(w io.Writer) *csv.Writer { return csv.NewWriter(w) }

func readCSV(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return csv.NewReader(f).ReadAll()
}

// printTable prints the README table of a results file: one line per
// problem, seed, system and estimate, the last run of each.
func printTable(path string) error {
	recs, err := readCSV(path)
	if err != nil {
		return err
	}
	if len(recs) < 1 {
		return fmt.Errorf("%s is empty", path)
	}
	col := map[string]int{}
	for j, h := range recs[0] {
		col[h] = j
	}
	for _, h := range csvHeader {
		if _, ok := col[h]; !ok {
			return fmt.Errorf("%s: no column %q", path, h)
		}
	}
	type key struct{ problem, system, estimate, seed string }
	last := map[key][]string{}
	var keys []key
	for _, r := range recs[1:] {
		k := key{r[col["problem"]], r[col["system"]], r[col["estimate"]], r[col["seed"]]}
		if _, ok := last[k]; !ok {
			keys = append(keys, k)
		}
		last[k] = r
	}
	order := map[string]int{"regression": 0, "robustvs": 1, "factor": 2}
	est := map[string]int{"bridge_sampler": 0, "per-model": 1, "bridge": 2, "chains": 3, "read": 4}
	sort.SliceStable(keys, func(a, b int) bool {
		ka, kb := keys[a], keys[b]
		if ka.problem != kb.problem {
			return order[ka.problem] < order[kb.problem]
		}
		if est[ka.estimate] != est[kb.estimate] {
			return est[ka.estimate] < est[kb.estimate]
		}
		sa, _ := strconv.Atoi(ka.seed)
		sb, _ := strconv.Atoi(kb.seed)
		return sa < sb
	})
	fmt.Println("| problem | seed | system (estimate) | max \\|err\\| | SE there | z there | max \\|z\\| | all within 4 SE | CPU s | CPU × Σ err² |")
	fmt.Println("| --- | ---: | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
	for _, k := range keys {
		r := last[k]
		f := func(name string) float64 { v, _ := strconv.ParseFloat(r[col[name]], 64); return v }
		within := "yes"
		if r[col["within_4se"]] != "true" {
			within = "**no**"
		}
		fmt.Printf("| %s | %s | %s (%s) | %.2g | %.2g | %+.2f | %.2f | %s | %.1f | %.3g |\n",
			k.problem, k.seed, k.system, k.estimate, f("max_abs_err"), f("se_at_max"), f("z_at_max"), f("max_abs_z"), within, f("cpu_s"), f("cpu_x_sum_sq"))
	}
	// Summary over seeds: mean CPU, mean max |err|, mean CPU × Σ err²
	// and the runs with every model within 4 SE.
	type group struct{ problem, system, estimate string }
	type agg struct {
		n, within          int
		cpu, err, cpuSumSq float64
	}
	sums := map[group]*agg{}
	var groups []group
	for _, k := range keys {
		g := group{k.problem, k.system, k.estimate}
		a, ok := sums[g]
		if !ok {
			a = &agg{}
			sums[g] = a
			groups = append(groups, g)
		}
		r := last[k]
		f := func(name string) float64 { v, _ := strconv.ParseFloat(r[col[name]], 64); return v }
		a.n++
		a.cpu += f("cpu_s")
		a.err += f("max_abs_err")
		a.cpuSumSq += f("cpu_x_sum_sq")
		if r[col["within_4se"]] == "true" {
			a.within++
		}
	}
	fmt.Println()
	fmt.Println("| problem | system (estimate) | seeds | CPU s (mean) | max \\|err\\| (mean) | CPU × Σ err² (mean) | runs all within 4 SE |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
	for _, g := range groups {
		a := sums[g]
		n := float64(a.n)
		fmt.Printf("| %s | %s (%s) | %d | %.1f | %.2g | %.3g | %d of %d |\n", g.problem, g.system, g.estimate, a.n, a.cpu/n, a.err/n, a.cpuSumSq/n, a.within, a.n)
	}
	return nil
}
