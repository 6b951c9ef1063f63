package draws

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestBadInputsDraws feeds the CSV reader, the writers and the container
// inputs that must give a clear error, never a panic or a silent change.
func TestBadInputsDraws(t *testing.T) {
	l := Layout{Diagnostics: []string{LP}, Params: []string{"x"}}
	read := func(s string) func() error {
		return func() error { _, _, err := ReadCSV(strings.NewReader(s)); return err }
	}
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"empty file", read(""), "no header"},
		{"comments only", read("# a = 1\n"), "no header"},
		{"ragged row", read("lp__,x\n1,2\n3\n"), "line 3 has 1 fields"},
		{"word in a number column", read("lp__,x\n1,two\n"), `"two" is not a number`},
		{"empty field", read("lp__,x\n1,\n"), `"" is not a number`},
		{"fractional tree depth", read("treedepth__,x\n1.5,2\n"), "not an integer"},
		{"infinite divergent flag", read("divergent__,x\ninf,2\n"), "not an integer"},
		{"negative model index", read("lp__,model__,x\n1,-1,2\n"), "out of range"},
		{"duplicate model column", read("model__,model__,x\n1,1,2\n"), "duplicate"},
		{"duplicate parameter", read("x,x\n1,2\n"), "duplicate"},
		{"empty column name", read("lp__,,x\n1,2,3\n"), "empty column"},
		{"stream to a nil writer", func() error { _, err := NewStream(nil, l, nil); return err }, "nil writer"},
		{"setting with a newline", func() error {
			_, err := NewStream(&bytes.Buffer{}, l, []Setting{{"a", "b\nc"}})
			return err
		}, "newlines"},
		{"draw of the wrong length", func() error {
			s, _ := NewStream(&bytes.Buffer{}, l, nil)
			defer s.Close()
			return s.Write([]float64{1, 2}, []float64{0})
		}, "2 parameter values, layout has 1"},
		{"model index on a fixed-dimension stream", func() error {
			s, _ := NewStream(&bytes.Buffer{}, l, nil)
			defer s.Close()
			return s.WriteModel(1, []float64{1}, []float64{0})
		}, "not transdimensional"},
		{"write after Close", func() error {
			s, _ := NewStream(&bytes.Buffer{}, l, nil)
			s.Close()
			return s.Write([]float64{1}, []float64{0})
		}, "closed"},
		{"stream whose disk is full", func() error {
			_, err := NewStream(errWriter{}, l, nil)
			return err
		}, "disk full"},
		{"both metrics", func() error {
			s, _ := NewStream(&bytes.Buffer{}, l, nil)
			defer s.Close()
			return s.WriteAdaptation(Adaptation{InvMetricDiag: []float64{1}, InvMetricDense: [][]float64{{1}}})
		}, "both"},
		{"NaN tree depth appended", func() error {
			d, _ := New(Layout{Diagnostics: []string{TreeDepth}}, 1)
			return d.Append(0, nil, []float64{math.NaN()})
		}, "want an integer"},
		{"Head beyond a chain", func() error {
			d, _ := New(l, 1)
			_, err := d.Head(3)
			return err
		}, "fewer than 3"},
		{"Subset of a missing chain", func() error {
			d, _ := New(l, 1)
			_, err := d.Subset(2)
			return err
		}, "out of range"},
		{"summary of unequal chains", func() error {
			d, _ := New(l, 2)
			d.Append(0, []float64{1}, []float64{0})
			_, err := Summarize(d)
			return err
		}, "equal chains"},
	}
	for _, c := range cases {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
