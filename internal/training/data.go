package training

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/internal/scalar"
)

// CheckRows checks that x holds at least one sample, all of one positive
// dimension n and finite, and returns n.
func CheckRows(x [][]float64) (int, error) {
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
		if !scalar.AllFinite(row) {
			return 0, fmt.Errorf("flows: sample %d is not finite", r)
		}
	}
	return n, nil
}

// FrequencyWeights rescales w to sum to the number of positive weights, so
// that gonum's weighted estimators, whose variance denominators are Σw − 1,
// treat normalised (probability) weights sensibly. nil stays nil.
func FrequencyWeights(w []float64) []float64 {
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

// Standardisation returns the weighted means and reciprocal standard
// deviations of the columns of x; use[r][i] = false excludes entry (r, i)
// (nil: all used).
func Standardisation(x [][]float64, w []float64, use [][]bool) (mean, inv []float64, err error) {
	n := len(x[0])
	w = FrequencyWeights(w)
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
		if !(sd > 0) || !scalar.Finite(sd) {
			return nil, nil, fmt.Errorf("flows: coordinate %d has standard deviation %v", i, sd)
		}
		mean[i], inv[i] = m, 1/sd
	}
	return mean, inv, nil
}

// LearningRate is the step size at step t (from 0) of a schedule starting
// at rate: rate·decay1^min(t, decaySteps)·decay2^max(0, t−decaySteps).
func LearningRate(rate, decay1 float64, decaySteps int, decay2 float64, t int) float64 {
	a := min(t, decaySteps)
	b := max(0, t-decaySteps)
	return rate * math.Pow(decay1, float64(a)) * math.Pow(decay2, float64(b))
}

// BatchSize is the minibatch size at step t of a schedule starting at size
// and doubling at each step listed in doubleAt.
func BatchSize(size int, doubleAt []int, t int) int {
	for _, d := range doubleAt {
		if t >= d {
			size *= 2
		}
	}
	return size
}
