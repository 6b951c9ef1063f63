package selection

import (
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/pipeline"
)

// mergeAnswer sets out's coefficients, quantities and warnings from the
// parts (out.Steps already summed): means and standard deviations from the
// parts' first and second moments, the conditional estimates weighted by
// the steps that include the term, and the quantiles from the pooled
// thinned samples, so every value is the one a single run would give; the
// MCSEs combine by Merge's rule. Parts without coefficients (results
// written before them) leave out without.
func mergeAnswer(out *Result, parts []*Result) {
	defer out.setWarnings()
	N := float64(out.Steps)
	for _, r := range parts {
		if len(r.Coefficients) != len(out.Names) || len(r.Quantities) != len(parts[0].Quantities) {
			return
		}
	}
	out.Coefficients = make([]Coefficient, len(out.Names))
	for j := range out.Coefficients {
		c := Coefficient{Name: out.Names[j]}
		var m moments
		var pp, mi combined
		for _, r := range parts {
			x := r.Coefficients[j]
			w := float64(r.Steps) / N
			m.add(w, float64(x.Mean), float64(x.SD), float64(x.MeanMCSE), float64(x.MeanRhat))
			c.Included += x.Included
		}
		for _, r := range parts {
			x := r.Coefficients[j]
			if x.Included > 0 {
				w := float64(x.Included) / float64(c.Included)
				pp.add(w, float64(x.PPositive), float64(x.PPositiveMCSE))
				mi.add(w, float64(x.MeanIfIncluded), float64(x.MeanIfIncludedMCSE))
			}
		}
		mean, sd, mcse, rhat := m.result()
		c.Mean, c.SD, c.MeanMCSE, c.MeanRhat = pipeline.Float(mean), pipeline.Float(sd), pipeline.Float(mcse), pipeline.Float(rhat)
		c.MeanESS = pipeline.Float(essOf(sd, pipeline.Estimate{MCSE: mcse}))
		c.PPositive, c.PPositiveMCSE, c.MeanIfIncluded, c.MeanIfIncludedMCSE = nan, nan, nan, nan
		if c.Included > 0 {
			v, e := pp.result()
			c.PPositive, c.PPositiveMCSE = pipeline.Float(v), pipeline.Float(e)
			v, e = mi.result()
			c.MeanIfIncluded, c.MeanIfIncludedMCSE = pipeline.Float(v), pipeline.Float(e)
		}
		out.Coefficients[j] = c
	}
	out.Quantities = nil
	for i := range parts[0].Quantities {
		var m moments
		var thin []float64
		for _, r := range parts {
			x := r.Quantities[i]
			m.add(float64(r.Steps)/N, float64(x.Mean), float64(x.SD), float64(x.MeanMCSE), float64(x.MeanRhat))
			for _, v := range x.Thinned {
				thin = append(thin, float64(v))
			}
		}
		mean, sd, mcse, rhat := m.result()
		q := Quantity{Name: parts[0].Quantities[i].Name, Mean: pipeline.Float(mean), SD: pipeline.Float(sd),
			MeanMCSE: pipeline.Float(mcse), MeanRhat: pipeline.Float(rhat), MeanESS: pipeline.Float(essOf(sd, pipeline.Estimate{MCSE: mcse}))}
		q.setThinned(thin)
		out.Quantities = append(out.Quantities, q)
	}
}

// combined is a weighted mean of the parts' estimates with Merge's MCSE:
// the larger of the root of the weighted squared MCSEs and the spread of
// the parts' values over √parts.
type combined struct {
	v, varSum float64
	values    []float64
}

func (c *combined) add(w, v, mcse float64) {
	c.v += w * v
	c.varSum += w * w * mcse * mcse
	c.values = append(c.values, v)
}

func (c *combined) result() (v, mcse float64) {
	mcse = math.Sqrt(c.varSum)
	if len(c.values) > 1 {
		mcse = max(mcse, stat.StdDev(c.values, nil)/math.Sqrt(float64(len(c.values))))
	}
	return c.v, mcse
}

// moments is combined plus the second moment, for the standard deviation
// over every step, and the largest R̂.
type moments struct {
	combined
	second, rhat float64
}

func (m *moments) add(w, mean, sd, mcse, rhat float64) {
	m.combined.add(w, mean, mcse)
	m.second += w * (sd*sd + mean*mean)
	if len(m.values) == 1 || math.IsNaN(rhat) || rhat > m.rhat {
		m.rhat = rhat
	}
}

func (m *moments) result() (mean, sd, mcse, rhat float64) {
	mean, mcse = m.combined.result()
	return mean, math.Sqrt(max(0, m.second-mean*mean)), mcse, m.rhat
}
