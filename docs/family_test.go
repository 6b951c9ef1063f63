package docs_test

// The proposal-family example of architecture.md, checked by
// TestExtendFamily.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// snippet:family
// diagonalFamily is a family of proposals of one's own: TRJ with, for each
// model, the diagonal affine transport z_i = (θ_i − m_i)/s_i, m and s the
// means and standard deviations of the training draws.
type diagonalFamily struct{}

func (diagonalFamily) Name() string { return "diagonal" }

// Fit fits every model's transport to its pilot's training draws.
func (diagonalFamily) Fit(_ context.Context, d *trj.FitData) (trj.FittedProposals, error) {
	f := &diagonalFit{space: d.Space}
	for k, p := range d.Pilots {
		t, err := fitDiagonal(p.Train)
		if err != nil {
			return nil, fmt.Errorf("diagonal transport of model %d: %w", k, err)
		}
		f.ts = append(f.ts, t)
		f.reports = append(f.reports, trj.TransportReport{Kind: "diagonal"})
	}
	return f, nil
}

// diagonalFit is the fitted family.
type diagonalFit struct {
	space   *ppl.Space
	ts      []kernels.Transport
	reports []trj.TransportReport
}

func (f *diagonalFit) Algorithm() string              { return "TRJ" }
func (f *diagonalFit) Reports() []trj.TransportReport { return f.reports }
func (f *diagonalFit) Save(io.Writer) error           { return errors.New("diagonal transports are not saved") }

// Kernel makes one goroutine's TRJ kernel: its own clone of the space
// (which keeps scratch space) and of the flow moves; the transports keep
// none, so every kernel shares them.
func (f *diagonalFit) Kernel(jump [][]float64, within kernels.WithinModelKernel, flowMoves int) (kernels.RJKernel, error) {
	space := f.space.Clone()
	if flowMoves > 0 {
		within = kernels.NewFlowMoves(within, space, f.ts, flowMoves)
	}
	return kernels.NewTRJ(kernels.TRJConfig{Target: space, Transports: f.ts, Jump: jump, Within: within, Alternate: true})
}

// diagonal is the transport z_i = (θ_i − m_i)/s_i.
type diagonal struct{ m, s []float64 }

func fitDiagonal(draws [][]float64) (*diagonal, error) {
	if len(draws) < 2 {
		return nil, errors.New("need at least two draws")
	}
	n := len(draws[0])
	t := &diagonal{m: make([]float64, n), s: make([]float64, n)}
	col := make([]float64, len(draws))
	for i := range n {
		for r, x := range draws {
			col[r] = x[i]
		}
		if t.m[i], t.s[i] = stat.MeanStdDev(col, nil); !(t.s[i] > 0) {
			return nil, fmt.Errorf("coordinate %d does not vary", i)
		}
	}
	return t, nil
}

func (t *diagonal) Dim() int { return len(t.m) }

// Forward sets z = T(θ) and returns log|det J_T| = −Σ log s_i.
func (t *diagonal) Forward(theta, z []float64) (float64, error) {
	ld := 0.0
	for i, x := range theta {
		z[i] = (x - t.m[i]) / t.s[i]
		ld -= math.Log(t.s[i])
	}
	return ld, nil
}

// Inverse sets θ = T⁻¹(z) and returns log|det J_T⁻¹| = Σ log s_i.
func (t *diagonal) Inverse(z, theta []float64) (float64, error) {
	ld := 0.0
	for i, v := range z {
		theta[i] = t.m[i] + t.s[i]*v
		ld += math.Log(t.s[i])
	}
	return ld, nil
}

// endsnippet:family

// TestExtendFamily runs the guide's comparison of the linear and quadratic
// regressions with the diagonal family: the chains' and the bridge's
// π(quadratic | y) within 4 reported standard errors of the exact value.
func TestExtendFamily(t *testing.T) {
	x, y := guideData()
	exact := exactQuadraticProb(t, x, y)
	var models []ppl.Model
	for degree := 1; degree <= 2; degree++ {
		m, err := polynomialRegression(x, y, degree)
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
	}
	space, err := ppl.NewSpace(models, ppl.WithLabels("linear", "quadratic"))
	if err != nil {
		t.Fatal(err)
	}
	s := &trj.Settings{Seed: 1, Proposals: diagonalFamily{},
		Pilot: trj.PilotSettings{Method: trj.NUTSPilots{Warmup: 500, Draws: 1000}}, Chains: trj.ChainSettings{Chains: 4, Steps: 2000}}
	res, err := trj.Run(context.Background(), space, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exact %.4f\n%s", exact, res)
	if res.Transport != "diagonal" || res.Algorithm != "TRJ" || res.Transports[1].Kind != "diagonal" {
		t.Errorf("the result says %s with %s transports (%+v)", res.Algorithm, res.Transport, res.Transports)
	}
	if c := res.Chain[1]; !c.Mixed || math.Abs(c.P-exact) > 4*c.MCSE {
		t.Errorf("chains: %.4f ± %.4f, exact %.4f", c.P, c.MCSE, exact)
	}
	if b, se := res.Bridge.Normalized[1], res.Bridge.NormalizedSE[1]; math.Abs(b-exact) > 4*se {
		t.Errorf("bridge: %.4f ± %.4f, exact %.4f", b, se, exact)
	}
}
