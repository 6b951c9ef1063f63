package factor

import (
	"math"

	"github.com/trjgo/trj"
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
	// trj.AutoTrainOptions took its minibatch, validation split and
	// stopping rule from here; the paper's schedule decays from the start.
	o := trj.AutoTrainOptions()
	o.Decay1, o.Decay2 = 0.995, flows.DefaultTrainOptions().Decay2
	return o
}
