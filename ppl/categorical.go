package ppl

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Categorical and multinomial distributions share one form: m rows of K
// counts (a categorical observation is a one-hot row) against a vector of
// K probabilities or log-odds. The rows are data, folded into a constant
// matrix, so each evaluation is one matrix-vector product.

// countRows are a multinomial's observations: m rows of k counts.
type countRows struct {
	m, k   int
	n      []float64 // row-major m×k
	norm   []float64 // per row log N! − Σ log n_k! (zero for one-hot rows)
	scalar bool      // a single observation: LogProbs gives a scalar
}

func (c countRows) colSums() []float64 {
	s := make([]float64, c.k)
	for i := range c.m {
		for j := range c.k {
			s[j] += c.n[i*c.k+j]
		}
	}
	return s
}

func (c countRows) rowSums() []float64 {
	s := make([]float64, c.m)
	for i := range c.m {
		for j := range c.k {
			s[i] += c.n[i*c.k+j]
		}
	}
	return s
}

// categoryVector resolves the vector of probabilities or log-odds of a
// categorical or multinomial distribution; probabilities, when constant,
// must be non-negative and sum to one.
func categoryVector(dist, name string, v Operand, logit bool) (operand, error) {
	p, err := resolve(dist+"."+name, v)
	if err != nil {
		return p, err
	}
	if len(p.shape) != 1 || p.shape[0] < 2 {
		return p, fmt.Errorf("ppl: %s: %s has shape %v, want a vector of K ≥ 2 entries", dist, name, p.shape)
	}
	if logit || !p.isConst() {
		return p, nil
	}
	if err := checkParam(dist, name, p, nonNegative, "≥ 0"); err != nil {
		return p, err
	}
	sum := 0.0
	for _, x := range p.val {
		sum += x
	}
	if math.Abs(sum-1) > 1e-8*float64(len(p.val)) {
		return p, fmt.Errorf("ppl: %s: %s sums to %v, not 1", dist, name, sum)
	}
	return p, nil
}

// categoryRows turns observed categories 1…k into one-hot rows.
func categoryRows(dist string, x *gorgonia.Node, k int) (countRows, error) {
	v, err := observed(dist, x)
	if err != nil {
		return countRows{}, err
	}
	c := countRows{m: len(v), k: k, n: make([]float64, len(v)*k), norm: make([]float64, len(v)), scalar: x.IsScalar()}
	for i, y := range v {
		if y != math.Trunc(y) || y < 1 || y > float64(k) {
			return c, fmt.Errorf("ppl: %s: observation %d is %v, want a category 1…%d (numbered from one, as in Stan)", dist, i, y, k)
		}
		c.n[i*k+int(y)-1] = 1
	}
	return c, nil
}

// multinomialRows reads observed counts: a vector of k counts or an m×k
// matrix whose rows are observations.
func multinomialRows(dist string, x *gorgonia.Node, k int) (countRows, error) {
	v, err := observed(dist, x)
	if err != nil {
		return countRows{}, err
	}
	if err := checkCounts(dist, v, nil); err != nil {
		return countRows{}, err
	}
	s := nodeShape(x)
	c := countRows{k: k, n: v}
	switch {
	case len(s) == 1 && s[0] == k:
		c.m, c.scalar = 1, true
	case len(s) == 2 && s[1] == k:
		c.m = s[0]
	default:
		return c, fmt.Errorf("ppl: %s: observation has shape %v, want a vector of %d counts or a matrix of %d columns", dist, s, k, k)
	}
	c.norm = make([]float64, c.m)
	for i, n := range c.rowSums() {
		c.norm[i], _ = math.Lgamma(n + 1)
		for j := range k {
			l, _ := math.Lgamma(c.n[i*k+j] + 1)
			c.norm[i] -= l
		}
	}
	return c, nil
}

// rowsLogProbs returns the log-probability of each row (summed when sum is
// set) for probabilities p or, when logit is set, log-odds p.
func (e *expr) rowsLogProbs(c countRows, p operand, logit, sum bool) operand {
	norm := operand{val: c.norm, shape: tensor.Shape{c.m}}
	if sum {
		t := 0.0
		for _, v := range c.norm {
			t += v
		}
		norm = cst(t)
	}
	if p.isConst() {
		return e.Add(norm, constRowsLogProbs(c, p.val, logit, sum))
	}
	var lp operand
	switch {
	case sum && logit:
		total := 0.0
		for _, v := range c.n {
			total += v
		}
		cs := operand{val: c.colSums(), shape: tensor.Shape{c.k}}
		lp = e.Sub(e.sumOperand(e.Mul(cs, p)), e.Scale(total, onNode(e.logSumExp(p.node))))
	case sum:
		lp = e.sumOperand(e.xlogy(operand{val: c.colSums(), shape: tensor.Shape{c.k}}, p))
	default:
		rows := constNode(c.n, tensor.Shape{c.m, c.k})
		var logp *gorgonia.Node
		if logit {
			logp = p.node
		} else {
			// A category no row has gets log(p + 1), multiplied by zero.
			if m, ok := zeroMask(operand{val: c.colSums(), shape: tensor.Shape{c.k}}); ok {
				p = e.Add(p, m)
			}
			logp = e.node(e.Log(p))
		}
		lp = onNode(e.matmul(rows, logp))
		if logit {
			n := operand{val: c.rowSums(), shape: tensor.Shape{c.m}}
			lp = e.Sub(lp, e.Mul(n, onNode(e.logSumExp(p.node))))
		}
	}
	out := e.Add(norm, lp)
	if c.scalar && !sum {
		out = e.sumOperand(out)
	}
	return out
}

// constRowsLogProbs is rowsLogProbs for constant p, with 0·log 0 = 0.
func constRowsLogProbs(c countRows, p []float64, logit, sum bool) operand {
	logp := make([]float64, c.k)
	lse := 0.0
	if logit {
		mx := math.Inf(-1)
		for _, v := range p {
			mx = math.Max(mx, v)
		}
		for _, v := range p {
			lse += math.Exp(v - mx)
		}
		lse = mx + math.Log(lse)
	}
	for j, v := range p {
		if logit {
			logp[j] = v - lse
		} else {
			logp[j] = math.Log(v)
		}
	}
	out := make([]float64, c.m)
	for i := range c.m {
		for j := range c.k {
			if n := c.n[i*c.k+j]; n != 0 {
				out[i] += n * logp[j]
			}
		}
	}
	if sum || c.scalar {
		t := 0.0
		for _, v := range out {
			t += v
		}
		return cst(t)
	}
	return operand{val: out, shape: tensor.Shape{c.m}}
}

// Categorical is the categorical distribution on 1…K with probabilities P,
// a vector of K entries summing to one such as a Simplex parameter (Stan's
// categorical). Categories are numbered from one, as in Stan.
type Categorical struct{ P Operand }

// LogProb returns the summed log-probability of x.
func (d Categorical) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	return categoricalLogProbs("Categorical", "P", x, d.P, false, true)
}

// LogProbs returns log P[x_i] for each element of x.
func (d Categorical) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return categoricalLogProbs("Categorical", "P", x, d.P, false, false)
}

// CategoricalLogit is the categorical distribution on 1…K with
// probabilities softmax(Logit) (Stan's categorical_logit).
type CategoricalLogit struct{ Logit Operand }

// LogProb returns the summed log-probability of x.
func (d CategoricalLogit) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	return categoricalLogProbs("CategoricalLogit", "Logit", x, d.Logit, true, true)
}

// LogProbs returns Logit[x_i] − log Σ exp(Logit) for each element of x.
func (d CategoricalLogit) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return categoricalLogProbs("CategoricalLogit", "Logit", x, d.Logit, true, false)
}

func categoricalLogProbs(dist, name string, x *gorgonia.Node, v Operand, logit, sum bool) (*gorgonia.Node, error) {
	p, err := categoryVector(dist, name, v, logit)
	if err != nil {
		return nil, err
	}
	c, err := categoryRows(dist, x, p.shape[0])
	if err != nil {
		return nil, err
	}
	e := &expr{}
	return e.finiteResult(dist, e.rowsLogProbs(c, p, logit, sum))
}

// Multinomial is the multinomial distribution of K counts with
// probabilities P, a vector of K entries summing to one (Stan's
// multinomial). The observation is a vector of K counts, or a matrix whose
// rows are observations; the number of trials is each row's total.
type Multinomial struct{ P Operand }

// LogProb returns the summed log-probability of x.
func (d Multinomial) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	return multinomialLogProbs("Multinomial", "P", x, d.P, false, true)
}

// LogProbs returns the log-probability of each observation (a scalar for
// a vector x, one per row for a matrix x).
func (d Multinomial) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return multinomialLogProbs("Multinomial", "P", x, d.P, false, false)
}

// MultinomialLogit is the multinomial distribution with probabilities
// softmax(Logit) (Stan's multinomial_logit).
type MultinomialLogit struct{ Logit Operand }

// LogProb returns the summed log-probability of x.
func (d MultinomialLogit) LogProb(x *gorgonia.Node) (*gorgonia.Node, error) {
	return multinomialLogProbs("MultinomialLogit", "Logit", x, d.Logit, true, true)
}

// LogProbs returns the log-probability of each observation.
func (d MultinomialLogit) LogProbs(x *gorgonia.Node) (*gorgonia.Node, error) {
	return multinomialLogProbs("MultinomialLogit", "Logit", x, d.Logit, true, false)
}

func multinomialLogProbs(dist, name string, x *gorgonia.Node, v Operand, logit, sum bool) (*gorgonia.Node, error) {
	p, err := categoryVector(dist, name, v, logit)
	if err != nil {
		return nil, err
	}
	c, err := multinomialRows(dist, x, p.shape[0])
	if err != nil {
		return nil, err
	}
	e := &expr{}
	return e.finiteResult(dist, e.rowsLogProbs(c, p, logit, sum))
}
