package glmselect_test

import (
	"context"
	"fmt"

	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/selection"
)

// Which of UScrime's 15 predictors matter, and by how much: read the data
// file, build the Gaussian space with its defaults (the unit-free g-prior)
// and run the selection (a short run here; nil settings run the defaults).
func Example() {
	f, err := datasets.Open("select/uscrime.csv") // your own: os.Open("data.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	d, err := glmselect.ReadData(f, "y", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	sp, err := glmselect.Gaussian(d.X, d.Y, &glmselect.Settings{Names: d.Names})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := selection.Run(context.Background(), sp, &selection.Settings{Seed: 1, Chains: 2, Steps: 1500})
	if err != nil {
		fmt.Println(err)
		return
	}
	for j, e := range res.PIP {
		if e.P > 0.9 {
			fmt.Printf("%s: PIP %.2f, coefficient %.1f\n", res.Names[j], e.P, float64(res.Coefficients[j].Mean))
		}
	}
	// Output:
	// Ed: PIP 0.96, coefficient 1.9
	// Ineq: PIP 1.00, coefficient 1.4
}
