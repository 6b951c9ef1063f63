package factor_test

import (
	"fmt"
	"log"

	"github.com/trjgo/trj/models/factor"
)

// The two models of the experiment and their dimensions.
func ExampleNewSpace() {
	y, err := factor.LoadData("../../../shared/data/exchange_rates_standardized.csv")
	if err != nil {
		log.Fatal(err)
	}
	space, err := factor.NewSpace(y)
	if err != nil {
		log.Fatal(err)
	}
	for k := 0; k < space.NumModels(); k++ {
		fmt.Printf("%s factors: %d parameters\n", space.ModelLabel(k), space.ModelDim(k))
	}
	// Output:
	// 2 factors: 17 parameters
	// 3 factors: 21 parameters
}

// The TRJ map between the models keeps shared parameters aligned: the
// 3-factor coordinate of log β₂₂ takes the 2-factor one, while log β₃₃
// takes an auxiliary.
func ExampleAlignment() {
	l2, l3 := factor.NewLayout(6, 2), factor.NewLayout(6, 3)
	perm := factor.Alignment(l2, l3)
	fmt.Println(perm[l3.LogDiag[1]] == l2.LogDiag[1], perm[l3.LogDiag[2]] >= l2.Dim())
	// Output: true true
}
