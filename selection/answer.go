package selection

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
)

// Coefficient is one term's model-averaged posterior: the posterior of the
// term's coordinate with the coordinate 0 in the models without the term,
// as BMS's coef and BAS's coef report it, and its posterior given that the
// term is in. Each mean carries its MCSE (batch means of every chain,
// combined by the rule of pipeline.EstimateMean), the mean also its R̂ and
// ESS.
type Coefficient struct {
	Name string `json:"name"`
	// Mean is E[β] over every kept step (0 when the term is out) and SD
	// the standard deviation of β over the same steps.
	Mean     pipeline.Float `json:"mean"`
	MeanMCSE pipeline.Float `json:"mean_mcse"`
	MeanRhat pipeline.Float `json:"mean_rhat"`
	MeanESS  pipeline.Float `json:"mean_ess"`
	SD       pipeline.Float `json:"sd"`
	// PPositive is P(β > 0 | term in) and MeanIfIncluded E[β | term in]
	// (NaN when the chains never included the term).
	PPositive          pipeline.Float `json:"p_positive"`
	PPositiveMCSE      pipeline.Float `json:"p_positive_mcse"`
	MeanIfIncluded     pipeline.Float `json:"mean_if_included"`
	MeanIfIncludedMCSE pipeline.Float `json:"mean_if_included_mcse"`
	// Included counts the kept steps with the term in, the weight of the
	// conditional estimates when Merge combines runs.
	Included int `json:"included"`
}

// Quantity is the model-averaged posterior of one quantity declared with
// ppl.WithQuantities (a prediction, say): its mean ± MCSE (with R̂ and
// ESS), standard deviation and central 95% interval.
type Quantity struct {
	Name     string         `json:"name"`
	Mean     pipeline.Float `json:"mean"`
	MeanMCSE pipeline.Float `json:"mean_mcse"`
	MeanRhat pipeline.Float `json:"mean_rhat"`
	MeanESS  pipeline.Float `json:"mean_ess"`
	SD       pipeline.Float `json:"sd"`
	// Lower and Upper are the 2.5% and 97.5% quantiles of Thinned.
	Lower pipeline.Float `json:"lower"`
	Upper pipeline.Float `json:"upper"`
	// Thinned is a deterministic thinned sample of the kept steps (every
	// chain's steps at a fixed stride, at most thinnedPerChain per
	// chain), sorted: the quantiles' source, kept so that Merge computes
	// them exactly as one run would.
	Thinned []pipeline.Float `json:"thinned"`
}

// answerBatches is the number of batches a chain's steps are summed in:
// the MCSEs come from the chains' batch means, so memory grows with the
// terms and quantities, never with steps × terms.
const answerBatches = 64

// thinnedPerChain bounds each chain's thinned sample of every quantity:
// at most 1000 steps, fewer when the quantities are many (about 250,000
// values over all of them), never fewer than 100.
func thinnedPerChain(quantities, chains int) int {
	if quantities == 0 {
		return 0
	}
	return min(1000, max(100, 250000/(quantities*max(chains, 1))))
}

// answerAcc accumulates one chain's coefficients and quantities step by
// step, in batches.
type answerAcc struct {
	p, a, q   int
	batch     int // steps per batch
	every     int // stride of the thinned sample
	n         int // steps added
	sum, in   []float64
	pos, qsum []float64 // by batch: p (or q) values each
	sq, qsq   []float64 // Σ value² over every step
	thin      [][]float64
	qbuf      []float64
	qf        ppl.QuantityFunc
	qnames    []string
	rb        *rbAcc // nil without exact evidences
}

func newAnswerAcc(sp *ppl.SelectionSpace, s *Settings) *answerAcc {
	qn, qf := sp.Quantities()
	a := &answerAcc{p: sp.P(), a: sp.Always(), q: len(qn), qf: qf, qnames: qn,
		batch: max(1, (s.Steps+answerBatches-1)/answerBatches), sq: make([]float64, sp.P()), qsq: make([]float64, len(qn)),
		qbuf: make([]float64, len(qn)), thin: make([][]float64, len(qn)), rb: newRBAcc(sp, s.Steps)}
	if k := thinnedPerChain(a.q, s.Chains); k > 0 {
		a.every = max(1, (s.Steps+k-1)/k)
	}
	return a
}

// add adds a kept step in model t at point theta (active terms in
// increasing index after the always-in coordinates).
func (a *answerAcc) add(t ppl.Terms, key string, active []int, theta []float64) error {
	b := a.n / a.batch
	if a.rb != nil {
		if err := a.rb.add(t, key, a.p); err != nil {
			return err
		}
	}
	if a.n%a.batch == 0 {
		a.sum = append(a.sum, make([]float64, a.p)...)
		a.in = append(a.in, make([]float64, a.p)...)
		a.pos = append(a.pos, make([]float64, a.p)...)
		a.qsum = append(a.qsum, make([]float64, a.q)...)
	}
	sum, in, pos := a.sum[b*a.p:(b+1)*a.p], a.in[b*a.p:(b+1)*a.p], a.pos[b*a.p:(b+1)*a.p]
	for k, j := range active {
		v := theta[a.a+k]
		sum[j] += v
		in[j]++
		if v > 0 {
			pos[j]++
		}
		a.sq[j] += v * v
	}
	if a.qf != nil {
		if err := a.qf(t, theta, a.qbuf); err != nil {
			return fmt.Errorf("selection: quantities at kept step %d: %w", a.n, err)
		}
		qs := a.qsum[b*a.q : (b+1)*a.q]
		keep := a.n%a.every == 0
		for i, v := range a.qbuf {
			if math.IsNaN(v) {
				return fmt.Errorf("selection: quantity %q is NaN at kept step %d in model %v", a.qnames[i], a.n, t)
			}
			qs[i] += v
			a.qsq[i] += v * v
			if keep {
				a.thin[i] = append(a.thin[i], v)
			}
		}
	}
	a.n++
	return nil
}

// full is the number of whole batches.
func (a *answerAcc) full() int { return a.n / a.batch }

// batchSeries returns, per chain, the whole batches' means of
// f(chain, batch)/batch size: the series whose EstimateMean gives an MCSE.
func batchSeries(accs []*answerAcc, f func(a *answerAcc, b int) float64) [][]float64 {
	x := make([][]float64, 0, len(accs))
	for _, a := range accs {
		c := make([]float64, a.full())
		for b := range c {
			c[b] = f(a, b) / float64(a.batch)
		}
		x = append(x, c)
	}
	return x
}

// batchEstimate is EstimateMean of the batch means of f; with fewer than
// four whole batches over all chains its MCSE and R̂ are NaN (not
// estimable), never a false 0.
func batchEstimate(accs []*answerAcc, f func(a *answerAcc, b int) float64) pipeline.Estimate {
	x := batchSeries(accs, f)
	e := pipeline.EstimateMean(x)
	if e.Steps < 4 {
		e.MCSE, e.Rhat = math.NaN(), math.NaN()
	}
	return e
}

// ratioMCSE is the MCSE of the ratio estimate r = Σnum/Σden (den a count
// of steps, N steps in all) by the delta method: the MCSE of the mean of
// num − r·den, divided by the mean of den.
func ratioMCSE(accs []*answerAcc, num, den func(a *answerAcc, b int) float64, r, meanDen float64) float64 {
	e := batchEstimate(accs, func(a *answerAcc, b int) float64 { return num(a, b) - r*den(a, b) })
	return e.MCSE / meanDen
}

// answer returns the coefficients and quantities of the chains' accs.
func answer(names []string, accs []*answerAcc) ([]Coefficient, []Quantity) {
	if len(accs) == 0 {
		return nil, nil
	}
	N := 0
	for _, a := range accs {
		N += a.n
	}
	nf := float64(N)
	p := accs[0].p
	coefs := make([]Coefficient, p)
	for j := range p {
		at := func(v func(a *answerAcc) []float64) func(a *answerAcc, b int) float64 {
			return func(a *answerAcc, b int) float64 { return v(a)[b*a.p+j] }
		}
		sum, in, pos := at(func(a *answerAcc) []float64 { return a.sum }), at(func(a *answerAcc) []float64 { return a.in }), at(func(a *answerAcc) []float64 { return a.pos })
		var S, I, P, Q float64
		for _, a := range accs {
			for b := range len(a.sum) / a.p {
				S += sum(a, b)
				I += in(a, b)
				P += pos(a, b)
			}
			Q += a.sq[j]
		}
		c := Coefficient{Name: names[j], Included: int(I)}
		mean := S / nf
		sd := math.Sqrt(max(0, Q/nf-mean*mean))
		e := batchEstimate(accs, sum)
		c.Mean, c.SD, c.MeanMCSE, c.MeanRhat = pipeline.Float(mean), pipeline.Float(sd), pipeline.Float(e.MCSE), pipeline.Float(e.Rhat)
		c.MeanESS = pipeline.Float(essOf(sd, e))
		c.PPositive, c.PPositiveMCSE, c.MeanIfIncluded, c.MeanIfIncludedMCSE = nan, nan, nan, nan
		if I > 0 {
			pp, mi := P/I, S/I
			c.PPositive, c.MeanIfIncluded = pipeline.Float(pp), pipeline.Float(mi)
			c.PPositiveMCSE = pipeline.Float(ratioMCSE(accs, pos, in, pp, I/nf))
			c.MeanIfIncludedMCSE = pipeline.Float(ratioMCSE(accs, sum, in, mi, I/nf))
		}
		coefs[j] = c
	}
	q := accs[0].q
	if q == 0 {
		return coefs, nil
	}
	quants := make([]Quantity, q)
	for i := range q {
		qsum := func(a *answerAcc, b int) float64 { return a.qsum[b*a.q+i] }
		var S, Q float64
		var thin []float64
		for _, a := range accs {
			for b := range len(a.qsum) / a.q {
				S += qsum(a, b)
			}
			Q += a.qsq[i]
			thin = append(thin, a.thin[i]...)
		}
		mean := S / nf
		sd := math.Sqrt(max(0, Q/nf-mean*mean))
		e := batchEstimate(accs, qsum)
		quants[i] = Quantity{Name: accs[0].qnames[i], Mean: pipeline.Float(mean), SD: pipeline.Float(sd),
			MeanMCSE: pipeline.Float(e.MCSE), MeanRhat: pipeline.Float(e.Rhat), MeanESS: pipeline.Float(essOf(sd, e))}
		quants[i].setThinned(thin)
	}
	return coefs, quants
}

var nan = pipeline.Float(math.NaN())

// essOf is the effective sample size that the MCSE of e implies for a
// value of standard deviation sd over the steps: (sd / MCSE)², 0 when the
// value never changed, NaN when the MCSE could not be estimated.
func essOf(sd float64, e pipeline.Estimate) float64 {
	switch {
	case sd == 0:
		return 0
	case !(e.MCSE > 0):
		return math.NaN()
	}
	return (sd / e.MCSE) * (sd / e.MCSE)
}

// setThinned sorts thin into q.Thinned and sets the quantiles from it.
func (q *Quantity) setThinned(thin []float64) {
	slices.Sort(thin)
	q.Thinned = make([]pipeline.Float, len(thin))
	for k, v := range thin {
		q.Thinned[k] = pipeline.Float(v)
	}
	q.Lower, q.Upper = nan, nan
	if len(thin) > 0 {
		q.Lower = pipeline.Float(stat.Quantile(0.025, stat.LinInterp, thin, nil))
		q.Upper = pipeline.Float(stat.Quantile(0.975, stat.LinInterp, thin, nil))
	}
}
