package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// SMCMove is the MCMC move that rejuvenates the particles at each
// temperature: SMCEigenRWM (the default, when nil), SMCRWM or SMCNUTS.
type SMCMove interface {
	// String returns the move's name.
	String() string
	// defaultTargetAccept is the acceptance rate its scale is adapted to
	// when SMCSettings.TargetAccept is zero.
	defaultTargetAccept() float64
	// start sets run s's initial scale and returns the move's working
	// state in s.
	start(s *smc) smcMover
}

// smcMover is a move's working state in one run.
type smcMover interface {
	// adapt fits the move to the particles at the current temperature:
	// the particles of block b (smc.block) move with covs[b], the weighted
	// covariance of the other blocks' particles, ridge added to its
	// diagonal.
	adapt(covs []*mat.SymDense, ridge float64) error
	// move moves particle i on worker w and records its acceptance
	// probability in s.acc[i].
	move(w, i int)
	// gain is how fast the scale follows the acceptance (see adaptScale).
	gain() float64
	// finish runs after a temperature's last move.
	finish() error
}

// SMCEigenRWM is the paper's move: a Gaussian random walk along one
// eigenvector of the particle covariance, chosen uniformly, scaled by its
// eigenvalue and an adaptive factor.
type SMCEigenRWM struct{}

// SMCRWM is a random walk N(0, c·Σ̂) with Σ̂ the particle covariance and c
// adaptive.
type SMCRWM struct{}

// SMCNUTS is a NUTS transition with the particle variances as its diagonal
// metric and a step size adapted across the population.
type SMCNUTS struct{}

// String returns "eigen-rwm".
func (SMCEigenRWM) String() string { return "eigen-rwm" }

// String returns "rwm".
func (SMCRWM) String() string { return "rwm" }

// String returns "nuts".
func (SMCNUTS) String() string { return "nuts" }

func (SMCEigenRWM) defaultTargetAccept() float64 { return 0.234 }
func (SMCRWM) defaultTargetAccept() float64      { return 0.234 }
func (SMCNUTS) defaultTargetAccept() float64     { return 0.8 }

// The random walks start at the optimal factor for a Gaussian target.

func (SMCEigenRWM) start(s *smc) smcMover {
	s.scale = 2.38 * 2.38
	return &eigenMover{randomWalk: randomWalk{s}}
}

func (SMCRWM) start(s *smc) smcMover {
	s.scale = 2.38 * 2.38 / float64(s.dim)
	return &rwmMover{randomWalk: randomWalk{s}}
}

// SMCNUTS finds its own step size at the first temperature.
func (SMCNUTS) start(s *smc) smcMover {
	s.scale = 0
	return &nutsMover{s: s, ws: make([]nutsWorker, len(s.models))}
}

// randomWalk is what the random-walk movers share: the Metropolis
// acceptance of a proposal under the tempered density.
type randomWalk struct{ s *smc }

// Log-acceptance falls roughly linearly in the log scale near the optimum.
func (randomWalk) gain() float64 { return 4 }
func (randomWalk) finish() error { return nil }

// accept accepts or rejects worker w's proposal for particle i.
func (m randomWalk) accept(w, i int) {
	s := m.s
	x, rng, prop := s.particle(i), s.rngs[i], s.props[w]
	lp, ll := s.evalPoint(w, prop)
	s.evals[i]++
	cur := tempered(s.lp[i], s.ll[i], s.beta)
	next := tempered(lp, ll, s.beta)
	a := 0.0
	if !math.IsInf(next, -1) {
		a = math.Min(1, math.Exp(next-cur))
	}
	s.acc[i] = a
	if a == 1 || rng.Float64() < a {
		copy(x, prop)
		s.lp[i], s.ll[i] = lp, ll
	}
}

// rwmMover proposes x + √c·L·z with L the lower Cholesky factor of Σ̂.
type rwmMover struct {
	randomWalk
	chols [][]float64 // per block
}

func (m *rwmMover) adapt(covs []*mat.SymDense, _ float64) error {
	m.chols = m.chols[:0]
	for _, cov := range covs {
		l, err := choleskyLower(cov)
		if err != nil {
			return fmt.Errorf("particle covariance: %w", err)
		}
		m.chols = append(m.chols, l)
	}
	return nil
}

func (m *rwmMover) move(w, i int) {
	s := m.s
	x, rng, prop, d := s.particle(i), s.rngs[i], s.props[w], s.dim
	chol := m.chols[s.block(i)]
	for j := range prop {
		prop[j] = rng.NormFloat64()
	}
	sd := math.Sqrt(s.scale)
	for r := d - 1; r >= 0; r-- {
		v := 0.0
		for c := 0; c <= r; c++ {
			v += chol[r*d+c] * prop[c]
		}
		prop[r] = x[r] + sd*v
	}
	m.accept(w, i)
}

// eigenMover proposes a step along one eigenvector of Σ̂.
type eigenMover struct {
	randomWalk
	vals [][]float64  // per block, eigenvalues of Σ̂
	vecs []*mat.Dense // per block, eigenvectors as columns
}

func (m *eigenMover) adapt(covs []*mat.SymDense, ridge float64) error {
	for len(m.vals) < len(covs) {
		d := covs[0].SymmetricDim()
		m.vals = append(m.vals, nil)
		m.vecs = append(m.vecs, mat.NewDense(d, d, nil))
	}
	for b, cov := range covs {
		var es mat.EigenSym
		if !es.Factorize(cov, true) {
			return errors.New("particle covariance: eigendecomposition failed")
		}
		m.vals[b] = es.Values(m.vals[b])
		es.VectorsTo(m.vecs[b])
		for j, v := range m.vals[b] {
			m.vals[b][j] = math.Max(v, ridge)
		}
	}
	return nil
}

func (m *eigenMover) move(w, i int) {
	s := m.s
	x, rng, prop := s.particle(i), s.rngs[i], s.props[w]
	b := s.block(i)
	vals, vecs := m.vals[b], m.vecs[b]
	j := rng.IntN(s.dim)
	step := math.Sqrt(s.scale*vals[j]) * rng.NormFloat64()
	for r := range prop {
		prop[r] = x[r] + step*vecs.At(r, j)
	}
	m.accept(w, i)
}

// nutsMover makes NUTS transitions of the tempered density.
type nutsMover struct {
	s       *smc
	metrics []*Metric // per block
	ws      []nutsWorker
}

// nutsWorker is one worker's NUTS kernel on its own model.
type nutsWorker struct {
	grad []float64
	nuts *NUTS
	tt   *temperedTarget
}

// adapt takes the particle variances as the metric and re-seeds the step
// size: the posterior narrows at every temperature, so Stan's heuristic
// searches from particle 0 (a few gradients) before the pilot moves refine
// the step size.
func (m *nutsMover) adapt(covs []*mat.SymDense, _ float64) error {
	s := m.s
	m.metrics = m.metrics[:0]
	for _, cov := range covs {
		v := make([]float64, s.dim)
		for j := range v {
			v[j] = cov.At(j, j)
		}
		metric, err := NewDiagMetric(v)
		if err != nil {
			return fmt.Errorf("particle variances: %w", err)
		}
		m.metrics = append(m.metrics, metric)
	}
	for w := range m.ws {
		ws := &m.ws[w]
		if ws.tt == nil {
			ws.tt = &temperedTarget{m: s.models[w], gp: make([]float64, s.dim), gl: make([]float64, s.dim)}
			ws.grad = make([]float64, s.dim)
		}
		ws.tt.beta = s.beta
		if ws.nuts == nil {
			k, err := NewNUTS(ws.tt, 1, m.metrics[0])
			if err != nil {
				return err
			}
			ws.nuts = k
		}
		ws.nuts.Metric = m.metrics[0]
	}
	if s.scale == 0 {
		s.scale = 1
	}
	k := m.ws[0].nuts
	k.StepSize = s.scale
	st, err := k.Init(s.particle(0))
	if err == nil {
		rng := rand.New(rand.NewPCG(s.set.Seed, 1<<63|uint64(s.step)))
		var n int
		n, err = k.findStepSize(rng, st)
		s.evals[0] += n
	}
	if err == nil && k.StepSize > 0 {
		s.scale = k.StepSize
	}
	for w := range m.ws {
		m.ws[w].nuts.StepSize = s.scale
	}
	return nil
}

func (m *nutsMover) move(w, i int) {
	s, ws := m.s, &m.ws[w]
	x := s.particle(i)
	st := NUTSState{Position: x, Grad: ws.grad}
	st.LogDensity = evalGrad(ws.tt, x, ws.grad)
	s.evals[i]++
	if math.IsInf(st.LogDensity, -1) {
		s.acc[i] = 0
		return
	}
	ws.nuts.Metric = m.metrics[s.block(i)]
	_, info := ws.nuts.Step(s.rngs[i], st)
	s.acc[i] = info.AcceptProb
	s.evals[i] += info.NumLeapfrog
}

// NUTS's acceptance statistic moves sharply with the step size.
func (m *nutsMover) gain() float64 { return 1 }

// finish refreshes the prior and likelihood each particle needs for
// reweighting: NUTS states carry the tempered density only.
func (m *nutsMover) finish() error {
	s := m.s
	return s.parallel(func(w, i int) error {
		s.lp[i], s.ll[i] = s.evalPoint(w, s.particle(i))
		s.evals[i]++
		return nil
	})
}
