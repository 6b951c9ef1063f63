package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/internal/checks"
)

// refNUTS is Stan's NUTS transition (base_nuts.hpp) written for clarity
// rather than speed: it keeps every point of the trajectory in time order
// and evaluates each U-turn check from the stored points, instead of the
// running sums and end momenta NUTS.Step keeps. It integrates with the
// kernel's own leapfrog and draws random numbers in Stan's order, so for
// the same stream it must make the same trajectories and pick the same
// points as NUTS.Step.
type refNUTS struct {
	k       *NUTS
	rng     *rand.Rand
	h0      float64
	built   []point // points of the subtree being built, in build order
	nLeap   int
	sumProb float64
	div     bool
}

func (r *refNUTS) clonePoint(z *point) point {
	c := newPoint(r.k.dim)
	copy(c.q, z.q)
	copy(c.p, z.p)
	copy(c.g, z.g)
	copy(c.v, z.v)
	c.lp = z.lp
	return c
}

// noUTurn is Stan's criterion on a run of points: the velocities at both
// ends point along the run's summed momentum.
func noUTurn(pts []point) bool {
	n := len(pts[0].p)
	rho := make([]float64, n)
	for _, z := range pts {
		for i, v := range z.p {
			rho[i] += v
		}
	}
	return dot(pts[0].v, rho) > 0 && dot(pts[len(pts)-1].v, rho) > 0
}

// mergeOK is Stan's check of two adjacent runs a and b (a before b in
// the order they were joined): the merged run, a with b's first point and
// a's last point with b.
func mergeOK(a, b []point) bool {
	all := append(append([]point(nil), a...), b...)
	return noUTurn(all) && noUTurn(append(append([]point(nil), a...), b[0])) &&
		noUTurn(append([]point{a[len(a)-1]}, b...))
}

// build extends the trajectory from z by 2^depth steps of size eps and
// returns whether the new subtree is valid, its log weight and its
// multinomial proposal.
func (r *refNUTS) build(depth int, z *point, eps float64) (bool, float64, point) {
	if depth == 0 {
		r.k.leapfrog(z, eps)
		r.nLeap++
		h := z.hamiltonian()
		if h-r.h0 > r.k.maxDeltaH {
			r.div = true
		}
		r.sumProb += math.Min(1, math.Exp(r.h0-h))
		r.built = append(r.built, r.clonePoint(z))
		return !r.div, r.h0 - h, r.clonePoint(z)
	}
	start := len(r.built)
	ok, wInit, prop := r.build(depth-1, z, eps)
	if !ok {
		return false, 0, prop
	}
	mid := len(r.built)
	ok, wFinal, propFinal := r.build(depth-1, z, eps)
	if !ok {
		return false, 0, prop
	}
	w := logAddExp(wInit, wFinal)
	if wFinal > w || r.rng.Float64() < math.Exp(wFinal-w) {
		prop = propFinal
	}
	return mergeOK(r.built[start:mid], r.built[mid:]), w, prop
}

// step is one transition from s; it returns the new position, the tree
// depth and the number of leapfrog steps.
func (r *refNUTS) step(s NUTSState) ([]float64, int, int, float64) {
	k := r.k
	k.maxDeltaH = DefaultMaxEnergyError
	z := newPoint(k.dim)
	copy(z.q, s.Position)
	copy(z.g, s.Grad)
	z.lp = s.LogDensity
	k.Metric.sampleMomentum(r.rng, z.p)
	k.Metric.velocity(z.p, z.v)
	r.h0 = z.hamiltonian()
	r.nLeap, r.sumProb, r.div = 0, 0, false
	traj := []point{r.clonePoint(&z)} // time order
	sample := r.clonePoint(&z)
	logW := 0.0
	depth := 0
	for depth < DefaultMaxTreeDepth {
		r.built = r.built[:0]
		forward := r.rng.Float64() > 0.5
		var end point
		eps := k.StepSize
		if forward {
			end = r.clonePoint(&traj[len(traj)-1])
		} else {
			end = r.clonePoint(&traj[0])
			eps = -eps
		}
		ok, wSub, prop := r.build(depth, &end, eps)
		if !ok {
			break
		}
		depth++
		if wSub > logW || r.rng.Float64() < math.Exp(wSub-logW) {
			sample = prop
		}
		logW = logAddExp(logW, wSub)
		// Join in the order of joining: the old trajectory, then the new
		// subtree in build order (which runs backward in time when
		// extending backward).
		old := append([]point(nil), traj...)
		if !forward {
			for i, j := 0, len(old)-1; i < j; i, j = i+1, j-1 {
				old[i], old[j] = old[j], old[i]
			}
		}
		persist := mergeOK(old, r.built)
		if forward {
			traj = append(traj, r.built...)
		} else {
			rev := make([]point, 0, len(r.built)+len(traj))
			for i := len(r.built) - 1; i >= 0; i-- {
				rev = append(rev, r.built[i])
			}
			traj = append(rev, traj...)
		}
		if !persist {
			break
		}
	}
	return sample.q, depth, r.nLeap, r.sumProb / float64(max(r.nLeap, 1))
}

// TestNUTSMatchesReference runs NUTS.Step and the reference transition
// side by side from the same states with the same random streams, on a
// correlated Gaussian with a diagonal metric at a long and a short step
// size: the trees, their lengths and the chosen points must agree.
func TestNUTSMatchesReference(t *testing.T) {
	cov := mat.NewSymDense(3, []float64{1, 0.8, 0.2, 0.8, 1, 0.3, 0.2, 0.3, 0.5})
	g := newGaussian(t, []float64{0.5, -1, 2}, cov)
	metric, err := NewDiagMetric([]float64{0.9, 1.2, 0.4})
	if err != nil {
		t.Fatal(err)
	}
	steps := checks.Size(300, 100)
	for _, eps := range []float64{0.9, 0.07} {
		k, err := NewNUTS(g, eps, metric)
		if err != nil {
			t.Fatal(err)
		}
		kRef, err := NewNUTS(g.clone(), eps, metric)
		if err != nil {
			t.Fatal(err)
		}
		s, err := k.Init([]float64{1, 0, 1})
		if err != nil {
			t.Fatal(err)
		}
		rngA := rand.New(rand.NewPCG(3, 4))
		ref := &refNUTS{k: kRef, rng: rand.New(rand.NewPCG(3, 4))}
		depths := map[int]int{}
		for it := 0; it < steps; it++ {
			start := NUTSState{Position: append([]float64(nil), s.Position...), LogDensity: s.LogDensity,
				Grad: append([]float64(nil), s.Grad...)}
			q, depth, nLeap, acc := ref.step(start)
			var info NUTSInfo
			s, info = k.Step(rngA, s)
			if info.TreeDepth != depth || info.NumLeapfrog != nLeap {
				t.Fatalf("ε = %v, transition %d: depth %d with %d steps, reference %d with %d",
					eps, it, info.TreeDepth, info.NumLeapfrog, depth, nLeap)
			}
			for i := range q {
				if s.Position[i] != q[i] {
					t.Fatalf("ε = %v, transition %d: position %v, reference %v", eps, it, s.Position, q)
				}
			}
			if math.Abs(info.AcceptProb-acc) > 1e-12 {
				t.Fatalf("ε = %v, transition %d: acceptance statistic %v, reference %v", eps, it, info.AcceptProb, acc)
			}
			depths[depth]++
		}
		t.Logf("ε = %v: tree depths %v", eps, depths)
	}
}
