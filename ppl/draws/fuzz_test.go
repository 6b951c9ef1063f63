package draws

import (
	"bytes"
	"math"
	"testing"
)

// FuzzReadCSV reads arbitrary bytes as a CmdStan CSV file: it must return
// draws or an error, never panic, and draws it accepts must survive a
// write and a second read unchanged, bit for bit (NaN as NaN).
func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("# seed = 1\nlp__,accept_stat__,mu,theta.1\n-1.5,0.9,0.25,1e-3\n-2,1,nan,-inf\n"))
	f.Add([]byte("\ufefflp__,model__,x\n-1,0,2\n-3,1,nan\n# Adaptation terminated\n# Step size = 0.5\n"))
	f.Add([]byte("treedepth__,n_leapfrog__,divergent__,x\n3,7,0,1.5\n"))
	f.Add([]byte("x,y\n1,2\n3\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, _, err := ReadCSV(bytes.NewReader(data))
		if err != nil {
			if d != nil {
				t.Fatal("error with draws")
			}
			return
		}
		var buf bytes.Buffer
		if err := d.WriteCSV(&buf, 0, nil); err != nil {
			t.Fatalf("accepted draws do not write back: %v", err)
		}
		e, _, err := ReadCSV(&buf)
		if err != nil {
			t.Fatalf("written draws do not read back: %v\n%s", err, buf.Bytes())
		}
		if e.Len(0) != d.Len(0) {
			t.Fatalf("%d draws read back as %d", d.Len(0), e.Len(0))
		}
		same := func(a, b []float64) bool {
			for i := range a {
				if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
					return false
				}
			}
			return len(a) == len(b)
		}
		for i := range d.Len(0) {
			if !same(d.Params(0, i), e.Params(0, i)) || !same(d.Diagnostics(0, i), e.Diagnostics(0, i)) || d.ModelIndex(0, i) != e.ModelIndex(0, i) {
				t.Fatalf("draw %d changed in a round trip", i)
			}
		}
	})
}
