package flows

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat"
)

// FitRQMA trains an RQMA flow on the rows of x (samples of a distribution on
// R^n) by maximum likelihood. The standardisation uses the weighted sample
// means and reciprocal standard deviations of all rows; the network is
// initialised from opts.Seed.
func FitRQMA(x [][]float64, cfg RQMAConfig, opts TrainOptions) (*RQMA, *TrainReport, error) {
	if _, err := checkRows(x); err != nil {
		return nil, nil, err
	}
	if err := opts.validate(len(x)); err != nil {
		return nil, nil, err
	}
	shift, scale, err := standardisation(x, opts.Weights, nil)
	if err != nil {
		return nil, nil, err
	}
	f, err := NewRQMA(shift, scale, cfg, opts.Seed)
	if err != nil {
		return nil, nil, err
	}
	rep, err := f.train(x, opts)
	return f, rep, err
}

// train fits the network of f, keeping its standardisation.
func (f *RQMA) train(x [][]float64, opts TrainOptions) (*TrainReport, error) {
	n := f.net.n
	l := &rqmaLearner{f: f, pre: make([]float64, len(x)*n), preLD: make([]float64, len(x))}
	for r, row := range x {
		ld := 0.0
		for i, t := range row {
			u, d := squash(f.scale[i]*(t-f.shift[i]), f.c)
			l.pre[r*n+i] = u
			ld += d + math.Log(f.scale[i])
		}
		l.preLD[r] = ld
	}
	return train(l, len(x), opts.Weights, opts)
}

func checkRows(x [][]float64) (int, error) {
	if len(x) == 0 {
		return 0, fmt.Errorf("flows: no samples")
	}
	n := len(x[0])
	if n == 0 {
		return 0, fmt.Errorf("flows: samples of dimension 0")
	}
	for r, row := range x {
		if len(row) != n {
			return 0, fmt.Errorf("flows: sample %d has %d values, sample 0 has %d", r, len(row), n)
		}
		if !allFinite(row) {
			return 0, fmt.Errorf("flows: sample %d is not finite", r)
		}
	}
	return n, nil
}

// frequencyWeights rescales w to sum to the number of positive weights, so
// that gonum's weighted estimators, whose variance denominators are Σw − 1,
// treat normalised (probability) weights sensibly. nil stays nil.
func frequencyWeights(w []float64) []float64 {
	if w == nil {
		return nil
	}
	var sum float64
	pos := 0
	for _, v := range w {
		sum += v
		if v > 0 {
			pos++
		}
	}
	out := make([]float64, len(w))
	if sum > 0 {
		for i, v := range w {
			out[i] = v * float64(pos) / sum
		}
	}
	return out
}

// standardisation returns the weighted means and reciprocal standard
// deviations of the columns of x; use[r][i] = false excludes entry (r, i)
// (nil: all used).
func standardisation(x [][]float64, w []float64, use [][]bool) (mean, inv []float64, err error) {
	n := len(x[0])
	w = frequencyWeights(w)
	mean = make([]float64, n)
	inv = make([]float64, n)
	col := make([]float64, 0, len(x))
	cw := make([]float64, 0, len(x))
	for i := 0; i < n; i++ {
		col, cw = col[:0], cw[:0]
		for r, row := range x {
			if use != nil && !use[r][i] {
				continue
			}
			col = append(col, row[i])
			if w != nil {
				cw = append(cw, w[r])
			} else {
				cw = append(cw, 1)
			}
		}
		if len(col) < 2 {
			return nil, nil, fmt.Errorf("flows: coordinate %d has %d samples", i, len(col))
		}
		m, sd := stat.MeanStdDev(col, cw)
		if !(sd > 0) || !finite(sd) {
			return nil, nil, fmt.Errorf("flows: coordinate %d has standard deviation %v", i, sd)
		}
		mean[i], inv[i] = m, 1/sd
	}
	return mean, inv, nil
}

// rqmaLearner trains an RQMA on pre-squashed samples: the standardisation
// and sigmoid have no parameters, so they are applied once.
type rqmaLearner struct {
	f     *RQMA
	pre   []float64 // h(s(x)) per row, N×n
	preLD []float64 // log-determinant of h∘s per row
}

func (l *rqmaLearner) params() []float64    { return l.f.params }
func (l *rqmaLearner) maskGrad(g []float64) { l.f.net.maskGrad(g) }
func (l *rqmaLearner) freeSpans() [][2]int  { return l.f.net.freeSpans(0) }

func (l *rqmaLearner) newWorker() worker {
	n := l.f.net.n
	return &rqmaWorker{
		l:  l,
		w:  l.f.net.newBatchWork(workerRows),
		u:  make([]float64, workerRows*n),
		ld: make([]float64, workerRows),
		gy: make([]float64, workerRows*n),
		gl: make([]float64, workerRows),
	}
}

type rqmaWorker struct {
	l             *rqmaLearner
	w             *batchWork
	u, ld, gy, gl []float64
}

func (k *rqmaWorker) batch(p []float64, idx []int, wts []float64, _ *rand.Rand, g []float64) float64 {
	tot := 0.0
	k.l.f.net.transposeWeights(p, k.w)
	for lo := 0; lo < len(idx); lo += workerRows {
		hi := min(lo+workerRows, len(idx))
		var wc []float64
		if wts != nil {
			wc = wts[lo:hi]
		}
		tot += k.chunk(p, idx[lo:hi], wc, g)
	}
	return tot
}

func (k *rqmaWorker) chunk(p []float64, idx []int, wts []float64, g []float64) float64 {
	f := k.l.f
	n, c := f.net.n, f.c
	rows := len(idx)
	for r, j := range idx {
		copy(k.u[r*n:(r+1)*n], k.l.pre[j*n:(j+1)*n])
	}
	f.net.forwardBatch(p, k.w, rows, k.u, nil, k.ld)
	tot := 0.0
	for r, j := range idx {
		wr := 1.0
		if wts != nil {
			wr = wts[r]
		}
		ll := k.l.preLD[j] + k.ld[r] - float64(n)*halfLog2Pi
		for i := 0; i < n; i++ {
			y := k.w.y[r*n+i]
			z, d := unsquash(y, c)
			ll += d - 0.5*z*z
			// ∂(−log q)/∂y: through z = logit(y)/c and through log (h⁻¹)'(y).
			k.gy[r*n+i] = wr * (z/(c*y*(1-y)) + 1/y - 1/(1-y))
		}
		k.gl[r] = -wr
		tot -= wr * ll
	}
	if g != nil {
		f.net.backwardBatch(p, g, k.w, rows, k.gy, k.gl, nil)
	}
	return tot
}
