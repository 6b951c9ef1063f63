package trj

import (
	"context"
	"fmt"
	"io"

	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl"
)

// Conditional trains one conditional RQMA flow on the saturated space of
// all models and runs CTRJ (Algorithm 2 of the paper) with it.
type Conditional struct {
	// RQMA is the flow configuration (flows.PaperRQMAConfig when nil).
	RQMA *flows.RQMAConfig
	// Train configures training (flows.ConditionalTrainOptions when nil);
	// its Seed and Workers are the run's.
	Train *flows.TrainOptions
	// Aux is CTRJ's auxiliary density ν (the standard normal when nil).
	Aux kernels.AuxiliaryDensity
}

// Name implements Proposals.
func (c *Conditional) Name() string { return "conditional RQMA" }

// Reload implements Reloader.
func (c *Conditional) Reload(set io.Reader) Proposals {
	return &LoadedTransports{From: set, Aux: c.Aux}
}

// Fit implements Proposals.
func (c *Conditional) Fit(ctx context.Context, d *FitData) (FittedProposals, error) {
	space := d.Space
	K := space.NumModels()
	spec := flows.ConditionalSpec{Active: space.ActiveMasks(), Contexts: make([][]float64, K)}
	for k := range K {
		spec.Contexts[k] = make([]float64, K)
		spec.Contexts[k][k] = 1
	}
	var x [][]float64
	var models []int
	for k, p := range d.Pilots {
		for _, th := range p.Train {
			xi := make([]float64, space.MaxDim())
			u := make([]float64, space.MaxDim()-len(th))
			if err := space.Concat(k, th, u, xi); err != nil {
				return nil, fmt.Errorf("trj: conditional flow: %w", err)
			}
			x = append(x, xi)
			models = append(models, k)
		}
	}
	cfg := flows.PaperRQMAConfig()
	if c.RQMA != nil {
		cfg = *c.RQMA
	}
	opts := flows.ConditionalTrainOptions()
	if c.Train != nil {
		opts = *c.Train
	}
	opts.Seed = d.Seed("conditional", 0)
	opts.Workers = 1
	f, _, err := flows.FitConditionalRQMA(ctx, spec, x, models, cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("trj: conditional flow: %w", err)
	}
	return newCTRJFit(space, f, c.Aux, "conditional RQMA"), nil
}

// ctrjFit is a fitted CTRJ family: a conditional flow, or the identity
// (nil flow) for independent auxiliaries.
type ctrjFit struct {
	space   *ppl.Space
	flow    *flows.ConditionalRQMA
	aux     kernels.AuxiliaryDensity
	reports []TransportReport
}

func newCTRJFit(space *ppl.Space, f *flows.ConditionalRQMA, aux kernels.AuxiliaryDensity, kind string) *ctrjFit {
	reports := make([]TransportReport, space.NumModels())
	for k := range reports {
		reports[k] = TransportReport{Kind: kind}
	}
	return &ctrjFit{space: space, flow: f, aux: aux, reports: reports}
}

func (c *ctrjFit) Algorithm() string            { return "CTRJ" }
func (c *ctrjFit) Reports() []TransportReport   { return c.reports }
func (c *ctrjFit) Flow() *flows.ConditionalRQMA { return c.flow }

// Kernel implements FittedProposals: CTRJ, with flowMoves independence
// moves from the conditional flow (none with the identity, which proposes
// nothing).
func (c *ctrjFit) Kernel(jump [][]float64, within kernels.WithinModelKernel, flowMoves int) (kernels.RJKernel, error) {
	space := c.space.Clone()
	var cond kernels.ConditionalTransport
	if c.flow != nil {
		cond = c.flow.Clone()
		if flowMoves > 0 {
			within = kernels.NewConditionalFlowMoves(within, space, cond, c.aux, flowMoves)
		}
	}
	return kernels.NewCTRJ(kernels.CTRJConfig{
		Target: space, Transport: cond, Active: space.ActiveMasks(), Jump: jump, Within: within, Alternate: true, Aux: c.aux,
	})
}

// Save implements FittedProposals.
func (c *ctrjFit) Save(w io.Writer) error {
	if c.flow == nil {
		return fmt.Errorf("trj: the identity transport has nothing to save")
	}
	set := []flows.Labeled{{Model: conditionalLabel, Dim: c.flow.MaxDim(), Flow: c.flow}}
	if err := flows.SaveSet(w, set); err != nil {
		return fmt.Errorf("trj: saving the conditional transport: %w", err)
	}
	return nil
}

// conditionalLabel labels the one flow of a saved conditional transport.
const conditionalLabel = "*"
