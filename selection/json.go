package selection

import (
	"encoding/json"

	"github.com/trjgo/trj/pipeline"
)

// MarshalJSON writes m with snake_case names; Renormalised, NaN when a top
// model's log evidence is infinite, is written as pipeline.Float writes it
// so that writing a result never fails because of a value.
func (m Model) MarshalJSON() ([]byte, error) {
	type plain Model
	return json.Marshal(struct {
		plain
		Renormalised pipeline.Float `json:"renormalised"`
	}{plain(m), pipeline.Float(m.Renormalised)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *Model) UnmarshalJSON(b []byte) error {
	type plain Model
	aux := struct {
		*plain
		Renormalised pipeline.Float `json:"renormalised"`
	}{plain: (*plain)(m)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	m.Renormalised = float64(aux.Renormalised)
	return nil
}
