package datasets_test

import (
	"bufio"
	"fmt"
	"log"

	"github.com/trjgo/trj/models/datasets"
)

// Read the header of the embedded exchange-rate data.
func ExampleOpen() {
	r, err := datasets.Open(datasets.ExchangeRates)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	s := bufio.NewScanner(r)
	s.Scan()
	fmt.Println(s.Text())
	// Output: x1,x2,x3,x4,x5,x6
}
