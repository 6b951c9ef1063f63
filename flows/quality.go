package flows

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"github.com/trjgo/trj/internal/jsonfloat"
)

// Density is a transport with a tractable density: what Assess needs.
// *RQMA and *Affine implement it.
type Density interface {
	Dim() int
	Inverse(z, theta []float64) (float64, error)
	LogDensity(theta []float64) (float64, error)
}

// Quality summarises how well a fitted flow matches its target.
type Quality struct {
	// HeldOutLogLik is the (weighted) mean log-density of the flow over
	// held-out samples, and HeldOutSE its standard error (unweighted
	// formula when weights are given, so only indicative then).
	HeldOutLogLik, HeldOutSE float64
	// ESS is the importance-sampling effective sample size (Σw)²/Σw² of
	// Draws pushforward draws T⁻¹(z), z ~ N(0, I), weighted by
	// target/flow; ESSFraction = ESS/Draws. Both are NaN without a target.
	ESS, ESSFraction float64
	Draws            int
}

// Assess computes the held-out log-likelihood of f on heldOut (optional
// weights) and, when logTarget is non-nil, the importance-sampling ESS of
// draws pushforward draws from seed against it (an unnormalised target is
// fine). A target error counts as zero weight. heldOut may be nil to
// compute the ESS alone; an empty non-nil heldOut, or neither held-out
// samples nor a target, is an error rather than a NaN.
func Assess(f Density, heldOut [][]float64, weights []float64, logTarget func([]float64) (float64, error), draws int, seed uint64) (Quality, error) {
	q := Quality{ESS: math.NaN(), ESSFraction: math.NaN(), HeldOutLogLik: math.NaN(), HeldOutSE: math.NaN()}
	if f == nil {
		return q, errors.New("flows: Assess of a nil flow")
	}
	if len(heldOut) == 0 && logTarget == nil {
		return q, errors.New("flows: Assess with no held-out samples and no target: nothing to assess")
	}
	if heldOut != nil && len(heldOut) == 0 {
		return q, errors.New("flows: Assess with an empty held-out set")
	}
	if len(heldOut) > 0 {
		if weights != nil && len(weights) != len(heldOut) {
			return q, fmt.Errorf("flows: %d weights for %d held-out samples", len(weights), len(heldOut))
		}
		var sw, s, ss float64
		for r, x := range heldOut {
			if len(x) != f.Dim() {
				return q, fmt.Errorf("flows: held-out sample %d has %d values, flow dimension %d", r, len(x), f.Dim())
			}
			l, err := f.LogDensity(x)
			if err != nil {
				return q, fmt.Errorf("flows: held-out sample %d: %w", r, err)
			}
			w := weightOf(weights, r)
			sw += w
			s += w * l
			ss += l * l
		}
		if !(sw > 0) {
			return q, errors.New("flows: held-out weights sum to zero")
		}
		m := float64(len(heldOut))
		q.HeldOutLogLik = s / sw
		if m > 1 {
			mu := s / sw
			q.HeldOutSE = math.Sqrt(math.Max(ss/m-mu*mu, 0) / (m - 1))
		}
	}
	if logTarget == nil {
		return q, nil
	}
	if draws < 2 {
		return q, fmt.Errorf("flows: %d importance draws", draws)
	}
	rng := rand.New(rand.NewPCG(seed, 0x155))
	n := f.Dim()
	z, th := make([]float64, n), make([]float64, n)
	lw := make([]float64, draws)
	for i := range lw {
		for j := range z {
			z[j] = rng.NormFloat64()
		}
		ldInv, err := f.Inverse(z, th)
		if err != nil {
			lw[i] = math.Inf(-1)
			continue
		}
		lt, err := logTarget(th)
		if err != nil || math.IsNaN(lt) {
			lw[i] = math.Inf(-1)
			continue
		}
		lw[i] = lt - (stdNormalLogPDF(z) - ldInv)
	}
	lse := floats.LogSumExp(lw)
	if math.IsInf(lse, -1) {
		q.ESS, q.ESSFraction, q.Draws = 0, 0, draws
		return q, nil
	}
	lw2 := make([]float64, draws)
	for i, v := range lw {
		lw2[i] = 2 * v
	}
	q.ESS = math.Exp(2*lse - floats.LogSumExp(lw2))
	q.ESSFraction = q.ESS / float64(draws)
	q.Draws = draws
	return q, nil
}

// conditionalDensity is model k's slice of a conditional flow, as a Density
// on the saturated space.
type conditionalDensity struct {
	f *ConditionalRQMA
	k int
}

func (c conditionalDensity) Dim() int { return c.f.MaxDim() }
func (c conditionalDensity) Inverse(z, xi []float64) (float64, error) {
	return c.f.Inverse(c.k, z, xi)
}
func (c conditionalDensity) LogDensity(xi []float64) (float64, error) {
	return c.f.LogDensity(c.k, xi)
}

// AssessConditional is Assess for model k of a conditional flow, on the
// augmented target: heldOut rows have length MaxDim with model k's
// auxiliary coordinates filled with N(0, 1) draws (the held-out
// log-likelihood is then that of the augmented target), and logTarget, if
// non-nil, is model k's log-density of its active coordinates in order; the
// auxiliary coordinates' standard normal density is added here.
func AssessConditional(f *ConditionalRQMA, k int, heldOut [][]float64, weights []float64, logTarget func(theta []float64) (float64, error), draws int, seed uint64) (Quality, error) {
	if k < 0 || k >= f.NumModels() {
		return Quality{}, fmt.Errorf("flows: model %d out of range [0, %d)", k, f.NumModels())
	}
	var aug func([]float64) (float64, error)
	if logTarget != nil {
		act := f.spec.Active[k]
		theta := make([]float64, 0, len(act))
		aug = func(xi []float64) (float64, error) {
			theta = theta[:0]
			aux := 0.0
			for i, v := range xi {
				if act[i] {
					theta = append(theta, v)
				} else {
					aux -= 0.5*v*v + halfLog2Pi
				}
			}
			l, err := logTarget(theta)
			return l + aux, err
		}
	}
	return Assess(conditionalDensity{f, k}, heldOut, weights, aug, draws, seed)
}

// qualityJSON is Quality's JSON form.
type qualityJSON struct {
	HeldOutLogLik jsonfloat.Float `json:"held_out_log_lik"`
	HeldOutSE     jsonfloat.Float `json:"held_out_se"`
	ESS           jsonfloat.Float `json:"ess"`
	ESSFraction   jsonfloat.Float `json:"ess_fraction"`
	Draws         int             `json:"draws"`
}

// MarshalJSON writes q with snake_case names; a value that is not finite
// (ESS is NaN without a target) is written as the string "NaN", "+Inf" or
// "-Inf" (pipeline.Float).
func (q Quality) MarshalJSON() ([]byte, error) {
	return json.Marshal(qualityJSON{jsonfloat.Float(q.HeldOutLogLik), jsonfloat.Float(q.HeldOutSE), jsonfloat.Float(q.ESS), jsonfloat.Float(q.ESSFraction), q.Draws})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (q *Quality) UnmarshalJSON(b []byte) error {
	var j qualityJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*q = Quality{float64(j.HeldOutLogLik), float64(j.HeldOutSE), float64(j.ESS), float64(j.ESSFraction), j.Draws}
	return nil
}
