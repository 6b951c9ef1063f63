package main

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// A design is the data of one selection problem in the coordinates the
// prior is stated in: column 0 of x is the intercept (all ones), columns
// 1..p the predictors after standardisation.
type design struct {
	n, p int
	x    [][]float64 // n × (p+1)
	y    []float64
}

// standardise returns the design of d: every predictor centred and scaled
// to unit sample standard deviation (divisor n-1), an intercept column in
// front; y as given.
func standardise(d dataset) design {
	n, p := len(d.y), len(d.x[0])
	x := make([][]float64, n)
	for i := range x {
		x[i] = make([]float64, p+1)
		x[i][0] = 1
	}
	for j := 0; j < p; j++ {
		var m float64
		for i := range n {
			m += d.x[i][j]
		}
		m /= float64(n)
		var ss float64
		for i := range n {
			ss += (d.x[i][j] - m) * (d.x[i][j] - m)
		}
		s := math.Sqrt(ss / float64(n-1))
		for i := range n {
			x[i][j+1] = (d.x[i][j] - m) / s
		}
	}
	return design{n: n, p: p, x: x, y: append([]float64(nil), d.y...)}
}

// gram holds the cross products every model's evidence is made of.
type gram struct {
	g   [][]float64 // XᵀX, (p+1) × (p+1)
	xty []float64   // Xᵀy
	yty float64
}

func newGram(d design) gram {
	k := d.p + 1
	gr := gram{g: make([][]float64, k), xty: make([]float64, k)}
	for a := range k {
		gr.g[a] = make([]float64, k)
	}
	for i := range d.n {
		row := d.x[i]
		for a := range k {
			gr.xty[a] += row[a] * d.y[i]
			for b := 0; b <= a; b++ {
				gr.g[a][b] += row[a] * row[b]
			}
		}
		gr.yty += d.y[i] * d.y[i]
	}
	for a := range k {
		for b := a + 1; b < k; b++ {
			gr.g[a][b] = gr.g[b][a]
		}
	}
	return gr
}

// cholSolve factors the d×d symmetric positive-definite a (lower triangle
// read, overwritten by L) and returns log det a and |L⁻¹ v|² for v.
// ok is false if a is not positive definite.
func cholSolve(a [][]float64, v []float64, d int) (logDet, quad float64, ok bool) {
	for j := range d {
		s := a[j][j]
		for k := range j {
			s -= a[j][k] * a[j][k]
		}
		if s <= 0 {
			return 0, 0, false
		}
		ljj := math.Sqrt(s)
		a[j][j] = ljj
		logDet += 2 * math.Log(ljj)
		for i := j + 1; i < d; i++ {
			s := a[i][j]
			for k := range j {
				s -= a[i][k] * a[j][k]
			}
			a[i][j] = s / ljj
		}
	}
	// Forward substitution L c = v.
	c := make([]float64, d)
	for i := range d {
		s := v[i]
		for k := range i {
			s -= a[i][k] * c[k]
		}
		c[i] = s / a[i][i]
		quad += c[i] * c[i]
	}
	return logDet, quad, true
}

// NIGPrior is the conjugate normal-inverse-gamma prior of the Gaussian
// family: every coefficient, intercept included, β | σ² ~ N(0, σ² g I),
// σ² ~ InverseGamma(a, b).
type NIGPrior struct {
	G, A, B float64
}

// nigLogEvidence returns log p(y | γ) under the NIG prior for the model
// whose columns of the design (0 = intercept) are cols. With
// A = XᵀX + I/g it is
//
//	−n/2 log 2π + a log b − log Γ(a) + log Γ(a+n/2) − ½(log|A| + d log g)
//	− (a+n/2) log(b + ½(yᵀy − yᵀX A⁻¹ Xᵀy)).
func nigLogEvidence(gr gram, n int, pr NIGPrior, cols []int, buf [][]float64, v []float64) float64 {
	d := len(cols)
	for i, ci := range cols {
		for j := 0; j <= i; j++ {
			buf[i][j] = gr.g[ci][cols[j]]
		}
		buf[i][i] += 1 / pr.G
		v[i] = gr.xty[ci]
	}
	logDet, quad, ok := cholSolve(buf, v, d)
	if !ok {
		return math.Inf(-1)
	}
	nn := float64(n)
	la, _ := math.Lgamma(pr.A)
	lan, _ := math.Lgamma(pr.A + nn/2)
	return -nn/2*math.Log(2*math.Pi) + pr.A*math.Log(pr.B) - la + lan -
		0.5*(logDet+float64(d)*math.Log(pr.G)) - (pr.A+nn/2)*math.Log(pr.B+0.5*(gr.yty-quad))
}

// gPriorLogEvidence returns log p(y | γ) up to a constant common to all
// models under Zellner's g-prior with a flat prior on the intercept and on
// log σ, the marginal likelihood BMS uses:
//
//	(n−1−k)/2 log(1+g) − (n−1)/2 log(1 + g(1−R²)),
//
// with k = |γ| and R² the coefficient of determination of the centred
// regression on the model's predictors. gc is the Gram of the centred
// design (intercept row and column unused).
func gPriorLogEvidence(gc gram, n int, g float64, cols []int, buf [][]float64, v []float64) float64 {
	k := len(cols)
	r2 := 0.0
	if k > 0 {
		for i, ci := range cols {
			for j := 0; j <= i; j++ {
				buf[i][j] = gc.g[ci][cols[j]]
			}
			v[i] = gc.xty[ci]
		}
		_, quad, ok := cholSolve(buf, v, k)
		if !ok {
			return math.Inf(-1)
		}
		r2 = quad / gc.yty
	}
	nn := float64(n)
	return (nn-1-float64(k))/2*math.Log1p(g) - (nn-1)/2*math.Log1p(g*(1-r2))
}

// logBetaBinomial11 is the log prior probability of one model of size k
// out of p under the beta-binomial(1,1) prior on model size (every size
// equally likely, models of one size equally likely): −log(p+1) − log C(p,k).
func logBetaBinomial11(p, k int) float64 {
	lc, _ := math.Lgamma(float64(p + 1))
	l1, _ := math.Lgamma(float64(k + 1))
	l2, _ := math.Lgamma(float64(p - k + 1))
	return -math.Log(float64(p+1)) - (lc - l1 - l2)
}

// enumeration is the exact posterior over all 2^p models.
type enumeration struct {
	PIP          []float64  `json:"pip"`
	ExpectedSize float64    `json:"expected_size"`
	Top          []topModel `json:"top_models"`
	LogZ         float64    `json:"log_evidence_total"`
	logw         []float64  // per mask, unnormalised log posterior
	sizeProb     []float64  // posterior of model size
}

type topModel struct {
	Terms string  `json:"terms"` // 1-based predictor indices, comma separated; "" the null model
	Size  int     `json:"size"`
	Prob  float64 `json:"prob"`
}

// terms renders mask as 1-based indices "1,4,9".
func terms(mask uint64, p int) string {
	var s []string
	for j := range p {
		if mask>>j&1 == 1 {
			s = append(s, strconv.Itoa(j+1))
		}
	}
	return strings.Join(s, ",")
}

// enumerate computes every model's log posterior weight logEv(cols) +
// logPrior(p, k) and returns PIPs, expected size and the top models.
// cols always holds 0 (the intercept) first when withIntercept.
func enumerate(p int, withIntercept bool, logEv func(cols []int) float64, top int) (*enumeration, error) {
	if p > 26 {
		return nil, fmt.Errorf("enumerate: p = %d too large", p)
	}
	nm := 1 << p
	logw := make([]float64, nm)
	cols := make([]int, 0, p+1)
	maxw := math.Inf(-1)
	for m := range nm {
		cols = cols[:0]
		if withIntercept {
			cols = append(cols, 0)
		}
		for j := range p {
			if m>>j&1 == 1 {
				cols = append(cols, j+1)
			}
		}
		k := len(cols)
		if withIntercept {
			k--
		}
		w := logEv(cols) + logBetaBinomial11(p, k)
		if math.IsNaN(w) {
			return nil, fmt.Errorf("enumerate: NaN weight at model %s", terms(uint64(m), p))
		}
		logw[m] = w
		maxw = math.Max(maxw, w)
	}
	e := &enumeration{PIP: make([]float64, p), logw: logw, sizeProb: make([]float64, p+1)}
	var total float64
	for m, w := range logw {
		e2 := math.Exp(w - maxw)
		total += e2
		k := 0
		for j := range p {
			if m>>j&1 == 1 {
				e.PIP[j] += e2
				k++
			}
		}
		e.sizeProb[k] += e2
	}
	for j := range e.PIP {
		e.PIP[j] /= total
	}
	for k := range e.sizeProb {
		e.sizeProb[k] /= total
		e.ExpectedSize += float64(k) * e.sizeProb[k]
	}
	e.LogZ = maxw + math.Log(total)
	for _, m := range topIndices(logw, top) {
		e.Top = append(e.Top, topModel{Terms: terms(uint64(m), p), Size: popcount(m), Prob: math.Exp(logw[m] - e.LogZ)})
	}
	return e, nil
}

// topIndices returns the indices of the k largest entries of logw, largest first.
func topIndices(logw []float64, k int) []int {
	idx := make([]int, len(logw))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return logw[idx[a]] > logw[idx[b]] })
	return idx[:min(k, len(idx))]
}

func popcount(m int) int {
	c := 0
	for ; m != 0; m &= m - 1 {
		c++
	}
	return c
}

// newBuf returns a d×d scratch matrix and a d-vector.
func newBuf(d int) ([][]float64, []float64) {
	b := make([][]float64, d)
	for i := range b {
		b[i] = make([]float64, d)
	}
	return b, make([]float64, d)
}

// centredGram returns the Gram of the centred predictors and response (the
// intercept's row and column left zero), for the g-prior.
func centredGram(d dataset) gram {
	n, p := len(d.y), len(d.x[0])
	ds := design{n: n, p: p, x: make([][]float64, n), y: make([]float64, n)}
	var ym float64
	for _, v := range d.y {
		ym += v
	}
	ym /= float64(n)
	means := make([]float64, p)
	for i := range n {
		for j := range p {
			means[j] += d.x[i][j] / float64(n)
		}
	}
	for i := range n {
		ds.x[i] = make([]float64, p+1)
		for j := range p {
			ds.x[i][j+1] = d.x[i][j] - means[j]
		}
		ds.y[i] = d.y[i] - ym
	}
	return newGram(ds)
}
