package posteriordb_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/trjgo/trj/models/posteriordb"
)

// A model is built from its posteriordb data file, a JSON object in Stan's
// data format; here the eight schools data are written to a temporary
// file first.
func ExampleEightSchoolsNoncentered() {
	dir, err := os.MkdirTemp("", "posteriordb")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "eight_schools.json")
	data := `{"J": 8, "y": [28, 8, -3, 7, -1, 1, 18, 12], "sigma": [15, 10, 16, 11, 9, 11, 10, 18]}`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		log.Fatal(err)
	}

	m, err := posteriordb.EightSchoolsNoncentered(path)
	if err != nil {
		log.Fatal(err)
	}
	names := m.ParamNames()
	fmt.Println("unconstrained dimension:", m.Dim())
	fmt.Println(names[0], names[8], names[9], names[10], names[17])

	// At u = 0: theta_trans = 0, mu = 0, tau = e⁰ = 1, so theta = 0.
	u := make([]float64, m.Dim())
	x := make([]float64, len(names))
	if err := m.Constrain(u, x); err != nil {
		log.Fatal(err)
	}
	fmt.Println("tau:", x[9], "theta.1:", x[10])
	// Output:
	// unconstrained dimension: 10
	// theta_trans.1 mu tau theta.1 theta.8
	// tau: 1 theta.1: 0
}

// The eight National Election Study surveys share one constructor; the
// year picks the embedded data set (trj sample -model nes1980-nes).
func ExampleNES() {
	m, err := posteriordb.NES(1980, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Dim(), m.ParamNames())
	if _, err := posteriordb.NES(1974, ""); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 10 [beta.1 beta.2 beta.3 beta.4 beta.5 beta.6 beta.7 beta.8 beta.9 sigma]
	// posteriordb: bad data: no embedded NES survey of 1974 (have [1972 1976 1980 1984 1988 1992 1996 2000])
}
