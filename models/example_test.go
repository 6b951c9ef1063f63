package models_test

import (
	"fmt"
	"log"

	"github.com/trjgo/trj/models"
)

// Lookup finds a gallery model by its command-line name; New("") builds
// it on its own data set, which ships with trj.
func ExampleLookup() {
	e, ok := models.Lookup("eight_schools_noncentered")
	if !ok {
		return
	}
	m, err := e.New("")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.Description)
	fmt.Println("data set:", e.DataFile)
	fmt.Println("dimension:", m.Dim())
	// Output:
	// eight schools, non-centred hierarchical normal model (10 parameters)
	// data set: posteriordb/eight_schools-eight_schools_noncentered.json
	// dimension: 10
}
