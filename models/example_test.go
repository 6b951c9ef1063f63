package models_test

import (
	"fmt"

	"github.com/trjgo/trj/models"
)

// Lookup finds a gallery model by its command-line name; its data file is
// relative to a data folder.
func ExampleLookup() {
	e, ok := models.Lookup("eight_schools_noncentered")
	if !ok {
		return
	}
	fmt.Println(e.DataPath("data"))
	fmt.Println(e.Description)
	// Output:
	// data/posteriordb/eight_schools-eight_schools_noncentered.json
	// eight schools, non-centred hierarchical normal model (10 parameters)
}
