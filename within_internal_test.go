package trj

import "testing"

func TestSpread(t *testing.T) {
	var d [][]float64
	for i := range 10 {
		d = append(d, []float64{float64(i)})
	}
	if got := spread(d, 20); len(got) != 10 {
		t.Errorf("spread of 10 to 20: %d draws", len(got))
	}
	got := spread(d, 4)
	want := []float64{0, 2, 5, 7}
	for i, x := range got {
		if x[0] != want[i] {
			t.Errorf("spread of 10 to 4: %v, want %v", got, want)
			break
		}
	}
}
