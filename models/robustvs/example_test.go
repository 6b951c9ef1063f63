package robustvs_test

import (
	"fmt"
	"log"

	"github.com/trjgo/trj/models/robustvs"
)

// The four models, their labels and parameters' saturated positions.
func ExampleNewSpace() {
	d, err := robustvs.LoadData("../../../shared/data/robust_regression_vs.csv")
	if err != nil {
		log.Fatal(err)
	}
	space, err := robustvs.NewSpace(d)
	if err != nil {
		log.Fatal(err)
	}
	for k := 0; k < space.NumModels(); k++ {
		pos, _ := space.Positions(k)
		fmt.Printf("(%s): β at %v\n", space.ModelLabel(k), pos)
	}
	// Output:
	// (1,0,0,0): β at [0]
	// (1,1,0,0): β at [0 1]
	// (1,0,1,1): β at [0 2 3]
	// (1,1,1,1): β at [0 1 2 3]
}
