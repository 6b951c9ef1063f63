package glmselect

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/ppl"
)

// TestNeighbourLogEvidences checks the rank-one neighbour evidences
// against a LogEvidence per neighbour, under every Gaussian prior, on
// UScrime, on a design with an exact copy and a linear combination, and
// with more terms than observations (models at the n − 2 bound).
func TestNeighbourLogEvidences(t *testing.T) {
	X, y, _ := uscrime(t)
	W, wy := wideCollinear(5, true)
	priors := []GaussianPrior{GPrior{}, BRIC{}, HyperG{}, HyperGN{}, ZellnerSiow{}, NormalInverseGamma{}}
	for _, data := range []struct {
		name string
		X    *mat.Dense
		y    []float64
		sets [][]int
	}{
		{"uscrime", X, y, [][]int{{}, {0}, {2, 12, 13}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}}},
		{"wide", W, wy, [][]int{{}, {0}, {0, 2}, {0, 2, 5, 6, 7, 8, 9, 10, 11}, {4, 5, 6, 7, 8, 9, 10, 11, 12, 13}}},
	} {
		_, p := data.X.Dims()
		for _, q := range priors {
			ev, err := NewEvidence(data.X, data.y, &Settings{Prior: q})
			if err != nil {
				t.Fatal(err)
			}
			le := make([]float64, p)
			for _, set := range data.sets {
				tm, _ := ppl.NewTerms(p, set...)
				self, err := ev.NeighbourLogEvidences(tm, le)
				if err != nil {
					t.Fatalf("%s %v %v: %v", data.name, q, set, err)
				}
				want, _ := ev.LogEvidence(tm)
				if self != want {
					t.Errorf("%s %v %v: own log evidence %v, LogEvidence %v", data.name, q, set, self, want)
				}
				for j := range p {
					nb := tm.With(j)
					if tm.Has(j) {
						nb = tm.Without(j)
					}
					want, err := ev.LogEvidence(nb)
					if err != nil {
						t.Fatal(err)
					}
					if math.IsInf(want, -1) || math.IsInf(le[j], -1) {
						if le[j] != want {
							t.Errorf("%s %v %v flip %d: %v, LogEvidence %v", data.name, q, set, j, le[j], want)
						}
						continue
					}
					if d := math.Abs(le[j] - want); d > 1e-8*(1+math.Abs(want)) {
						t.Errorf("%s %v %v flip %d: %v, LogEvidence %v (diff %.2g)", data.name, q, set, j, le[j], want, d)
					}
				}
			}
		}
	}
	ev, _ := NewEvidence(X, y, nil)
	if _, err := ev.NeighbourLogEvidences(ppl.Terms{}, make([]float64, 15)); err == nil {
		t.Error("terms of another space: no error")
	}
}

// TestSupportAgreesWithOffset: the g-prior's support (ppl.WithModelSupport)
// is false exactly where its offset is −Inf, on a full-rank design (the
// fast path) and on a wide one with an exact copy and a combination.
func TestSupportAgreesWithOffset(t *testing.T) {
	X, y, _ := uscrime(t)
	W, wy := wideCollinear(7, false)
	r := rand.New(rand.NewPCG(7, 9))
	for _, data := range []struct {
		X        *mat.Dense
		y        []float64
		fullRank bool
	}{{X, y, true}, {W, wy, false}} {
		s := (&Settings{}).withDefaults()
		d, err := newDesign(data.X, data.y, &s)
		if err != nil {
			t.Fatal(err)
		}
		g := newGram(d)
		if g.fullRank != data.fullRank {
			t.Errorf("p = %d: full rank %v, want %v", d.p, g.fullRank, data.fullRank)
		}
		for range 400 {
			var idx []int
			for j := range d.p {
				if r.IntN(3) == 0 {
					idx = append(idx, j)
				}
			}
			tm, _ := ppl.NewTerms(d.p, idx...)
			in, _ := g.inSupport(tm)
			off, _ := g.offset(tm)
			if in == math.IsInf(off, -1) {
				t.Errorf("p = %d, model %v: in support %v, offset %v", d.p, idx, in, off)
			}
		}
	}
}

// wideCollinear is 12 rows of 14 standard-normal columns in which x2
// copies x1 (scaled and shifted) and x4 = x1 + 2x3, with a response from
// x1 and x6 (withEffects) or pure noise.
func wideCollinear(seed uint64, withEffects bool) (*mat.Dense, []float64) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	W := mat.NewDense(12, 14, nil)
	y := make([]float64, 12)
	for i := range 12 {
		for j := range 14 {
			W.Set(i, j, r.NormFloat64())
		}
		W.Set(i, 1, 3*W.At(i, 0)+1)
		W.Set(i, 3, W.At(i, 0)+2*W.At(i, 2))
		if withEffects {
			y[i] = W.At(i, 0) - W.At(i, 5)
		}
		y[i] += r.NormFloat64()
	}
	return W, y
}
