package trj

import "testing"

func TestThin(t *testing.T) {
	groups := make([][][]float64, 3)
	for i := range groups {
		for j := range 10 * (i + 1) {
			groups[i] = append(groups[i], []float64{float64(j)})
		}
	}
	if got := thin(groups, 60); len(got[2]) != 30 {
		t.Errorf("no thinning needed: group sizes changed")
	}
	got := thin(groups, 30)
	for i, want := range []int{5, 10, 15} {
		if len(got[i]) != want {
			t.Errorf("group %d: %d draws, want %d", i, len(got[i]), want)
		}
	}
	if got := thin(groups, 1); len(got[0]) != 1 || len(got[2]) != 1 {
		t.Errorf("every group keeps a draw: sizes %d, %d", len(got[0]), len(got[2]))
	}
}
