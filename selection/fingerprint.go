package selection

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/ppl"
)

// fingerprint identifies a run (Result.Fingerprint): two runs of the same
// space and settings (defaults applied) have the same one, and runs that
// differ in the value of any setting or in the space (names, dimensions,
// model prior, and the values of the models without and with every term
// at fixed points, which tell different data apart; above 2,000 terms,
// of consecutive blocks of 100 terms instead of every term) have
// different ones.
// Every setting is hashed by value through reflection (runs.Hasher),
// except what cannot change the computation: Shard, DrawsDir, every field
// named Progress and flows.TrainOptions.Cache. A family of one's own's
// functions are known only as present. It also returns the settings as
// runs.Describe lists them (Result.Settings), for Merge to name the one
// that differs.
func fingerprint(sp *ppl.SelectionSpace, s *Settings) (string, map[string]string) {
	w := runs.NewHasher("trj select v1", fingerprintRules)
	w.Value("Settings", reflect.ValueOf(s).Elem(), 0)
	sp = sp.Clone() // the run's count of builds stays its own
	fmt.Fprintln(w, sp.Names(), sp.P(), sp.Always(), sp.Shared(), sp.Prior().String())
	all := make([]int, sp.P())
	for i := range all {
		all[i] = i
	}
	none, _ := ppl.NewTerms(sp.P())
	first, _ := ppl.NewTerms(sp.P(), 0)
	models := []ppl.Terms{none, first}
	if sp.P() <= fingerprintFullP {
		full, _ := ppl.NewTerms(sp.P(), all...)
		models = append(models, full)
	} else {
		// The model of every term would hold the whole design and, for a
		// g-prior, factor its P × P Gram matrix (at P = 3,000, n = 5,000,
		// most of a default exact run's CPU and memory): consecutive
		// blocks of terms cover every column instead, each model small.
		fmt.Fprintln(w, "blocks of", fingerprintBlock)
		for lo := 0; lo < sp.P(); lo += fingerprintBlock {
			b, _ := ppl.NewTerms(sp.P(), all[lo:min(lo+fingerprintBlock, sp.P())]...)
			models = append(models, b)
		}
	}
	rng := runs.Stream(0, "select/fingerprint", 0)
	for i, t := range models {
		lp, _ := sp.LogPrior(t)
		// Values to 12 digits: the same on every machine a shard may run
		// on (fused multiply-adds can change the last bits).
		fmt.Fprintln(w, t.Indices(), strconv.FormatFloat(lp, 'g', 12, 64))
		if i == 1 && sp.P() > 1 {
			continue // the prior only: the later models cover every column
		}
		m, err := sp.Build(t)
		if err != nil {
			fmt.Fprintln(w, "no model:", err)
			continue
		}
		fmt.Fprintln(w, m.ParamNames())
		x := make([]float64, m.Dim())
		for range 3 {
			for i := range x {
				x[i] = 0.5 * rng.NormFloat64()
			}
			v, err := m.LogDensity(x)
			fmt.Fprintln(w, strconv.FormatFloat(v, 'g', 12, 64), err != nil)
			hashQuantities(w, sp, t, x)
		}
	}
	return w.Sum(), runs.Describe(s, 2, fingerprintRules)
}

// fingerprintFullP is the largest number of terms whose model of every
// term the fingerprint evaluates; above it, the models of consecutive
// blocks of fingerprintBlock terms.
const (
	fingerprintFullP = 2000
	fingerprintBlock = 100
)

// hashQuantities writes the space's quantities (ppl.WithQuantities) at
// model t's point x, so that runs predicting at different new data have
// different fingerprints; a space without quantities writes nothing (its
// fingerprint is what it was before quantities existed).
func hashQuantities(w *runs.Hasher, sp *ppl.SelectionSpace, t ppl.Terms, x []float64) {
	names, f := sp.Quantities()
	if f == nil {
		return
	}
	q := make([]float64, len(names))
	err := f(t, x, q)
	fmt.Fprint(w, "quantities ", names, err != nil)
	for _, v := range q {
		fmt.Fprint(w, " ", strconv.FormatFloat(v, 'g', 12, 64))
	}
	fmt.Fprintln(w)
}

// fingerprintRules leave out of the fingerprint what cannot change the
// computation.
var fingerprintRules = &runs.HashRules{Skip: func(t reflect.Type, name string) bool {
	switch {
	case name == "Progress", name == "Cache" && t == reflect.TypeFor[flows.TrainOptions]():
		return true
	case t == reflect.TypeFor[Settings]():
		return name == "Shard" || name == "DrawsDir" || name == "record"
	}
	return false
}}
