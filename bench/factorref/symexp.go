package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/models/factor"
	"github.com/trjgo/trj/ppl"
)

// unfolded is the sign-free model itself (exact 2^k symmetry).
type unfolded struct{ *signFree }

func (u *unfolded) Clone() ppl.Model { return &unfolded{u.signFree.clone()} }

func newUnfoldedSpace(y *mat.Dense) (*ppl.Space, []factor.Layout, error) {
	var ms []ppl.Model
	var labels []string
	var lays []factor.Layout
	_, p := y.Dims()
	for _, k := range factor.Factors() {
		m, err := factor.NewModel(y, k)
		if err != nil {
			return nil, nil, err
		}
		lay := factor.NewLayout(p, k)
		ms = append(ms, &unfolded{newSignFree(m, lay)})
		labels = append(labels, strconv.Itoa(k))
		lays = append(lays, lay)
	}
	sp, err := ppl.NewSpace(ms, ppl.WithLabels(labels...))
	return sp, lays, err
}

// colDot is the inner product of column j of a and b.
func colDot(lay factor.Layout, a, b []float64, j int) float64 {
	s := a[lay.LogDiag[j]] * b[lay.LogDiag[j]]
	for i := j + 1; i < lay.P; i++ {
		pos := lay.Lower[i][j]
		s += a[pos] * b[pos]
	}
	return s
}

// foldDraws aligns every draw's column signs with a reference (the mean of
// the aligned draws, iterated).
func foldDraws(lay factor.Layout, draws [][]float64) [][]float64 {
	out := make([][]float64, len(draws))
	for i, d := range draws {
		out[i] = append([]float64(nil), d...)
	}
	ref := append([]float64(nil), out[0]...)
	for it := 0; it < 4; it++ {
		for _, d := range out {
			for j := 0; j < lay.K; j++ {
				if colDot(lay, d, ref, j) < 0 {
					flipColumn(lay, d, j)
				}
			}
		}
		for i := range ref {
			ref[i] = 0
		}
		for _, d := range out {
			floats.Add(ref, d)
		}
		floats.Scale(1/float64(len(out)), ref)
	}
	return out
}

type symProposal struct {
	lay factor.Layout
	f   *flows.RQMA
	x   []float64
	lq  []float64
}

func (q *symProposal) Dim() int { return q.f.Dim() }
func (q *symProposal) LogDensity(theta []float64) (float64, error) {
	G := 1 << q.lay.K
	for g := 0; g < G; g++ {
		copy(q.x, theta)
		for j := 0; j < q.lay.K; j++ {
			if g>>j&1 == 1 {
				flipColumn(q.lay, q.x, j)
			}
		}
		l, err := q.f.LogDensity(q.x)
		if err != nil {
			l = math.Inf(-1)
		}
		q.lq[g] = l
	}
	return floats.LogSumExp(q.lq) - math.Log(float64(G)), nil
}
func (q *symProposal) Sample(rng *rand.Rand, theta []float64) error {
	for i := range q.x {
		q.x[i] = rng.NormFloat64()
	}
	if _, err := q.f.Inverse(q.x, theta); err != nil {
		return err
	}
	for j := 0; j < q.lay.K; j++ {
		if rng.IntN(2) == 1 {
			flipColumn(q.lay, theta, j)
		}
	}
	return nil
}
func (q *symProposal) Clone() kernels.IndependenceProposal {
	return &symProposal{lay: q.lay, f: q.f.Clone(), x: make([]float64, len(q.x)), lq: make([]float64, len(q.lq))}
}

func symScore(seeds []uint64) error {
	y, err := factor.DefaultData()
	if err != nil {
		return err
	}
	space, lays, err := newUnfoldedSpace(y)
	if err != nil {
		return err
	}
	ref := factor.ReferencePi2
	fit := func(k int, train [][]float64) (kernels.IndependenceProposal, error) {
		fd := foldDraws(lays[k], train)
		opts := trj.AutoTrainOptions()
		opts.Seed = uint64(100 + k)
		opts.Workers = 1
		f, _, err := flows.FitRQMA(context.Background(), fd, trj.AutoRQMAConfig(), opts)
		if err != nil {
			return nil, err
		}
		return &symProposal{lay: lays[k], f: f, x: make([]float64, f.Dim()), lq: make([]float64, 1<<lays[k].K)}, nil
	}
	for _, s := range seeds {
		c0 := cpuSeconds()
		r, err := trj.Run(context.Background(), space, &trj.Settings{Seed: s, Proposals: &trj.Independence{Proposal: fit}})
		cpu := cpuSeconds() - c0
		if err != nil {
			return err
		}
		c := r.Chain[0]
		prop, acc := 0, 0
		for _, j := range r.Jumps {
			prop += j.Proposed
			acc += j.Accepted
		}
		fmt.Println(r)
		for k, t := range r.Transports {
			fmt.Printf("model %d: %+v\n", k, t.Quality)
		}
		fmt.Printf("seed %d chains %.4f ± %.4f err %+.4f acc %.3f cpu %.1f\n", s, c.P, c.MCSE, c.P-ref, float64(acc)/float64(max(prop, 1)), cpu)
	}
	return nil
}
