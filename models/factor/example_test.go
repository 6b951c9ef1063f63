package factor_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/trjgo/trj/models/factor"
)

// The two models of the experiment and their dimensions. The paper's data
// are read by LoadData from a path; eight made-up rows of the same layout
// show the API here (the model needs more rows than columns).
func ExampleNewSpace() {
	y, err := factor.ReadData(strings.NewReader(`x1,x2,x3,x4,x5,x6
0.81,0.99,-0.52,-0.26,0.04,0.09
-0.42,0.12,0.33,-0.91,0.27,-0.05
0.15,-0.64,0.72,0.38,-0.19,0.56
-1.10,-0.23,-0.08,0.47,0.91,-0.37
0.66,0.31,-1.24,0.05,-0.58,0.14
-0.29,0.85,0.41,-0.73,0.12,0.88
1.02,-0.47,0.19,0.64,-0.36,-0.92
-0.53,-0.76,0.25,0.11,0.69,0.33
`))
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
