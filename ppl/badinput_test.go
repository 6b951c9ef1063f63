package ppl

import (
	"strings"
	"testing"
)

// TestBadInputsIndicators gives NewSpace indicator vectors inconsistent
// with its models: each must be refused with a message naming the problem.
func TestBadInputsIndicators(t *testing.T) {
	s, _ := selectionSpace(t)
	models := make([]Model, s.NumModels())
	for k := range models {
		m, err := s.Model(k)
		if err != nil {
			t.Fatal(err)
		}
		models[k] = m
	}
	for _, c := range []struct {
		name string
		ind  [][]int
		want string
	}{
		{"too few vectors", [][]int{{1, 0, 0, 0}, {1, 1, 0, 0}, {1, 0, 1, 1}}, "3 indicator vectors for 4 models"},
		{"too many vectors", [][]int{{1, 0, 0, 0}, {1, 1, 0, 0}, {1, 0, 1, 1}, {1, 1, 1, 1}, {0, 0, 0, 1}}, "5 indicator vectors for 4 models"},
		{"ragged vectors", [][]int{{1, 0, 0, 0}, {1, 1, 0}, {1, 0, 1, 1}, {1, 1, 1, 1}}, "has length 3"},
		{"entry not 0 or 1", [][]int{{1, 0, 0, 0}, {1, 2, 0, 0}, {1, 0, 1, 1}, {1, 1, 1, 1}}, "want 0 or 1"},
		{"ones not the dimension", [][]int{{1, 1, 0, 1}, {1, 1, 0, 0}, {1, 0, 1, 1}, {1, 1, 1, 1}}, "has dimension 1 but its indicator vector has 3 ones"},
	} {
		_, err := NewSpace(models, WithIndicators(c.ind))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
