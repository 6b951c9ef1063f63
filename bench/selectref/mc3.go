package main

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
	"sync"
)

// mc3Settings are the settings of the long-run g-prior reference of a
// problem too large to enumerate: Chains independent MC³ chains of Burn
// then Steps steps, a Rao-Blackwellised estimate every Thin steps, cut
// into Batches batches per chain for the standard errors.
type mc3Settings struct {
	Chains  int    `json:"chains"`
	Burn    int    `json:"burn_in_steps"`
	Steps   int    `json:"steps_per_chain"`
	Thin    int    `json:"rao_blackwell_every"`
	Batches int    `json:"batches_per_chain"`
	Seed    uint64 `json:"seed"`
}

// mc3Chain is one MC³ chain on the model space of a gram under the
// g-prior with the beta-binomial(1,1) model prior.
type mc3Chain struct {
	f       *gFit
	p       int
	r       *rand.Rand
	cols    []int
	seen    map[uint64]float64 // log evidence + log model prior of the models proposed
	logPrio []float64          // by model size
}

func newMC3Chain(f *gFit, seed uint64, chain int) *mc3Chain {
	c := &mc3Chain{f: f, p: f.p, r: rand.New(rand.NewPCG(seed, uint64(chain))), cols: make([]int, 0, f.p+1),
		seen: map[uint64]float64{}, logPrio: make([]float64, f.p+1)}
	for k := range c.logPrio {
		c.logPrio[k] = logBetaBinomial11(c.p, k)
	}
	return c
}

// weight returns the log posterior weight of mask, computed on first
// sight. Collinear models get weight −Inf.
func (c *mc3Chain) weight(mask uint64) float64 {
	if v, ok := c.seen[mask]; ok {
		return v
	}
	c.cols = c.cols[:0]
	for m := mask; m != 0; m &= m - 1 {
		c.cols = append(c.cols, bits.TrailingZeros64(m)+1)
	}
	v := math.Inf(-1)
	if len(c.cols) == 0 || c.f.chol(c.cols) {
		lz, _ := c.f.logEv(len(c.cols))
		v = lz + c.logPrio[len(c.cols)]
	}
	c.seen[mask] = v
	return v
}

// propose returns a neighbour of mask: with probability ½ one term
// flipped (birth or death), else one included term swapped with one
// excluded (mask itself when there is none to swap). Both moves are
// symmetric, so the acceptance is the ratio of the posterior weights.
func (c *mc3Chain) propose(mask uint64) uint64 {
	if c.r.IntN(2) == 0 {
		return mask ^ 1<<c.r.IntN(c.p)
	}
	k := bits.OnesCount64(mask)
	if k == 0 || k == c.p {
		return mask
	}
	in, out := c.r.IntN(k), c.r.IntN(c.p-k)
	var a, b int
	for j := range c.p {
		if mask>>j&1 == 1 {
			if in == 0 {
				a = j
			}
			in--
		} else {
			if out == 0 {
				b = j
			}
			out--
		}
	}
	return mask ^ 1<<a ^ 1<<b
}

// rb adds to acc (length 3p: inclusion, mean, second moment) the
// Rao-Blackwellised values at mask: for each j, P(γ_j = 1 | γ_−j, y) and
// E[β_j | γ_−j, y], E[β_j² | γ_−j, y], from one Cholesky factor of the
// model γ_−j ∪ {j} with j last.
func (c *mc3Chain) rb(mask uint64, acc []float64) {
	p, f := c.p, c.f
	for j := range p {
		c.cols = c.cols[:0]
		for m := mask &^ (1 << j); m != 0; m &= m - 1 {
			c.cols = append(c.cols, bits.TrailingZeros64(m)+1)
		}
		c.cols = append(c.cols, j+1)
		k := len(c.cols)
		if !f.chol(c.cols) {
			continue // collinear with j: inclusion impossible
		}
		lz0, _ := f.logEv(k - 1)
		lz1, r2 := f.logEv(k)
		p1 := 1 / (1 + math.Exp(lz0+c.logPrio[k-1]-lz1-c.logPrio[k]))
		ll := f.l[(k-1)*p+k-1]
		mean := f.s * f.c[k-1] / ll
		v := f.coefVar(r2) / (ll * ll)
		acc[j] += p1
		acc[p+j] += p1 * mean
		acc[2*p+j] += p1 * (v + mean*mean)
	}
}

// run runs the chain and returns its batch means: Batches rows of 4p
// values (Rao-Blackwellised inclusion, mean, second moment, then the
// inclusion frequency), and its acceptance rate.
func (c *mc3Chain) run(s mc3Settings) ([][]float64, float64) {
	p := c.p
	// Start from a model drawn from the model prior.
	k := c.r.IntN(p + 1)
	var mask uint64
	for _, j := range c.r.Perm(p)[:k] {
		mask |= 1 << j
	}
	cur := c.weight(mask)
	per := s.Steps / s.Thin / s.Batches
	batches := make([][]float64, s.Batches)
	var accepted int
	thinned := 0
	for step := range s.Burn + s.Steps {
		next := c.propose(mask)
		if next != mask {
			w := c.weight(next)
			if lw := w - cur; lw >= 0 || c.r.Float64() < math.Exp(lw) {
				mask, cur = next, w
				accepted++
			}
		}
		if step < s.Burn {
			continue
		}
		if (step-s.Burn+1)%s.Thin != 0 {
			continue
		}
		b := thinned / per
		thinned++
		if b >= s.Batches {
			continue
		}
		if batches[b] == nil {
			batches[b] = make([]float64, 4*p)
		}
		c.rb(mask, batches[b])
		for j := range p {
			if mask>>j&1 == 1 {
				batches[b][3*p+j]++
			}
		}
	}
	for _, row := range batches {
		for i := range row {
			row[i] /= float64(per)
		}
	}
	return batches, float64(accepted) / float64(s.Burn+s.Steps)
}

// mc3Result is the long-run reference with its Monte Carlo standard errors.
type mc3Result struct {
	PIP, PIPSE, Mean, MeanSE, SD, SDSE []float64
	FreqPIP                            []float64
	Size                               float64
	Acceptance                         []float64
	MaxChainZ                          float64 // largest |chain mean − overall| / its SE, over chains and PIPs
	Top                                []topModel
	Visited                            int     // models proposed (and weighed)
	VisitedMass                        float64 // renormalised mass of the top models
}

// mc3Reference runs the chains (workers at a time) and combines their
// batch means.
func mc3Reference(d dataset, s mc3Settings, workers int) (*mc3Result, error) {
	n, p := len(d.y), len(d.x[0])
	if p > 63 {
		return nil, fmt.Errorf("mc3: p = %d > 63", p)
	}
	if s.Steps%(s.Thin*s.Batches) != 0 {
		return nil, fmt.Errorf("mc3: steps %d not a multiple of thin × batches = %d", s.Steps, s.Thin*s.Batches)
	}
	gc := centredGram(d)
	all := make([][][]float64, s.Chains)
	acc := make([]float64, s.Chains)
	seen := make([]map[uint64]float64, s.Chains)
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range next {
				c := newMC3Chain(newGFit(gc, n, float64(n)), s.Seed, ch)
				all[ch], acc[ch] = c.run(s)
				seen[ch] = c.seen
			}
		}()
	}
	for ch := range s.Chains {
		next <- ch
	}
	close(next)
	wg.Wait()
	res := combineBatches(all, p)
	res.Acceptance = acc
	res.Top, res.Visited, res.VisitedMass = mc3Top(seen, p, 20)
	return res, nil
}

// combineBatches averages the batch means of every chain and takes their
// spread as the standard error (batches long against the autocorrelation);
// the chains' own means are compared with the whole as a check.
func combineBatches(all [][][]float64, p int) *mc3Result {
	var rows [][]float64
	for _, ch := range all {
		rows = append(rows, ch...)
	}
	nb := float64(len(rows))
	mean := make([]float64, 4*p)
	for _, r := range rows {
		for i, v := range r {
			mean[i] += v / nb
		}
	}
	se := make([]float64, 4*p)
	sdOf := func(r []float64, j int) float64 { return math.Sqrt(math.Max(r[2*p+j]-r[p+j]*r[p+j], 0)) }
	res := &mc3Result{PIP: mean[:p], Mean: mean[p : 2*p], FreqPIP: mean[3*p:], SD: make([]float64, p), SDSE: make([]float64, p)}
	for j := range p {
		res.SD[j] = sdOf(mean, j)
		res.Size += res.PIP[j]
	}
	for _, r := range rows {
		for i, v := range r {
			se[i] += (v - mean[i]) * (v - mean[i]) / (nb - 1) / nb
		}
		for j := range p {
			dv := sdOf(r, j) - res.SD[j]
			res.SDSE[j] += dv * dv / (nb - 1) / nb
		}
	}
	for i := range se {
		se[i] = math.Sqrt(se[i])
	}
	for j := range p {
		res.SDSE[j] = math.Sqrt(res.SDSE[j])
	}
	res.PIPSE, res.MeanSE = se[:p], se[p:2*p]
	// Each chain's mean against the whole: its SE is the whole's × √chains.
	nc := float64(len(all))
	for _, ch := range all {
		for j := range p {
			var m float64
			for _, r := range ch {
				m += r[j] / float64(len(ch))
			}
			if se[j] > 0 {
				res.MaxChainZ = math.Max(res.MaxChainZ, math.Abs(m-mean[j])/(se[j]*math.Sqrt(nc-1)))
			}
		}
	}
	return res
}

// mc3Top returns the k models of highest weight among those the chains
// proposed, with their probabilities renormalised over these models, their
// number and the renormalised mass of the top k.
func mc3Top(seen []map[uint64]float64, p, k int) ([]topModel, int, float64) {
	all := map[uint64]float64{}
	for _, m := range seen {
		for mask, w := range m {
			all[mask] = w
		}
	}
	masks := make([]uint64, 0, len(all))
	mx := math.Inf(-1)
	for mask, w := range all {
		masks = append(masks, mask)
		mx = math.Max(mx, w)
	}
	var tot float64
	for _, w := range all {
		tot += math.Exp(w - mx)
	}
	sort.Slice(masks, func(a, b int) bool { return all[masks[a]] > all[masks[b]] })
	var top []topModel
	var mass float64
	for _, mask := range masks[:min(k, len(masks))] {
		pr := math.Exp(all[mask]-mx) / tot
		mass += pr
		top = append(top, topModel{Terms: terms(mask, p), Size: bits.OnesCount64(mask), Prob: pr})
	}
	return top, len(masks), mass
}
