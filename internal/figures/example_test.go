package figures_test

import (
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"github.com/trjgo/trj/internal/figures"
)

func ExampleRunningEstimates() {
	dir, err := os.MkdirTemp("", "figures")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// Two proposal types, two chains each: running estimates of π(k=2).
	series := map[string][][]float64{
		"affine": {{1, 0.5, 0.67, 0.75}, {0, 0.5, 0.67, 0.75}},
		"exact":  {{1, 1, 0.67, 0.75}, {1, 0.5, math.NaN(), 0.75}},
	}
	skipped, err := figures.RunningEstimates(filepath.Join(dir, "sas_trace.png"),
		"Sinh-arcsinh target", series, 0.75, figures.WithOrder("exact"))
	fmt.Println(skipped, err)
	// Output: 1 <nil>
}

func ExampleViolins() {
	dir, err := os.MkdirTemp("", "figures")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	groups := []figures.Group{
		{Name: "indep. RJ", Values: []float64{0.70, 0.95, 0.81, 0.90, 0.99}},
		{Name: "RQMA-NF TRJ", Values: []float64{0.87, 0.88, 0.89, 0.88, 0.875}},
	}
	skipped, err := figures.Violins(filepath.Join(dir, "fa_bbe.svg"), "two-factor model", groups, 0.88)
	fmt.Println(skipped, err)
	// Output: 0 <nil>
}

func ExampleScatter() {
	dir, err := os.MkdirTemp("", "figures")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	draws := [][]float64{{0.1, 0.2, 0.3}, {0.4, 0.1, 0.2}, {-0.3, 0.5, 0.0}}
	pts, err := figures.Marginal(draws, 0, 2) // (θ₁, θ₃)
	if err != nil {
		log.Fatal(err)
	}
	panels := []figures.ScatterPanel{
		{Title: "source", XLabel: "θ₁", YLabel: "θ₃", Layers: []figures.ScatterLayer{{Name: "k=1", Points: pts}}},
		{Title: "affine", XLabel: "θ₁", YLabel: "θ₃", Background: pts, BackgroundName: "exact",
			Layers: []figures.ScatterLayer{{Name: "proposed", Points: pts}}},
	}
	skipped, err := figures.Scatter(filepath.Join(dir, "proposals.png"), "", panels, figures.WithColumns(2))
	fmt.Println(skipped, err)
	// Output: 0 <nil>
}
