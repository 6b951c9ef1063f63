package glmselect

import (
	"fmt"
	"math"

	"github.com/trjgo/trj/ppl"
)

// NeighbourLogEvidences writes into le[j] the log evidence of the model
// that is t with term j flipped (added when t lacks it, dropped when t
// has it), −Inf where the prior gives that model no mass, and returns t's
// own log evidence. Under the g-priors it computes all P from one
// factorisation of t's Gram matrix, by the rank-one changes of R²
// (O(k³ + P k²) for k terms instead of P factorisations of O(k³)), which
// is what makes informed jumps affordable at large P; under
// NormalInverseGamma it evaluates the neighbours one by one. The values
// agree with LogEvidence's to rounding.
func (e *Evidence) NeighbourLogEvidences(t ppl.Terms, le []float64) (float64, error) {
	if t.P() != e.p || len(le) != e.p {
		return math.NaN(), fmt.Errorf("glmselect: neighbours of a term set over %d terms into %d values for %d predictors", t.P(), len(le), e.p)
	}
	self, err := e.LogEvidence(t)
	if err != nil {
		return self, err
	}
	if e.nig != nil || math.IsInf(self, -1) {
		return self, e.oneByOne(t, le)
	}
	idx := t.Indices()
	k, p, gm := len(idx), e.p, e.gm
	L := e.l[:k*k] // t's factor, left there by LogEvidence
	w := e.rhs[:k] // L⁻¹ X_γᵀy
	for i, j := range idx {
		v := gm.xty[j]
		for m := range i {
			v -= L[i*k+m] * w[m]
		}
		w[i] = v / L[i*k+i]
	}
	var q float64
	for _, v := range w {
		q += v * v
	}
	r2 := q / gm.syy
	// Drops: R² falls by b_j² / ((C⁻¹)_jj syy), b = C⁻¹X_γᵀy = L⁻ᵀw and
	// (C⁻¹)_jj = |L⁻¹e_j|².
	b := e.scr[:k]
	for i := k - 1; i >= 0; i-- {
		v := w[i]
		for m := i + 1; m < k; m++ {
			v -= L[m*k+i] * b[m]
		}
		b[i] = v / L[i*k+i]
	}
	u := e.inv[:k]
	for i, j := range idx {
		clear(u)
		var cjj float64
		for r := i; r < k; r++ { // L⁻¹e_i vanishes above row i
			v := 0.0
			if r == i {
				v = 1
			}
			for m := i; m < r; m++ {
				v -= L[r*k+m] * u[m]
			}
			u[r] = v / L[r*k+r]
			cjj += u[r] * u[r]
		}
		le[j] = e.logEvidenceR2(k-1, r2-b[i]*b[i]/(cjj*gm.syy))
	}
	// Adds: with v = L⁻¹C_γj and d = c_jj − |v|², R² rises by
	// (xty_j − v·w)² / (d syy).
	in := 0
	v := e.scr[k : 2*k]
	rows := e.rows[:0]
	for _, jr := range idx {
		rows = append(rows, gm.row(jr))
	}
	e.rows = rows
	for j := range p {
		if in < k && idx[in] == j {
			in++
			continue
		}
		if k+1 > gm.maxTerms() {
			le[j] = math.Inf(-1)
			continue
		}
		cjj := gm.diag[j]
		d, vw := cjj, 0.0
		for r, row := range rows {
			s := row[j]
			for m := range r {
				s -= L[r*k+m] * v[m]
			}
			v[r] = s / L[r*k+r]
			d -= v[r] * v[r]
			vw += v[r] * w[r]
		}
		if !(d > collinearTol*cjj) {
			le[j] = math.Inf(-1)
			continue
		}
		a := gm.xty[j] - vw
		le[j] = e.logEvidenceR2(k+1, r2+a*a/(d*gm.syy))
	}
	return self, nil
}

// logEvidenceR2 is a g-prior model's log evidence from its size and R².
func (e *Evidence) logEvidenceR2(k int, r2 float64) float64 {
	r2 = math.Min(math.Max(r2, 0), 1)
	if e.r.kind == gFixed {
		return e.c0 + e.gTerm(e.r.g, k, r2)
	}
	li, _, _, _ := e.integrate(k, r2)
	return e.c0 + li
}

// oneByOne is NeighbourLogEvidences by a LogEvidence per neighbour.
func (e *Evidence) oneByOne(t ppl.Terms, le []float64) error {
	for j := range e.p {
		nb := t.With(j)
		if t.Has(j) {
			nb = t.Without(j)
		}
		v, err := e.LogEvidence(nb)
		if err != nil {
			return err
		}
		le[j] = v
	}
	return nil
}
