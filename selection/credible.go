package selection

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
)

// Defaults of the credible sets (Settings.CredibleLevel, Settings.Purity):
// SuSiE's coverage and minimum absolute correlation.
const (
	DefaultCredibleLevel = 0.95
	DefaultPurity        = 0.5
)

// CredibleSet is one effect's credible set: the smallest set of terms,
// among the near-copies of a lead term, that the model holds at least one
// of with posterior probability Level or more. It is what a geneticist
// fine-mapping a locus reads: one set per signal, its size the
// resolution (one term: the causal one found; many: the data cannot tell
// them apart).
type CredibleSet struct {
	// Lead is the set's term of largest PIP; Terms and Indices its terms,
	// largest PIP first.
	Lead    string   `json:"lead"`
	Terms   []string `json:"terms"`
	Indices []int    `json:"indices"`
	// Coverage is P(the model holds at least one of Terms) ± MCSE, from
	// the kept steps.
	Coverage pipeline.Estimate `json:"coverage"`
	// Purity is the smallest absolute correlation between two of its
	// terms in the data (1 for a set of one).
	Purity float64 `json:"purity"`
	// Effects is the sum of its terms' PIPs: the expected number of its
	// terms in the model (near 1 for one signal carried by any one of
	// near-copies).
	Effects float64 `json:"effects"`
}

// credibleLeads bounds the lead terms tried: terms of PIP below 1% start
// no set.
const credibleLeadPIP = 0.01

// credibleSets returns the run's credible sets, leads in decreasing PIP
// (the Rao-Blackwellised ones where the space has exact evidences): each
// lead gathers the terms not yet in a set whose absolute correlation with
// it is at least purity, and the set is the smallest prefix of them, by
// decreasing PIP, whose coverage reaches level; only its terms are then
// spent. A lead whose whole group falls short starts no set. Without term correlations
// (ppl.WithTermCorrelation) there are none.
func credibleSets(sp *ppl.SelectionSpace, r *Result, done []*selChain, lens []int, level, purity float64) []CredibleSet {
	if _, ok := sp.TermCorrelation(0, 0); !ok || len(done) == 0 {
		return nil
	}
	pip := make([]float64, len(r.PIP))
	for j, e := range r.PIP {
		pip[j] = e.P
	}
	order := make([]int, len(pip))
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool { return pip[order[a]] > pip[order[b]] })
	// Every distinct model with its visits: coverage is their weighted
	// share.
	type visit struct {
		idx []int
		n   int
	}
	var models []visit
	total := 0
	for _, c := range done {
		counts := make([]int, len(c.models))
		for _, id := range c.ids {
			counts[id]++
		}
		for id, tm := range c.models {
			if counts[id] > 0 {
				models = append(models, visit{tm.Indices(), counts[id]})
				total += counts[id]
			}
		}
	}
	coverage := func(set []bool) float64 {
		hit := 0
		for _, m := range models {
			for _, j := range m.idx {
				if set[j] {
					hit += m.n
					break
				}
			}
		}
		return float64(hit) / float64(total)
	}
	used := make([]bool, len(pip))
	var out []CredibleSet
	for _, lead := range order {
		if pip[lead] < credibleLeadPIP {
			break
		}
		if used[lead] {
			continue
		}
		var group []int
		for _, j := range order {
			if c, _ := sp.TermCorrelation(lead, j); !used[j] && (j == lead || math.Abs(c) >= purity) {
				group = append(group, j)
			}
		}
		in := make([]bool, len(pip))
		var set []int
		cov := 0.0
		for _, j := range group {
			in[j] = true
			set = append(set, j)
			if cov = coverage(in); cov >= level {
				break
			}
		}
		if cov < level {
			used[lead] = true
			continue
		}
		// Only the set's terms are spent: a term correlated with the lead
		// but outside its set may lead an effect of its own.
		for _, j := range set {
			used[j] = true
		}
		cs := CredibleSet{Lead: r.Names[lead], Indices: set, Purity: 1}
		for a, i := range set {
			cs.Terms = append(cs.Terms, r.Names[i])
			cs.Effects += pip[i]
			for _, j := range set[a+1:] {
				c, _ := sp.TermCorrelation(i, j)
				cs.Purity = math.Min(cs.Purity, math.Abs(c))
			}
		}
		var x [][]float64
		cs.Coverage = pipEstimate(&x, done, lens, pipBatch(1, r.Steps), func(c int, id int32) bool {
			return slices.ContainsFunc(set, done[c].models[id].Has)
		})
		out = append(out, cs)
	}
	return out
}

// String writes the set as "{v773, v777} 0.999, purity 0.98".
func (c CredibleSet) String() string {
	return fmt.Sprintf("{%s} coverage %.3f, purity %.2f", joinNames(c.Terms), c.Coverage.P, c.Purity)
}

func joinNames(n []string) string {
	s := ""
	for i, v := range n {
		if i > 0 {
			s += ", "
		}
		s += v
	}
	return s
}
