package seed

import "testing"

// TestDerive pins the derived seeds: every run's numbers depend on them.
func TestDerive(t *testing.T) {
	for _, c := range []struct {
		s     uint64
		stage string
		i     int
	}{{1, "chains", 0}, {1, "chains", 1}, {2, "chains", 0}, {1, "pilot", 0}} {
		d := Derive(c.s, c.stage, c.i)
		x := c.s ^ Key(c.stage, c.i)
		x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
		x = (x ^ x>>27) * 0x94d049bb133111eb
		if want := x ^ x>>31; d != want {
			t.Errorf("Derive(%d, %q, %d) = %#x, want %#x", c.s, c.stage, c.i, d, want)
		}
	}
	if Derive(1, "chains", 0) == Derive(1, "chains", 1) || Derive(1, "chains", 0) == Derive(2, "chains", 0) || Derive(1, "a", 0) == Derive(1, "b", 0) {
		t.Error("distinct parts share a seed")
	}
	a, b := Stream(3, "x", 4), Stream(3, "x", 4)
	for range 10 {
		if a.Uint64() != b.Uint64() {
			t.Fatal("the same part gives different streams")
		}
	}
}
