package kernels

import (
	"encoding/json"

	"github.com/trjgo/trj/internal/jsonfloat"
)

// MarshalJSON writes c with snake_case names; a draw that is not finite is
// written as the string "NaN", "+Inf" or "-Inf" (pipeline.Float), so that
// writing a chain never fails because of a value.
func (c RJChainResult) MarshalJSON() ([]byte, error) {
	type plain RJChainResult
	return json.Marshal(struct {
		plain
		Draws jsonfloat.Slice `json:"draws,omitempty"`
	}{plain(c), c.Draws})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *RJChainResult) UnmarshalJSON(b []byte) error {
	type plain RJChainResult
	aux := struct {
		*plain
		Draws jsonfloat.Slice `json:"draws,omitempty"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	c.Draws = aux.Draws
	return nil
}
