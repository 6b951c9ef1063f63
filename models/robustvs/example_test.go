package robustvs_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/trjgo/trj/models/robustvs"
)

// The four models, their labels and parameters' saturated positions. The
// paper's data are read by LoadData from a path; two rows of the same
// layout show the API here.
func ExampleNewSpace() {
	d, err := robustvs.ReadData(strings.NewReader(`"","y","X.1","X.2","X.3","X.4"
"1",-2.47,1,-0.63,-0.96,1.74
"2",0.51,1,0.18,-0.29,-0.35
`))
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
