package factor

import (
	"errors"
	"strings"
	"testing"
)

// TestBadInputsData checks that data files a factor model cannot use are
// refused with a message about the file, not about k, n and p.
func TestBadInputsData(t *testing.T) {
	for _, c := range []struct {
		name, csv string
		k         int
		want      string
	}{
		{"too few rows", "x1,x2,x3\n1,2,3\n2,3,4\n", 2, "2 rows (observations) for 3 columns"},
		{"one column", "x1\n1\n2\n3\n", 1, "1 column(s)"},
		{"more factors than columns", "x1,x2\n1,2\n2,3\n4,1\n", 3, "3 factors for 2 observed variables"},
		{"header only", "x1,x2\n", 1, "at least one row"},
		{"ragged row", "x1,x2\n1,2\n3\n", 1, "wrong number of fields"},
		{"not a number", "x1,x2\n1,abc\n", 1, `"abc"`},
		{"NaN", "x1,x2\n1,NaN\n", 1, `"NaN"`},
	} {
		y, err := ReadData(strings.NewReader(c.csv))
		if err == nil {
			_, err = NewModel(y, c.k)
		}
		if !errors.Is(err, ErrData) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrData saying %q", c.name, err, c.want)
		}
	}
}
