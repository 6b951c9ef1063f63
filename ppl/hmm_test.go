package ppl

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ad/ops"
)

// hmmBrute is the log-likelihood of y under a two-state HMM with normal
// emissions N(mu[k], 1), transition matrix trans and initial
// probabilities init (nil: weight 1 each), by enumerating all 2ⁿ paths.
func hmmBrute(y, mu []float64, trans [2][2]float64, init []float64) float64 {
	n := len(y)
	var total float64
	for path := 0; path < 1<<n; path++ {
		z := func(t int) int { return path >> t & 1 }
		p := 1.0
		if init != nil {
			p = init[z(0)]
		}
		for t := range n {
			if t > 0 {
				p *= trans[z(t-1)][z(t)]
			}
			p *= math.Exp(distuv.Normal{Mu: mu[z(t)], Sigma: 1}.LogProb(y[t]))
		}
		total += p
	}
	return math.Log(total)
}

var hmmY = []float64{0.3, 2.2, 1.9, -0.4, 0.1, 2.5}

// TestHMMAgainstEnumeration: with constant transitions and initial
// probabilities the log-density is the HMM's log-likelihood, compared
// (compiled and tape) with the enumeration of all paths.
func TestHMMAgainstEnumeration(t *testing.T) {
	trans := [2][2]float64{{0.8, 0.2}, {0.3, 0.7}}
	for _, init := range [][]float64{nil, {0.6, 0.4}} {
		compiled, tape := buildBoth(t, func(b *Builder) {
			var in Operand
			if init != nil {
				in = init
			}
			b.Sample(HMM{
				Emissions:   []Distribution{Normal{Mu: b.Real("m"), Sigma: 1.0}, Normal{Mu: 2.0, Sigma: 1.0}},
				Transitions: []Operand{trans[0][:], trans[1][:]},
				Initial:     in,
			}, b.Data("y", hmmY))
		})
		for _, m := range []float64{-0.5, 0.2, 1.1} {
			want := hmmBrute(hmmY, []float64{m, 2}, trans, init)
			checkLogDensity(t, "compiled", compiled, []float64{m}, want, 1e-12)
			checkLogDensity(t, "tape", tape, []float64{m}, want, 1e-12)
		}
	}
}

// TestHMMGradient checks the gradient with simplex transition rows and
// initial probabilities against finite differences.
func TestHMMGradient(t *testing.T) {
	m := mustModel(t, func(b *Builder) {
		mu := b.Ordered("mu", 2)
		b.Sample(HMM{
			Emissions:   []Distribution{Normal{Mu: b.Check(ops.Slice(mu, gorgonia.S(0))), Sigma: 1.0}, Normal{Mu: b.Check(ops.Slice(mu, gorgonia.S(1))), Sigma: 1.0}},
			Transitions: []Operand{b.Simplex("theta1", 2), b.Simplex("theta2", 2)},
			Initial:     b.Simplex("rho", 2),
		}, b.Data("y", hmmY))
	})
	for _, u := range [][]float64{{0.1, 0.3, -0.4, 0.8, 0.2}, {-1, -0.5, 1.2, -0.3, 0.6}} {
		checkGradient(t, m, u, 1e-6)
	}
}

// TestHMMBadInput: mismatched states, rows that are not probabilities and
// observations that are not a sequence are build errors.
func TestHMMBadInput(t *testing.T) {
	emit := []Distribution{Normal{Mu: 0.0, Sigma: 1.0}, Normal{Mu: 2.0, Sigma: 1.0}}
	rows := []Operand{[]float64{0.5, 0.5}, []float64{0.5, 0.5}}
	cases := map[string]func(b *Builder){
		"one row for two states": func(b *Builder) {
			b.Sample(HMM{Emissions: emit, Transitions: rows[:1]}, b.Real("y"))
		},
		"row of three": func(b *Builder) {
			b.Sample(HMM{Emissions: emit, Transitions: []Operand{[]float64{0.2, 0.3, 0.5}, rows[1]}}, b.Real("y"))
		},
		"probability 1.5": func(b *Builder) {
			b.Sample(HMM{Emissions: emit, Transitions: []Operand{[]float64{1.5, -0.5}, rows[1]}}, b.Real("y"))
		},
		"nil emission": func(b *Builder) {
			b.Sample(HMM{Emissions: []Distribution{emit[0], nil}, Transitions: rows}, b.Real("y"))
		},
		"no states": func(b *Builder) { b.Sample(HMM{}, b.Real("y")) },
		"no parameter": func(b *Builder) {
			b.Real("unused")
			b.Sample(HMM{Emissions: emit, Transitions: rows}, b.Data("y", hmmY))
		},
		"initial of three": func(b *Builder) {
			b.Sample(HMM{Emissions: emit, Transitions: rows, Initial: []float64{0.2, 0.3, 0.5}}, b.Real("y"))
		},
		"matrix observations": func(b *Builder) {
			b.Sample(HMM{Emissions: emit, Transitions: rows}, b.Data("y", []float64{1, 2, 3, 4}, 2, 2))
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) { checkBuildFails(t, build) })
	}
}
