package ppl

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/trjgo/trj/ad/ops"
)

// HMM is a hidden Markov model over a sequence of observations, with the
// hidden states summed out: Stan's hmm_marginal. Observation t comes from
// Emissions[z_t], the state z_t moves to z_{t+1} with the probabilities
// Transitions[z_t], and z_1 has the probabilities Initial. A model writes
//
//	b.Sample(ppl.HMM{
//		Emissions:   []ppl.Distribution{ppl.Normal{Mu: mu1, Sigma: 1.0}, ppl.Normal{Mu: mu2, Sigma: 1.0}},
//		Transitions: []ppl.Operand{theta1, theta2}, // b.Simplex rows
//	}, y)
//
// and its log-likelihood and gradient come from one op (ops.HMMMarginal,
// the forward algorithm with a forward–backward gradient), whatever the
// length of the sequence.
type HMM struct {
	// Emissions holds one distribution per hidden state, K in all: the
	// density of an observation in that state (their LogProbs give one
	// value per observation).
	Emissions []Distribution
	// Transitions holds row j of the transition matrix, K probabilities of
	// the next state given state j, for each of the K states: a simplex
	// node (Builder.Simplex) or constant probabilities ([]float64).
	Transitions []Operand
	// Initial holds the K probabilities of the first state. nil means
	// none: every first state has weight 1, as in Stan programs that start
	// the forward recursion at the first emission (posteriordb's HMMs).
	Initial Operand
}

// LogProb returns the log-likelihood of the sequence x (a vector, one
// observation per time step).
func (d HMM) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	k := len(d.Emissions)
	if k < 1 {
		return nil, fmt.Errorf("ppl: HMM needs at least one state (Emissions), got none")
	}
	if len(d.Transitions) != k {
		return nil, fmt.Errorf("ppl: HMM: %d transition rows for %d states (Emissions), want one per state", len(d.Transitions), k)
	}
	emit, err := d.logEmissions(x)
	if err != nil {
		return nil, err
	}
	trans, err := hmmLogTransitions(d.Transitions, k)
	if err != nil {
		return nil, err
	}
	var init *gorgonia.Node
	if d.Initial != nil {
		if init, err = hmmLogProbs("HMM.Initial", d.Initial, k, false); err != nil {
			return nil, err
		}
	}
	if emit.Graph() == nil && trans.Graph() == nil && (init == nil || init.Graph() == nil) {
		return nil, fmt.Errorf("ppl: HMM: no parameter in the emissions, transitions or initial probabilities (the log-likelihood would be a constant)")
	}
	lp, err := ops.HMMMarginal(emit, trans, init)
	if err != nil {
		return nil, fmt.Errorf("ppl: %w", err)
	}
	return lp, nil
}

// LogProbs returns the same scalar as LogProb: the observations of a
// hidden Markov model are one dependent sequence, with no density of
// their own.
func (d HMM) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) { return d.LogProb(x) }

// logEmissions is the N × K matrix of the states' log-densities of x.
func (d HMM) logEmissions(x *gorgonia.Node) (*gorgonia.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("ppl: HMM: nil observations")
	}
	n := x.Shape().TotalSize()
	if x.Dims() > 1 || n < 1 {
		return nil, fmt.Errorf("ppl: HMM: observations have shape %v, want a non-empty vector (one per time step)", x.Shape())
	}
	cols := make([]*gorgonia.Node, len(d.Emissions))
	for k, e := range d.Emissions {
		if e == nil {
			return nil, fmt.Errorf("ppl: HMM: emission distribution %d is nil", k)
		}
		lp, err := e.LogProbs(x)
		if err != nil {
			return nil, fmt.Errorf("ppl: HMM emission %d: %w", k, err)
		}
		if lp.Shape().TotalSize() != n {
			return nil, fmt.Errorf("ppl: HMM emission %d: %d log-densities for %d observations", k, lp.Shape().TotalSize(), n)
		}
		if v, ok := constValues(lp); ok { // constant density, outside the graph
			cols[k] = constNode(v, tensor.Shape{n, 1})
			continue
		}
		if cols[k], err = safeUn(func(a *gorgonia.Node) (*gorgonia.Node, error) {
			return gorgonia.Reshape(a, tensor.Shape{n, 1})
		}, lp); err != nil {
			return nil, err
		}
	}
	allConst := true
	for _, c := range cols {
		if _, ok := constValues(c); !ok {
			allConst = false
		}
	}
	if allConst { // one constant matrix: gorgonia concatenates only in a graph
		v := make([]float64, n*len(cols))
		for k, c := range cols {
			cv, _ := constValues(c)
			for t, x := range cv {
				v[t*len(cols)+k] = x
			}
		}
		return constNode(v, tensor.Shape{n, len(cols)}), nil
	}
	return safeConcat(1, cols)
}

// hmmLogTransitions is the K × K matrix of log transition probabilities
// from K rows: one constant when every row is (gorgonia cannot concatenate
// nodes outside a graph), else the rows' logs concatenated.
func hmmLogTransitions(rows []Operand, k int) (*gorgonia.Node, error) {
	nodes := make([]*gorgonia.Node, k)
	vals := make([]float64, 0, k*k)
	allConst := true
	for j, r := range rows {
		var err error
		if nodes[j], err = hmmLogProbs(fmt.Sprintf("HMM.Transitions[%d]", j), r, k, true); err != nil {
			return nil, err
		}
		if v, ok := constValues(nodes[j]); ok && allConst {
			vals = append(vals, v...)
		} else {
			allConst = false
		}
	}
	if allConst {
		return constNode(vals, tensor.Shape{k, k}), nil
	}
	return safeConcat(0, nodes)
}

// hmmLogProbs is log p for K probabilities p (a node or constants), as a
// 1 × K row or a vector of K.
func hmmLogProbs(what string, v Operand, k int, row bool) (*gorgonia.Node, error) {
	o, err := resolve(what, v)
	if err != nil {
		return nil, err
	}
	if o.size() != k || len(o.shape) > 1 {
		return nil, fmt.Errorf("ppl: %s has shape %v, want a vector of %d probabilities (one per state)", what, o.shape, k)
	}
	shape := tensor.Shape{k}
	if row {
		shape = tensor.Shape{1, k}
	}
	if o.isConst() {
		lv := make([]float64, k)
		for i, p := range o.val {
			if !(p >= 0 && p <= 1) {
				return nil, fmt.Errorf("ppl: %s: entry %d is %v, want a probability in [0, 1]", what, i, p)
			}
			lv[i] = math.Log(p)
		}
		return constNode(lv, shape), nil
	}
	return safeUn(func(a *gorgonia.Node) (*gorgonia.Node, error) {
		l, err := gorgonia.Log(a)
		if err != nil {
			return nil, err
		}
		if len(l.Shape()) != len(shape) || !l.Shape().Eq(shape) { // Eq takes (1, k) for (k)
			return gorgonia.Reshape(l, shape)
		}
		return l, nil
	}, o.node)
}

// safeConcat is ops.Concat along axis, or the single node.
func safeConcat(axis int, xs []*gorgonia.Node) (n *gorgonia.Node, err error) {
	if len(xs) == 1 {
		return xs[0], nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("ppl: HMM: graph construction failed: %v", r)
		}
	}()
	if n, err = ops.Concat(axis, xs...); err != nil {
		return nil, fmt.Errorf("ppl: HMM: %w", err)
	}
	return n, nil
}
