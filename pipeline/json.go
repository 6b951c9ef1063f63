package pipeline

import (
	"encoding/json"
	"fmt"

	"github.com/trjgo/trj/internal/jsonfloat"
)

// Float is a float64 that JSON can always hold: finite values are written
// as numbers, NaN and ±Inf as the strings "NaN", "+Inf" and "-Inf" (what
// strconv.ParseFloat reads), so that a result whose diagnostics are not
// finite is still written, and reads back the same.
type Float float64

// MarshalJSON writes f as a number, or as a string when it is not finite.
func (f Float) MarshalJSON() ([]byte, error) { return jsonfloat.Marshal(float64(f)) }

// UnmarshalJSON reads what MarshalJSON writes, and null (which files
// written before non-finite values were strings hold for them) as NaN.
func (f *Float) UnmarshalJSON(b []byte) error {
	v, err := jsonfloat.Unmarshal(b)
	if err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	*f = Float(v)
	return nil
}

// estimateJSON is Estimate's JSON form.
type estimateJSON struct {
	P     Float `json:"p"`
	MCSE  Float `json:"mcse"`
	Rhat  Float `json:"rhat"`
	ESS   Float `json:"ess"`
	Mixed bool  `json:"mixed"`
	Steps int   `json:"steps,omitempty"`
}

// MarshalJSON writes e with snake_case names (p, mcse, rhat, ess, mixed,
// steps); a non-finite value is written as a string (see Float).
func (e Estimate) MarshalJSON() ([]byte, error) {
	return json.Marshal(estimateJSON{Float(e.P), Float(e.MCSE), Float(e.Rhat), Float(e.ESS), e.Mixed, e.Steps})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Estimate) UnmarshalJSON(b []byte) error {
	var j estimateJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Estimate{float64(j.P), float64(j.MCSE), float64(j.Rhat), float64(j.ESS), j.Mixed, j.Steps}
	return nil
}
