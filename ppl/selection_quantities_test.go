package ppl

import (
	"strings"
	"testing"
)

// TestWithQuantitiesBadInput: a nil function, no names, an empty or a
// repeated name are refused with an error naming the cause.
func TestWithQuantitiesBadInput(t *testing.T) {
	f := func(Terms, []float64, []float64) error { return nil }
	for _, c := range []struct {
		names []string
		f     QuantityFunc
		want  string
	}{
		{[]string{"a"}, nil, "nil quantity function"},
		{nil, f, "no quantity names"},
		{[]string{"a", ""}, f, "name 1 is empty"},
		{[]string{"a", "a"}, f, `duplicate quantity name "a"`},
	} {
		err := WithQuantities(c.names, c.f)(&SelectionSpace{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.names, err, c.want)
		}
	}
	var s SelectionSpace
	if err := WithQuantities([]string{"m[1]"}, f)(&s); err != nil {
		t.Fatal(err)
	}
	if names, g := s.Quantities(); len(names) != 1 || names[0] != "m[1]" || g == nil {
		t.Errorf("Quantities() = %v, %v", names, g != nil)
	}
}
