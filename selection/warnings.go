package selection

import (
	"fmt"
	"math"
	"strings"
)

// Thresholds of the run-longer warning (Vehtari et al. 2021's advice).
const (
	warnRhat = 1.05
	warnESS  = 100
	// warnNames bounds the terms a warning names.
	warnNames = 10
)

// setWarnings sets r.Warnings from the PIPs and coefficients: a term whose
// chains moved but whose R̂ exceeds 1.05 (or cannot be computed) or whose
// ESS is under 100 is not estimated well enough to read; the cure is
// more steps.
func (r *Result) setWarnings() {
	r.Warnings = nil
	if r.Steps == 0 {
		return
	}
	var bad []string
	for j, name := range r.Names {
		if j < len(r.PIP) && r.PIP[j].Mixed && poorlyMixed(r.PIP[j].Rhat, r.PIP[j].ESS) {
			bad = append(bad, name)
			continue
		}
		if j < len(r.Coefficients) {
			c := r.Coefficients[j]
			if c.SD > 0 && poorlyMixed(float64(c.MeanRhat), float64(c.MeanESS)) {
				bad = append(bad, name)
			}
		}
	}
	if len(bad) == 0 {
		return
	}
	list := strings.Join(bad[:min(len(bad), warnNames)], ", ")
	if len(bad) > warnNames {
		list += fmt.Sprintf(" and %d more", len(bad)-warnNames)
	}
	r.Warnings = append(r.Warnings, fmt.Sprintf(
		"the chains have not converged for %d term(s) (R̂ > %.2f or ESS < %d for the PIP or coefficient): %s; run longer (-steps)",
		len(bad), warnRhat, warnESS, list))
}

// poorlyMixed reports R̂ above the threshold (or not computable) or an ESS
// below it (or not computable).
func poorlyMixed(rhat, ess float64) bool {
	return !(rhat <= warnRhat) || !(ess >= warnESS) || math.IsNaN(ess)
}
