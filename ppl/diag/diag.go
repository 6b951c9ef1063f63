package diag

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trjgo/trj/internal/scalar"
)

// Errors returned (possibly wrapped) by the functions of this package.
var (
	// ErrShape reports empty input or chains of unequal length.
	ErrShape = errors.New("diag: draws must be one or more chains of equal length")
	// ErrTooFewDraws reports chains too short for the requested estimate.
	ErrTooFewDraws = errors.New("diag: too few draws per chain")
	// ErrNonFinite reports a NaN or infinite draw; it is the same value
	// as the ErrNonFinite of packages flows and models/sas.
	ErrNonFinite = scalar.ErrNonFinite
	// ErrConstant reports draws without variation, for which R̂ and the
	// effective sample size are undefined.
	ErrConstant = errors.New("diag: draws are constant")
	// ErrProbability reports a quantile probability outside (0, 1).
	ErrProbability = errors.New("diag: probability must lie strictly between 0 and 1")
)

// minRhatDraws is the shortest chain whose halves have a within-half
// variance (two draws each).
const minRhatDraws = 4

// minESSDraws is the shortest chain whose halves reach the three draws the
// autocorrelation estimate needs.
const minESSDraws = 6

// check validates x and returns its number of chains and draws per chain.
func check(x [][]float64, minDraws int) (m, n int, err error) {
	m = len(x)
	if m == 0 {
		return 0, 0, fmt.Errorf("%w: no chains", ErrShape)
	}
	n = len(x[0])
	for c, chain := range x {
		if len(chain) != n {
			return 0, 0, fmt.Errorf("%w: chain %d has %d draws, chain 0 has %d", ErrShape, c, len(chain), n)
		}
		for i, v := range chain {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, 0, fmt.Errorf("diag: %w: chain %d draw %d is %v", ErrNonFinite, c, i, v)
			}
		}
	}
	if n < minDraws {
		return 0, 0, fmt.Errorf("%w: %d draws, need at least %d", ErrTooFewDraws, n, minDraws)
	}
	return m, n, nil
}

// split returns the 2m half-chains of x (views, not copies). With an odd
// number of draws the middle draw belongs to neither half.
func split(x [][]float64) [][]float64 {
	out := make([][]float64, 0, 2*len(x))
	for _, chain := range x {
		h := len(chain) / 2
		out = append(out, chain[:h], chain[len(chain)-h:])
	}
	return out
}

// pooled returns all draws of x in one new slice.
func pooled(x [][]float64) []float64 {
	n := 0
	for _, c := range x {
		n += len(c)
	}
	out := make([]float64, 0, n)
	for _, c := range x {
		out = append(out, c...)
	}
	return out
}

// reshape cuts flat into len(like) chains of the lengths in like.
func reshape(flat []float64, like [][]float64) [][]float64 {
	out := make([][]float64, len(like))
	off := 0
	for i, c := range like {
		out[i] = flat[off : off+len(c) : off+len(c)]
		off += len(c)
	}
	return out
}

// isConstant reports whether all draws of x equal the first one.
func isConstant(x [][]float64) bool {
	v := x[0][0]
	for _, c := range x {
		for _, w := range c {
			if w != v {
				return false
			}
		}
	}
	return true
}

// rankNormalize replaces the pooled draws of x by normal scores of their
// ranks, Φ⁻¹((r − 3/8)/(S + 1/4)) with ties given their average rank (Blom's
// offset, as in Vehtari et al. 2021 eq. 14). The result has the shape of x.
func rankNormalize(x [][]float64) [][]float64 {
	flat := pooled(x)
	s := len(flat)
	if vals, counts, ok := fewValues(flat); ok {
		// Ties only (an indicator's series, say): the same average ranks
		// by counting, without sorting.
		score := make([]float64, len(vals))
		below := 0
		for i, c := range counts {
			r := float64(below+1+below+c) / 2
			score[i] = distuv.UnitNormal.Quantile((r - 3.0/8) / (float64(s) + 1.0/4))
			below += c
		}
		z := make([]float64, s)
		for i, v := range flat {
			z[i] = score[slices.Index(vals, v)]
		}
		return reshape(z, x)
	}
	// Positions sorted by value with a radix sort of the values' bit
	// patterns: at P = 1,000 terms × 4,096 batch means, comparison sorts
	// were most of a selection run's end.
	idx, ok := radixOrder(flat)
	if !ok {
		// NaN equals nothing and orders nowhere: every NaN its own rank.
		return rankNormalizeNaN(flat, x)
	}
	z := make([]float64, s)
	for i := 0; i < s; {
		j := i + 1
		for j < s && flat[idx[j]] == flat[idx[i]] {
			j++
		}
		// Ranks i+1 … j (1-based) share their average.
		score := distuv.UnitNormal.Quantile((float64(i+1+j)/2 - 3.0/8) / (float64(s) + 1.0/4))
		for k := i; k < j; k++ {
			z[idx[k]] = score
		}
		i = j
	}
	return reshape(z, x)
}

// radixOrder returns the positions of x in increasing order of value (a
// stable LSD radix sort, eight passes of one byte over keys that order as
// the floats do; a pass whose byte is the same for every key is skipped),
// or false when x holds a NaN. −0 sorts just before +0, which equals it.
func radixOrder(x []float64) ([]int32, bool) {
	n := len(x)
	keys, tmpK := make([]uint64, n), make([]uint64, n)
	idx, tmpI := make([]int32, n), make([]int32, n)
	for i, v := range x {
		if v != v {
			return nil, false
		}
		b := math.Float64bits(v)
		if b>>63 == 1 {
			b = ^b // negative: reverse the order of magnitudes
		} else {
			b |= 1 << 63
		}
		keys[i], idx[i] = b, int32(i)
	}
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		count = [256]int{}
		for _, k := range keys {
			count[byte(k>>shift)]++
		}
		if count[byte(keys[0]>>shift)] == n {
			continue
		}
		pos := 0
		for d, c := range count {
			count[d] = pos
			pos += c
		}
		for i, k := range keys {
			d := byte(k >> shift)
			tmpK[count[d]], tmpI[count[d]] = k, idx[i]
			count[d]++
		}
		keys, tmpK = tmpK, keys
		idx, tmpI = tmpI, idx
	}
	return idx, true
}

// rankNormalizeNaN is rankNormalize of a series holding NaN: positions
// sorted by value, NaN first, each NaN a tie group of its own.
func rankNormalizeNaN(flat []float64, x [][]float64) [][]float64 {
	s := len(flat)
	idx := make([]int, s)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(flat[a], flat[b]) })
	z := make([]float64, s)
	for i := 0; i < s; {
		j := i + 1
		for j < s && flat[idx[j]] == flat[idx[i]] {
			j++
		}
		r := float64(i+1+j) / 2
		score := distuv.UnitNormal.Quantile((r - 3.0/8) / (float64(s) + 1.0/4))
		for k := i; k < j; k++ {
			z[idx[k]] = score
		}
		i = j
	}
	return reshape(z, x)
}

// fewValues returns the distinct values of x in increasing order with
// their counts when there are at most four of them (and no NaN).
func fewValues(x []float64) (vals []float64, counts []int, ok bool) {
	vals = make([]float64, 0, 4)
	counts = make([]int, 0, 4)
	for _, v := range x {
		if v != v {
			return nil, nil, false
		}
		i := slices.Index(vals, v)
		if i < 0 {
			if len(vals) == 4 {
				return nil, nil, false
			}
			i = len(vals)
			vals = append(vals, v)
			counts = append(counts, 0)
		}
		counts[i]++
	}
	// Sort the few values, their counts with them.
	for i := 1; i < len(vals); i++ {
		for j := i; j > 0 && vals[j] < vals[j-1]; j-- {
			vals[j], vals[j-1] = vals[j-1], vals[j]
			counts[j], counts[j-1] = counts[j-1], counts[j]
		}
	}
	return vals, counts, true
}

// fold returns |x − median(x)|, the median taken over all draws, which
// turns disagreement in scale between chains into disagreement in location.
func fold(x [][]float64) [][]float64 {
	flat := pooled(x)
	if vals, counts, ok := fewValues(flat); ok {
		sorted := make([]float64, 0, len(flat))
		for i, v := range vals {
			for range counts[i] {
				sorted = append(sorted, v)
			}
		}
		med := quantileSorted(sorted, 0.5)
		for i, v := range flat {
			flat[i] = math.Abs(v - med)
		}
		return reshape(flat, x)
	}
	sorted := slices.Clone(flat)
	slices.Sort(sorted)
	med := quantileSorted(sorted, 0.5)
	for i, v := range flat {
		flat[i] = math.Abs(v - med)
	}
	return reshape(flat, x)
}

// rhatBasic is the potential scale reduction of x as given (no splitting):
// sqrt(var⁺/W) with var⁺ = (n−1)/n·W + B/n (Gelman et al., BDA3 §11.4).
func rhatBasic(x [][]float64) (float64, error) {
	if isConstant(x) {
		return math.NaN(), ErrConstant
	}
	m := len(x)
	n := float64(len(x[0]))
	means := make([]float64, m)
	var w float64
	for c, chain := range x {
		mu, v := meanVar(chain)
		means[c] = mu
		w += v
	}
	w /= float64(m)
	var bOverN float64
	if m > 1 {
		_, bOverN = meanVar(means)
	}
	if w == 0 {
		// Each chain is stuck at its own value: the chains disagree
		// infinitely more than they vary.
		return math.Inf(1), nil
	}
	varPlus := (n-1)/n*w + bOverN
	return math.Sqrt(varPlus / w), nil
}

// meanVar returns the mean and the unbiased (n−1) variance of x
// (stat.MeanVariance: two passes with a compensation term, for accuracy).
func meanVar(x []float64) (mean, variance float64) { return stat.MeanVariance(x, nil) }

// SplitRhat returns the classic split-R̂ of x (BDA3 §11.4), without rank
// normalization. It is sensitive to heavy tails; Rhat is the recommended
// diagnostic.
func SplitRhat(x [][]float64) (float64, error) { return onSplit(x, minRhatDraws, false, rhatBasic) }

// RhatBulk returns the rank-normalized split-R̂ of x, which detects chains
// that disagree in location.
func RhatBulk(x [][]float64) (float64, error) { return onSplit(x, minRhatDraws, true, rhatBasic) }

// onSplit checks x (at least minDraws draws per chain), splits its chains
// in halves, rank-normalizes them if rank (which needs draws that are not
// all equal) and returns stat of the result.
func onSplit(x [][]float64, minDraws int, rank bool, stat func([][]float64) (float64, error)) (float64, error) {
	if _, _, err := check(x, minDraws); err != nil {
		return math.NaN(), err
	}
	s := split(x)
	if !rank {
		return stat(s)
	}
	if isConstant(s) {
		return math.NaN(), ErrConstant
	}
	return stat(rankNormalize(s))
}

// RhatTail returns the rank-normalized split-R̂ of the folded draws
// |x − median(x)|, which detects chains that disagree in scale.
func RhatTail(x [][]float64) (float64, error) {
	if _, _, err := check(x, minRhatDraws); err != nil {
		return math.NaN(), err
	}
	if isConstant(x) {
		return math.NaN(), ErrConstant
	}
	return rhatBasic(rankNormalize(split(fold(x))))
}

// Rhat returns the R̂ that Vehtari et al. (2021) recommend reporting: the
// larger of RhatBulk and RhatTail. Values above 1.01 indicate that the chains
// have not mixed.
func Rhat(x [][]float64) (float64, error) {
	bulk, err := RhatBulk(x)
	if err != nil {
		return math.NaN(), err
	}
	tail, err := RhatTail(x)
	if err != nil {
		return math.NaN(), err
	}
	return math.Max(bulk, tail), nil
}
