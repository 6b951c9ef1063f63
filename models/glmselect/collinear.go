package glmselect

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// CollinearTol is the relative tolerance of CollinearSets: a centred
// column whose distance to the span of others is at most CollinearTol
// times its own norm is taken as exactly collinear with them. Data
// written with fewer than about ten significant digits are collinear only
// up to their rounding, which is not exact and not reported.
const CollinearTol = 1e-10

// CollinearSets returns the sets of columns of X that are exactly
// collinear once centred (the intercept is in every model): each set is
// a minimal dependent set, its column indices in increasing order, the
// last of them a combination of the others. A set of two is a pair of
// exact copies up to scale and shift; a set of one is a constant column.
// Sets are ordered by their last column.
//
// Such columns are not an error (genotype data hold many perfect copies),
// but a model that holds a whole set has a singular design: under the
// g-prior it gets no prior mass, and its coefficients are not identified.
// Users should know which terms stand for the same thing before reading
// their inclusion probabilities.
//
// Copies are found among all columns. Other combinations are found by
// Gram–Schmidt in column order, so each dependent column is expressed by
// earlier ones; once the earlier columns span every centred vector (rank
// n − 1, so p ≥ n − 1), the later ones are combinations of them by
// necessity and only their copies are reported. The cost is O(n p r) for
// rank r, well under a second at n = 574, p = 1,000.
func CollinearSets(X mat.Matrix) [][]int {
	n, p := X.Dims()
	cols := make([][]float64, p)
	norms := make([]float64, p)
	var sets [][]int
	for j := range p {
		c := mat.Col(nil, j, X)
		mean := floats.Sum(c) / float64(n)
		floats.AddConst(-mean, c)
		cols[j], norms[j] = c, floats.Norm(c, 2)
		if !(norms[j] > CollinearTol*(math.Abs(mean)+floats.Norm(c, math.Inf(1)))) || n < 2 {
			norms[j] = 0
			sets = append(sets, []int{j})
		}
	}
	copyOf := copies(cols, norms)
	for j, i := range copyOf {
		if i >= 0 {
			sets = append(sets, []int{i, j})
		}
	}
	sets = append(sets, combinations(cols, norms, copyOf)...)
	slices.SortFunc(sets, func(a, b []int) int {
		return cmp.Or(cmp.Compare(a[len(a)-1], b[len(b)-1]), slices.Compare(a, b))
	})
	return sets
}

// copies returns, for each centred column, the first earlier column it is
// a copy of up to scale (-1 when none). Columns are compared by a key,
// the absolute value of a fixed projection of the standardised column,
// so that only columns with equal keys are compared in full: O(n p).
func copies(cols [][]float64, norms []float64) []int {
	p := len(cols)
	copyOf := make([]int, p)
	type keyed struct {
		key float64
		j   int
	}
	var ks []keyed
	for j, c := range cols {
		copyOf[j] = -1
		if norms[j] == 0 {
			continue
		}
		k := 0.0
		for i, v := range c {
			// Weights that no data pattern shares.
			k += v * math.Sin(float64(i)+1.5)
		}
		ks = append(ks, keyed{math.Abs(k) / norms[j], j})
	}
	slices.SortFunc(ks, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
	const keyTol = 1e-8
	for start := 0; start < len(ks); {
		end := start + 1
		for end < len(ks) && ks[end].key-ks[end-1].key <= keyTol*(1+ks[end].key) {
			end++
		}
		group := make([]int, 0, end-start)
		for _, k := range ks[start:end] {
			group = append(group, k.j)
		}
		slices.Sort(group)
		for a, j := range group {
			for _, i := range group[:a] {
				if copyOf[i] < 0 && isCopy(cols[i], norms[i], cols[j], norms[j]) {
					copyOf[j] = i
					break
				}
			}
		}
		start = end
	}
	return copyOf
}

// isCopy reports whether the centred columns a and b are equal up to
// scale, within CollinearTol.
func isCopy(a []float64, na float64, b []float64, nb float64) bool {
	s := floats.Dot(a, b) / (na * na)
	d := 0.0
	for i := range a {
		r := b[i] - s*a[i]
		d += r * r
	}
	return math.Sqrt(d) <= CollinearTol*nb
}

// combinations runs Gram–Schmidt (twice per column, which keeps the basis
// orthogonal to rounding) over the centred columns that are neither
// constant nor copies, and returns each column in the span of the earlier
// ones with the columns that express it.
func combinations(cols [][]float64, norms []float64, copyOf []int) [][]int {
	n := 0
	if len(cols) > 0 {
		n = len(cols[0])
	}
	var (
		q     [][]float64 // orthonormal basis
		r     [][]float64 // r[k]: coefficients of basis column k on q[0..k]
		basis []int       // the column of X of each basis vector
		sets  [][]int
	)
	for j, c := range cols {
		if norms[j] == 0 || copyOf[j] >= 0 {
			continue
		}
		if len(q) >= n-1 {
			break // the basis spans every centred vector
		}
		x := slices.Clone(c)
		h := make([]float64, len(q))
		for range 2 {
			for k, qk := range q {
				a := floats.Dot(qk, x)
				h[k] += a
				floats.AddScaled(x, -a, qk)
			}
		}
		res := floats.Norm(x, 2)
		if res > CollinearTol*norms[j] {
			floats.Scale(1/res, x)
			q = append(q, x)
			r = append(r, append(h, res))
			basis = append(basis, j)
			continue
		}
		// c = Σ_k h_k q_k; solve R coef = h for c = Σ coef_k cols[basis[k]].
		coef := make([]float64, len(h))
		for k := len(h) - 1; k >= 0; k-- {
			s := h[k]
			for l := k + 1; l < len(h); l++ {
				s -= r[l][k] * coef[l]
			}
			coef[k] = s / r[k][k]
		}
		set := []int{}
		for k, b := range basis {
			if math.Abs(coef[k])*norms[b] > 1e-7*norms[j] {
				set = append(set, b)
			}
		}
		sets = append(sets, append(set, j))
	}
	return sets
}
