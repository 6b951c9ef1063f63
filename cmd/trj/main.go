// Command trj samples models of the gallery and runs the transport reversible
// jump experiments.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "usage: trj sample|run ...")
	os.Exit(2)
}
