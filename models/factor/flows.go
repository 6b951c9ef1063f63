package factor

import (
	"math"

	"github.com/trjgo/trj/flows"
)

// PaperRQMAConfig returns the RQMA architecture of the paper's
// factor-analysis experiment: flows.PaperRQMAConfig with the sigmoid scale
// √(8/π), which makes the sigmoid close to the standard normal CDF.
func PaperRQMAConfig() flows.RQMAConfig {
	c := flows.PaperRQMAConfig()
	c.SigmoidScale = math.Sqrt(8 / math.Pi)
	return c
}

// PaperTrainOptions returns the paper's factor-analysis training settings:
// decay 0.995 for 200 steps then 0.9971, at most 3000 iterations, minibatch
// 32 (never doubled), a 10% validation split and stopping when the
// 100-iteration mean validation loss stops decreasing.
func PaperTrainOptions() flows.TrainOptions {
	o := flows.DefaultTrainOptions()
	o.Decay1 = 0.995
	o.Iterations = 3000
	o.BatchSize = 32
	o.DoubleAt = nil
	o.ValidationFraction = 0.1
	// Four validation evaluations per 100-iteration window: evaluating the
	// whole held-out set every iteration would cost more than training.
	o.ValidateEvery = 25
	o.StopWindow = 100
	return o
}
