package experiment_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/trjgo/trj/models/experiment"
)

// TestTableMissingStderr: a standard error that could not be computed is
// printed "n/a" with its note under the table, never "NaN", and is "NaN" in
// the JSON beside the note.
func TestTableMissingStderr(t *testing.T) {
	nan := experiment.Float(math.NaN())
	cases := []struct {
		name, note, want string
	}{
		{"with a note", "the chains never jumped; run more steps", "n/a (affine): the chains never jumped; run more steps"},
		{"without a note", "", "n/a (affine): no standard error could be computed"},
	}
	for _, c := range cases {
		r := experiment.NewResult("x", 1, []string{"1", "2"})
		r.Add("affine", &experiment.ProposalResult{
			ModelProbabilities: map[string]experiment.Float{"1": 0, "2": 1},
			Stderr:             map[string]experiment.Float{"1": nan, "2": nan},
			StderrNote:         c.note,
		})
		r.Add("exact", &experiment.ProposalResult{
			ModelProbabilities: map[string]experiment.Float{"1": 0.25, "2": 0.75},
			Stderr:             map[string]experiment.Float{"1": 0.01, "2": 0.01},
		})
		var b bytes.Buffer
		if err := r.WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.Contains(out, "NaN") || !strings.Contains(out, "0.0000 ± n/a") || !strings.Contains(out, c.want) || strings.Contains(out, "(exact)") {
			t.Errorf("%s: table\n%s\nwant n/a, %q and no NaN", c.name, out, c.want)
		}
		js, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(js), `"1":"NaN"`) {
			t.Errorf("%s: the missing standard error is not \"NaN\" in the JSON: %s", c.name, js)
		}
		var back experiment.Result
		if err := json.Unmarshal(js, &back); err != nil || !math.IsNaN(float64(back.Proposals["affine"].Stderr["1"])) {
			t.Errorf("%s: reading the JSON back: %v", c.name, err)
		}
		if c.note != "" && !strings.Contains(string(js), `"stderr_note":"`+c.note+`"`) {
			t.Errorf("%s: JSON without the note: %s", c.name, js)
		}
	}
}
