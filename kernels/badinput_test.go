package kernels

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// flat is the improper uniform density on R^n.
type flat int

func (f flat) Dim() int { return int(f) }
func (f flat) LogDensityGrad(x, grad []float64) (float64, error) {
	clear(grad)
	return 0, nil
}

// targetFunc is a target given by a function.
type targetFunc struct {
	n int
	f func(x, grad []float64) (float64, error)
}

func (t targetFunc) Dim() int                                          { return t.n }
func (t targetFunc) LogDensityGrad(x, grad []float64) (float64, error) { return t.f(x, grad) }

// TestBadInputsKernels runs the kernels on inputs that once gave silent,
// wrong or unclear results; each must now give a clear error.
func TestBadInputsKernels(t *testing.T) {
	targetErr := errors.New("data file has 3 rows, the model needs 5")
	cases := []struct {
		name string
		run  func() error
		want string // in the error message
	}{
		{"RWM on an improper flat target", func() error {
			_, err := Sample(context.Background(), func(int) (Target, error) { return flat(2), nil }, &SampleSettings{Method: RWMMethod{}, Chains: 1, Warmup: 1000, Draws: 10})
			return err
		}, "improper"},
		{"NUTS on an improper flat target", func() error {
			_, err := Sample(context.Background(), func(int) (Target, error) { return flat(2), nil }, &SampleSettings{Chains: 1, Warmup: 100, Draws: 10})
			return err
		}, "improper"},
		{"target's own error at every initial point", func() error {
			_, err := Sample(context.Background(), func(int) (Target, error) {
				return targetFunc{1, func(x, g []float64) (float64, error) { return 0, targetErr }}, nil
			}, &SampleSettings{Chains: 1, Draws: 10})
			if !errors.Is(err, targetErr) || !errors.Is(err, ErrNoFinitePoint) {
				return errors.New("cause lost: " + err.Error())
			}
			return err
		}, "the model needs 5"},
		{"NaN gradient at every initial point", func() error {
			_, err := Sample(context.Background(), func(int) (Target, error) {
				return targetFunc{2, func(x, g []float64) (float64, error) { g[0], g[1] = 0, math.NaN(); return -1, nil }}, nil
			}, &SampleSettings{Chains: 1, Draws: 10})
			return err
		}, "gradient entry 1 is NaN"},
		{"NUTS.Init at a point where the target fails", func() error {
			k, err := NewNUTS(targetFunc{1, func(x, g []float64) (float64, error) { return 0, targetErr }}, 1, nil)
			if err != nil {
				return err
			}
			_, err = k.Init([]float64{0})
			return err
		}, "the model needs 5"},
		{"RWM.Init at a NaN log-density", func() error {
			k, err := NewRWM(targetFunc{1, func(x, g []float64) (float64, error) { return math.NaN(), nil }}, 1, nil)
			if err != nil {
				return err
			}
			_, err = k.Init([]float64{0})
			return err
		}, "log-density NaN"},
		{"NUTS step size set to 0 after construction", func() error {
			g := newGaussian(t, []float64{0}, diagCov([]float64{1}))
			k, err := NewNUTS(g, 0.5, nil)
			if err != nil {
				return err
			}
			s, err := k.Init([]float64{0.3})
			if err != nil {
				return err
			}
			k.StepSize = 0
			s2, info := k.Step(rand.New(rand.NewPCG(1, 1)), s)
			if !info.Divergent || s2.Position[0] != 0.3 {
				return errors.New("Step with step size 0 looked normal")
			}
			ad, err := NewNUTSAdaptation(k, 100, NUTSAdaptConfig{})
			if err != nil {
				return err
			}
			_, _, err = ad.Step(rand.New(rand.NewPCG(1, 1)), s2)
			return err
		}, "step size 0"},
		{"NUTS MaxTreeDepth -3", func() error {
			g := newGaussian(t, []float64{0}, diagCov([]float64{1}))
			k, err := NewNUTS(g, 0.5, nil)
			if err != nil {
				return err
			}
			k.MaxTreeDepth = -3
			return k.Validate()
		}, "tree depth -3"},
		{"a Method whose NewChain returns no chain and no error", func() error {
			g := newGaussian(t, []float64{0}, diagCov([]float64{1}))
			_, err := Sample(context.Background(), gaussianFactory(g), &SampleSettings{Method: nilChainMethod{}, Chains: 2, Warmup: 10, Draws: 10})
			return err
		}, "kernels.nilChainMethod.NewChain returned a nil chain"},
		{"a Method whose chain steps to a point of the wrong length", func() error {
			g := newGaussian(t, []float64{0, 0}, diagCov([]float64{1, 1}))
			_, err := Sample(context.Background(), gaussianFactory(g), &SampleSettings{Method: shortStepMethod{}, Chains: 1, Warmup: 10, Draws: 10})
			return err
		}, "position of length 1, want 2"},
		{"warm-up of math.MaxInt iterations", func() error {
			g := newGaussian(t, []float64{0}, diagCov([]float64{1}))
			k, err := NewNUTS(g, 0.5, nil)
			if err != nil {
				return err
			}
			if _, err := NewNUTSAdaptation(k, math.MaxInt, NUTSAdaptConfig{}); err != nil {
				return err
			}
			_, err = Sample(context.Background(), gaussianFactory(g), &SampleSettings{Warmup: math.MaxInt})
			return err
		}, "overflow"},
	}
	for _, c := range cases {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// nilChainMethod is a user Method whose NewChain returns (nil, nil).
type nilChainMethod struct{}

func (nilChainMethod) DiagnosticColumns() []string { return nil }
func (nilChainMethod) NewChain(Target, []float64, int) (MethodChain, error) {
	return nil, nil
}

// shortStepMethod is a user Method whose chain returns a position one
// element short of the target's dimension.
type shortStepMethod struct{}

func (shortStepMethod) DiagnosticColumns() []string { return nil }
func (shortStepMethod) NewChain(t Target, x0 []float64, _ int) (MethodChain, error) {
	return shortChain{x0[:len(x0)-1]}, nil
}

type shortChain struct{ x []float64 }

func (c shortChain) Step(*rand.Rand, int) ([]float64, DrawInfo, error) { return c.x, DrawInfo{}, nil }
func (shortChain) Adapted(*Chain)                                      {}
func (shortChain) GradEvals() int                                      { return 0 }
