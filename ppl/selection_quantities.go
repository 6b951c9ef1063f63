package ppl

import (
	"errors"
	"fmt"
)

// QuantityFunc computes derived quantities of model t at its
// unconstrained point x (laid out as the space's models are: always-in
// coordinates, then one coordinate per active term in increasing term
// index, then the shared coordinates) into dst, one value per name given
// to WithQuantities. It is called once per kept step of every chain, from
// the chains' goroutines at once, so it must be safe for concurrent use
// and must not keep x or dst.
type QuantityFunc func(t Terms, x []float64, dst []float64) error

// WithQuantities declares quantities computed from every model's point
// (predictions at new data, contrasts, effects on another scale), whose
// model-averaged posteriors a selection run reports beside the inclusion
// probabilities: averaging over models is then the same computation as for
// the coefficients, and the user writes only the quantity.
func WithQuantities(names []string, f QuantityFunc) SelectionOption {
	return func(s *SelectionSpace) error {
		if f == nil {
			return errors.New("ppl: WithQuantities: nil quantity function")
		}
		if len(names) == 0 {
			return errors.New("ppl: WithQuantities: no quantity names")
		}
		seen := make(map[string]bool, len(names))
		for i, n := range names {
			if n == "" {
				return fmt.Errorf("ppl: WithQuantities: quantity name %d is empty", i)
			}
			if seen[n] {
				return fmt.Errorf("ppl: WithQuantities: duplicate quantity name %q", n)
			}
			seen[n] = true
		}
		s.qnames, s.qfunc = append([]string(nil), names...), f
		return nil
	}
}

// Quantities returns the names and function given to WithQuantities (nil,
// nil without them). The caller must not modify the names.
func (s *SelectionSpace) Quantities() ([]string, QuantityFunc) { return s.qnames, s.qfunc }
