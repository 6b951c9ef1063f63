package ppl_test

import (
	"fmt"
	"log"

	"gorgonia.org/gorgonia"

	"github.com/trjgo/trj/ppl"
)

// Variable selection over two predictors with a noise scale shared by every
// model: each model declares its coefficients, then sigma last, and
// WithShared(1) keeps sigma at the last saturated position in every model.
func ExampleWithShared() {
	x := [][]float64{{0.5, -1}, {1.2, 0.3}, {-0.7, 2}, {0.1, 0.4}}
	y := []float64{0.9, 1.1, -1.6, 0.2}
	ind := [][]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}}
	var models []ppl.Model
	for _, in := range ind {
		var cols []int
		for j, on := range in {
			if on == 1 {
				cols = append(cols, j)
			}
		}
		b := ppl.NewBuilder()
		var beta *gorgonia.Node
		if len(cols) > 0 {
			beta = b.Real("beta", len(cols))
			b.Sample(ppl.Normal{Mu: 0, Sigma: 2}, beta)
		}
		sigma := b.Positive("sigma") // shared: declared last in every model
		b.Sample(ppl.HalfNormal{Sigma: 1}, sigma)
		var mu any = 0.0
		if beta != nil {
			design := make([]float64, 0, len(y)*len(cols))
			for _, row := range x {
				for _, c := range cols {
					design = append(design, row[c])
				}
			}
			mu = b.Check(gorgonia.Mul(b.Data("X", design, len(y), len(cols)), beta))
		}
		b.Sample(ppl.Normal{Mu: mu, Sigma: sigma}, b.Data("y", y))
		m, err := b.Model()
		if err != nil {
			log.Fatal(err)
		}
		models = append(models, m)
	}
	s, err := ppl.NewSpace(models, ppl.WithIndicators(ind),
		ppl.WithPositions(ppl.IndicatorPositions(ind)), ppl.WithShared(1))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("saturated dimension", s.MaxDim(), "shared", s.NumShared())
	for k := range s.NumModels() {
		pos, _ := s.Positions(k)
		fmt.Println(s.ModelLabel(k), pos)
	}
	// Output:
	// saturated dimension 3 shared 1
	// 0,0 [2]
	// 1,0 [0 2]
	// 0,1 [1 2]
	// 1,1 [0 1 2]
}
