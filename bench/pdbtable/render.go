package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// minStanESS is the least bulk ESS of 4 chains under which Stan's run
// enters no ratio: Vehtari et al. (2021) ask for 100 per chain before
// ESS and R-hat estimates are trusted, and a posterior whose chains sit
// in different modes (Stan's random inits on the multimodal HMM drive and
// the Lotka–Volterra ODE) falls far below it.
const minStanESS = 400

// renderTable returns the markdown table of the 46 posteriors and its
// summary lines. Rows follow posterior names; a posterior not measured
// yet shows "—", never a figure.
func renderTable(rows map[string]trjRow, stan map[string]stanRow) (string, error) {
	dims, err := dimensions()
	if err != nil {
		return "", err
	}
	entries := posteriordbEntries()
	sort.Slice(entries, func(i, j int) bool { return entries[i].Posterior < entries[j].Posterior })
	var b strings.Builder
	writeLine(&b, "| posterior | dim | reference check | ESS/CPU-s | Stan ESS/CPU-s | trj ÷ Stan | µs/gradient trj, Stan |\n")
	writeLine(&b, "| --- | ---: | --- | ---: | ---: | ---: | ---: |\n")
	var ratios []float64
	pass, measured, behind, unreliable := 0, 0, 0, 0
	for _, e := range entries {
		if r, ok := rows[e.Posterior]; ok && r.Dim != dims[e.Posterior] {
			return "", fmt.Errorf("%s: measured with dimension %d, the model has %d: remeasure it", e.Posterior, r.Dim, dims[e.Posterior])
		}
		name := fmt.Sprintf("[%s](%s.md)", e.Posterior, e.Name)
		if e.Name != e.Posterior {
			name += fmt.Sprintf(" (`%s`)", e.Name)
		}
		check, ess, stanESS, ratio, grad := "—", "—", "—", "—", "—"
		if r, ok := rows[e.Posterior]; ok {
			measured++
			if r.MaxZ <= 4 {
				pass++
				check = fmt.Sprintf("pass (largest \\|z\\| %.2f)", r.MaxZ)
			} else {
				check = fmt.Sprintf("**off**: \\|z\\| %.2f (%s)", r.MaxZ, r.Where)
			}
			ess = sig3(r.MinESS / r.CPU)
			grad = sig3(1e6 * r.CPU / float64(r.Grads))
			if s, ok := stan[e.Posterior]; ok {
				q := r.MinESS / r.CPU / s.ESSPerCPU
				stanESS, ratio = sig3(s.ESSPerCPU), fmt.Sprintf("%.2f", q)
				if s.MinESS < minStanESS {
					// Too few effective draws for Stan's ESS (or its
					// R-hat) to be an estimate: the figure says its run
					// did not mix, not how fast it is.
					unreliable++
					ratio = fmt.Sprintf("— (Stan's ESS %s)", sig3(s.MinESS))
				} else {
					ratios = append(ratios, q)
					if q < 1 {
						behind++
					}
				}
				grad += ", " + sig3(s.GradMicros)
			}
		}
		writeLine(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", name, dims[e.Posterior], check, ess, stanESS, ratio, grad)
	}
	writeLine(&b, "\n%d of %d posteriors measured; %d of them pass the reference check (|z| ≤ 4 on every mean, sd and 5 %%/95 %% quantile).", measured, len(entries), pass)
	if len(ratios) > 0 {
		sort.Float64s(ratios)
		writeLine(&b, " Stan run on %d", len(ratios)+unreliable)
		if unreliable > 0 {
			writeLine(&b, ", %d of them left out of the ratios (Stan's least bulk ESS under %d)", unreliable, minStanESS)
		}
		writeLine(&b, ": median ratio %.2f (range %.2f–%.2f), %d behind Stan.", median(ratios), ratios[0], ratios[len(ratios)-1], behind)
	}
	writeLine(&b, "\n")
	return b.String(), nil
}

// median of sorted values.
func median(x []float64) float64 {
	n := len(x)
	if n%2 == 1 {
		return x[n/2]
	}
	return (x[n/2-1] + x[n/2]) / 2
}

// sig3 prints v with three significant digits, without exponents.
func sig3(v float64) string {
	if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprint(v)
	}
	d := 2 - int(math.Floor(math.Log10(v)))
	if d < 0 {
		d = 0
	}
	return fmt.Sprintf("%.*f", d, v)
}
