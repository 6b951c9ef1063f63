package main

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
)

// isResult is an importance-sampling estimate of log Z.
type isResult struct {
	LogZ, SE  float64 // SE of log Z (delta method: sd(w)/(√N·mean w))
	ESS       float64 // Kish's (Σw)²/Σw²
	MaxShare  float64 // largest weight over the sum
	N         int
	Draws     [][]float64
	LogWeight []float64
	LogQ      []float64 // log q at the draws
}

// importance draws n points from q (split over workers, each with its own
// streams and model copy) and returns the estimate of ∫p with its draws.
func importance(p *signFree, q *symMix, n, workers int, seed uint64) isResult {
	dim := p.Dim()
	draws := make([][]float64, n)
	lw := make([]float64, n)
	lq := make([]float64, n)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			pw, qw := p.clone(), q.stream(seed, uint64(w)+1)
			for i := w; i < n; i += workers {
				th := make([]float64, dim)
				qw.Rand(th)
				lp, err := pw.LogDensity(th)
				if err != nil {
					lp = math.Inf(-1) // outside the support (β_jj = 0): weight 0
				}
				lq[i] = qw.LogProb(th)
				draws[i], lw[i] = th, lp-lq[i]
			}
		}(w)
	}
	wg.Wait()
	r := summarise(lw, draws)
	r.LogQ = lq
	return r
}

func summarise(lw []float64, draws [][]float64) isResult {
	n := len(lw)
	m := floats.Max(lw)
	w := make([]float64, n)
	for i, v := range lw {
		w[i] = math.Exp(v - m)
	}
	mean, sd := stat.MeanStdDev(w, nil)
	sum, sum2 := floats.Sum(w), floats.Dot(w, w)
	return isResult{
		LogZ: m + math.Log(mean), SE: sd / (math.Sqrt(float64(n)) * mean),
		ESS: sum * sum / sum2, MaxShare: floats.Max(w) / sum, N: n,
		Draws: draws, LogWeight: lw,
	}
}

// bridgeResult is a bridge-sampling estimate of log Z.
type bridgeResult struct {
	LogZ, SE float64
	Iter     int
	Tau      float64 // integrated autocorrelation time of the posterior draws' term
}

// bridge is Meng and Wong's (1996) iterated optimal bridge between the
// posterior draws post (lp1, lq1: log p and log q at them, chains of
// chainLen consecutive draws) and the proposal draws (lp2, lq2). Its SE
// is the relative-error formula of Frühwirth-Schnatter (2004), the
// posterior draws' term inflated by their autocorrelation time, estimated
// by batch means within chains.
func bridge(lp1, lq1, lp2, lq2 []float64, chainLen int) bridgeResult {
	n1, n2 := float64(len(lp1)), float64(len(lp2))
	l1 := make([]float64, len(lp1)) // log p/q at the posterior draws
	l2 := make([]float64, len(lp2))
	for i := range l1 {
		l1[i] = lp1[i] - lq1[i]
	}
	for i := range l2 {
		l2[i] = lp2[i] - lq2[i]
	}
	// Work relative to a constant to keep exp in range.
	c := stat.Quantile(0.5, stat.Empirical, sorted(l1), nil)
	tau := 1.0
	var logR float64
	iter := 0
	f1 := make([]float64, len(l2)) // p/(s1 p + s2 r q) at proposal draws
	f2 := make([]float64, len(l1)) // q/(s1 p + s2 r q) at posterior draws
	for round := 0; round < 2; round++ {
		s1 := n1 / tau / (n1/tau + n2)
		s2 := 1 - s1
		logR = 0
		for iter = 1; iter <= 1000; iter++ {
			r := math.Exp(logR)
			num, den := 0.0, 0.0
			for _, v := range l2 {
				e := math.Exp(v - c)
				num += e / (s1*e + s2*r)
			}
			for _, v := range l1 {
				e := math.Exp(v - c)
				den += 1 / (s1*e + s2*r)
			}
			next := math.Log(num/n2) - math.Log(den/n1)
			if math.Abs(next-logR) < 1e-10 {
				logR = next
				break
			}
			logR = next
		}
		r := math.Exp(logR)
		for i, v := range l2 {
			e := math.Exp(v - c)
			f1[i] = e / (s1*e + s2*r)
		}
		for i, v := range l1 {
			e := math.Exp(v - c)
			f2[i] = 1 / (s1*e + s2*r)
		}
		tau = batchTau(f2, chainLen)
	}
	m1, v1 := stat.MeanVariance(f1, nil)
	m2, v2 := stat.MeanVariance(f2, nil)
	re2 := v1/(m1*m1)/n2 + tau*v2/(m2*m2)/n1
	return bridgeResult{LogZ: logR + c, SE: math.Sqrt(re2), Iter: iter, Tau: tau}
}

// batchTau estimates the integrated autocorrelation time of x, made of
// chains of chainLen draws, by batch means (batches of √chainLen draws
// within chains).
func batchTau(x []float64, chainLen int) float64 {
	b := int(math.Sqrt(float64(chainLen)))
	var means []float64
	for c := 0; c+chainLen <= len(x); c += chainLen {
		for s := c; s+b <= c+chainLen; s += b {
			means = append(means, stat.Mean(x[s:s+b], nil))
		}
	}
	v := stat.Variance(x, nil)
	return math.Max(1, float64(b)*stat.Variance(means, nil)/v)
}

func sorted(x []float64) []float64 {
	s := append([]float64(nil), x...)
	floats.Argsort(s, make([]int, len(s)))
	return s
}
