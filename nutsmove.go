package trj

import (
	"context"
	"fmt"

	"github.com/trjgo/trj/internal/parallel"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// NUTSMove is a NUTS transition with the step size and metric adapted in
// the pilot (or, for pilots that adapt none, in a short warm-up from
// them).
type NUTSMove struct{}

// Name returns "NUTS".
func (NUTSMove) Name() string { return "NUTS" }

// Fit adapts a NUTS kernel, in a short warm-up from the pilot's draws, for
// every model whose pilot has none (Pilot.Metric nil), and stores it in
// the pilot; each chain's kernel is one NUTS kernel per model with the
// pilot's step size and metric.
func (NUTSMove) Fit(ctx context.Context, d *FitData) (func() (kernels.WithinModelKernel, error), error) {
	space, pilots := d.Space, d.Pilots
	err := parallel.For(ctx, len(pilots), func(ctx context.Context, k int) error {
		m, err := space.Model(k)
		if err != nil {
			return err
		}
		if err := adaptWithin(ctx, d.seed, m, k, pilots[k]); err != nil {
			return fmt.Errorf("model %q: %w", space.ModelLabel(k), err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return func() (kernels.WithinModelKernel, error) { return withinKernel(space, pilots) }, nil
}

// withinKernel is one NUTS kernel per model with the pilot's adaptation,
// over the chain's own model clones.
func withinKernel(space *ppl.Space, pilots []*pilot) (kernels.WithinModelKernel, error) {
	nuts := make([]*kernels.NUTS, len(pilots))
	for k, p := range pilots {
		m, err := space.Model(k)
		if err != nil {
			return nil, err
		}
		if nuts[k], err = kernels.NewNUTS(m.Clone(), p.StepSize, p.Metric); err != nil {
			return nil, err
		}
	}
	return kernels.NewNUTSWithin(nuts)
}
