package docs_test

import (
	"context"
	"testing"

	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// readmeExample is the example of the repository's README.md (snippet
// "readme"); TestReadmeExample runs it.
func readmeExample(ctx context.Context) (*kernels.SampleResult, error) {
	// snippet:readme
	b := ppl.NewBuilder()
	mu, tau, eta := b.Real("mu"), b.Positive("tau"), b.Real("eta", 8)
	theta := b.Check(gorgonia.Add(mu, b.Check(gorgonia.Mul(tau, eta))))
	y := b.Data("y", []float64{28, 8, -3, 7, -1, 1, 18, 12})
	sigma := b.Data("sigma", []float64{15, 10, 16, 11, 9, 11, 10, 18})
	b.Sample(ppl.Normal{Mu: 0, Sigma: 5}, mu)
	b.Sample(ppl.HalfCauchy{Scale: 5}, tau)
	b.Sample(ppl.Normal{Mu: 0, Sigma: 1}, eta)
	b.Sample(ppl.Normal{Mu: theta, Sigma: sigma}, y)
	model, err := b.Model()
	if err != nil {
		return nil, err
	}
	res, err := kernels.Sample(ctx, func(int) (kernels.Target, error) { return model.Clone(), nil }, &kernels.SampleSettings{Seed: 1})
	// endsnippet:readme
	return res, err
}

func TestReadmeExample(t *testing.T) {
	res, err := readmeExample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Chains) != 4 {
		t.Fatalf("%d chains, want the default 4", len(res.Chains))
	}
	// mu is the first unconstrained coordinate; its posterior mean is about
	// 4.4 with sd 3.3 (posteriordb reference), so 4 chains × 1000 draws put
	// the sample mean well inside (0, 9).
	var sum float64
	var n int
	for _, c := range res.Chains {
		for i := 0; i < len(c.Draws)/c.Dim; i++ {
			sum += c.Draw(i)[0]
			n++
		}
	}
	if m := sum / float64(n); !(m > 0 && m < 9) {
		t.Errorf("posterior mean of mu %.3f, want about 4.4", m)
	}
}
