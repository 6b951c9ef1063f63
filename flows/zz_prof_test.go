package flows

import (
	"math/rand/v2"
	"testing"
)

func TestZZProf(t *testing.T) {
	x := sas2().draw(rand.New(rand.NewPCG(1, 1)), 2000)
	o := DefaultTrainOptions()
	o.Iterations = 400
	o.Seed = 1
	_, rep, err := FitRQMA(x, PaperRQMAConfig(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Elapsed)
}
