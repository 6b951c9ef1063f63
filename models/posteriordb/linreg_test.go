package posteriordb

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trjgo/trj/ppl"
)

// TestLinregBadData: data the regressions cannot take are errors naming
// the cause: a log of a non-positive value, a fractional factor level, a
// constant column to standardise, a collinear design or too few
// observations under flat priors, a year with no embedded survey.
func TestLinregBadData(t *testing.T) {
	dir := t.TempDir()
	write := func(content string) string {
		p := filepath.Join(dir, "d.json")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name, data, want string
		build            func(string) (*ppl.GraphModel, error)
	}{
		{"zero earnings logged", `{"N": 4, "earn": [1, 0, 3, 4], "height": [60, 61, 65, 70]}`, "must be positive", LogearnHeight},
		{"fractional level", `{"N": 6, "kid_score": [1, 2, 3, 4, 5, 6], "mom_work": [1, 2, 2.5, 3, 4, 4]}`, "want an integer", KidscoreMomWork},
		{"constant height", `{"N": 4, "earn": [1, 2, 3, 4], "height": [60, 60, 60, 60], "male": [0, 1, 0, 1]}`, "constant", LogearnInteractionZ},
		{"collinear", `{"N": 5, "earn": [1, 2, 3, 4, 5], "height": [60, 60, 60, 60, 60]}`, "collinear", EarnHeight},
		{"too few", `{"N": 3, "earn": [1, 2, 3], "height": [60, 61, 63]}`, "N > D + 1", EarnHeight},
		{"kid score out of bounds", `{"N": 4, "kid_score": [1, 2, 300, 4], "mom_hs": [0, 1, 0, 1]}`, "outside", KidscoreMomhs},
	}
	for _, c := range cases {
		_, err := c.build(write(c.data))
		if !errors.Is(err, ErrData) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrData saying %q", c.name, err, c.want)
		}
	}
	if _, err := NES(1974, ""); !errors.Is(err, ErrData) || !strings.Contains(err.Error(), "1974") {
		t.Errorf("NES 1974: err = %v", err)
	}
	// The same data with a varying column are fine.
	if _, err := EarnHeight(write(`{"N": 5, "earn": [1, 2, 3, 4, 5], "height": [60, 62, 61, 65, 64]}`)); err != nil {
		t.Errorf("good data: %v", err)
	}
}
