package training

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Split divides rows samples into a training and a validation set and
// draws minibatches from the training set with replacement, with
// probabilities proportional to the sample weights.
type Split struct {
	// Train and Val are the sorted row indices of the two sets.
	Train, Val []int
	// ValWeights are the weights of the rows of Val; nil when the samples
	// are unweighted or there is no validation set.
	ValWeights []float64
	cum        []float64 // cumulative training weights
	total      float64
}

// NewSplit holds out round(fraction·rows) samples chosen with rng, which it
// advances by one permutation of rows. weights may be nil (equal weights).
func NewSplit(rng *rand.Rand, rows int, fraction float64, weights []float64) (*Split, error) {
	perm := rng.Perm(rows)
	nVal := int(math.Round(fraction * float64(rows)))
	if fraction > 0 && (nVal < 1 || rows-nVal < 1) {
		return nil, fmt.Errorf("validation fraction %v leaves an empty set of %d samples", fraction, rows)
	}
	s := &Split{Val: append([]int(nil), perm[:nVal]...), Train: append([]int(nil), perm[nVal:]...)}
	sort.Ints(s.Val)
	sort.Ints(s.Train)
	if weights != nil && nVal > 0 {
		s.ValWeights = make([]float64, nVal)
		for i, r := range s.Val {
			s.ValWeights[i] = weights[r]
		}
	}
	s.cum = make([]float64, len(s.Train))
	for i, r := range s.Train {
		w := 1.0
		if weights != nil {
			w = weights[r]
		}
		s.total += w
		s.cum[i] = s.total
	}
	if !(s.total > 0) {
		return nil, errors.New("training samples have zero total weight")
	}
	return s, nil
}

// Minibatch returns idx[:0] extended by n training rows drawn with rng,
// one uniform variate each.
func (s *Split) Minibatch(idx []int, n int, rng *rand.Rand) []int {
	idx = idx[:0]
	for i := 0; i < n; i++ {
		j := sort.SearchFloat64s(s.cum, rng.Float64()*s.total)
		if j >= len(s.Train) {
			j = len(s.Train) - 1
		}
		idx = append(idx, s.Train[j])
	}
	return idx
}

// ValTotal is the total weight of the validation set: the divisor that
// turns its summed loss into a mean.
func (s *Split) ValTotal() float64 {
	if s.ValWeights == nil {
		return float64(len(s.Val))
	}
	den := 0.0
	for _, w := range s.ValWeights {
		den += w
	}
	return den
}

// Adam holds the moment estimates of the Adam optimiser (β₁ = 0.9,
// β₂ = 0.999, ε = 10⁻⁸).
type Adam struct {
	m, v []float64
}

// NewAdam returns Adam for n parameters, its moments zero.
func NewAdam(n int) *Adam { return &Adam{m: make([]float64, n), v: make([]float64, n)} }

// Step moves the parameters p within spans (index ranges [lo, hi)) by one
// bias-corrected Adam step along the gradient g with learning rate lr;
// steps counts the steps taken so far, this one included.
func (a *Adam) Step(p, g []float64, spans [][2]int, lr float64, steps int) {
	const beta1, beta2, eps = 0.9, 0.999, 1e-8
	t1 := float64(steps)
	c1 := 1 - math.Pow(beta1, t1)
	c2 := 1 - math.Pow(beta2, t1)
	m, v := a.m, a.v
	for _, sp := range spans {
		for i := sp[0]; i < sp[1]; i++ {
			gi := g[i]
			m[i] = beta1*m[i] + (1-beta1)*gi
			v[i] = beta2*v[i] + (1-beta2)*gi*gi
			p[i] -= lr * (m[i] / c1) / (math.Sqrt(v[i]/c2) + eps)
		}
	}
}

// EarlyStop stops a fit when the mean monitored loss over a window of
// iterations improves on the best earlier window mean by less than
// MinImprovement, and keeps the parameters at the end of the best window.
type EarlyStop struct {
	// Window is the window length in iterations; 0 never stops.
	Window         int
	MinImprovement float64
	losses         []float64
	best           []float64
	bestMean       float64
}

// NewEarlyStop returns early stopping over windows of the given length.
func NewEarlyStop(window int, minImprovement float64) *EarlyStop {
	return &EarlyStop{Window: window, MinImprovement: minImprovement, bestMean: math.Inf(1)}
}

// Add records a monitored loss of the current window.
func (e *EarlyStop) Add(loss float64) {
	if e.Window > 0 {
		e.losses = append(e.losses, loss)
	}
}

// Stop is called after iteration t (from 0) with the current parameters p.
// At the end of a window holding losses it compares the window's mean with
// the best so far, remembers p if it improved, and reports whether to stop;
// when stopping without improvement it restores p to the best window's
// parameters.
func (e *EarlyStop) Stop(t int, p []float64) bool {
	if e.Window <= 0 || (t+1)%e.Window != 0 || len(e.losses) == 0 {
		return false
	}
	mean := 0.0
	for _, w := range e.losses {
		mean += w
	}
	mean /= float64(len(e.losses))
	e.losses = e.losses[:0]
	improved := mean < e.bestMean
	stop := !(mean < e.bestMean-e.MinImprovement)
	if improved {
		e.bestMean = mean
		e.best = append(e.best[:0], p...)
	}
	if stop && t+1 > e.Window {
		if !improved && e.best != nil {
			copy(p, e.best)
		}
		return true
	}
	return false
}
