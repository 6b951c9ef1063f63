package draws_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/trjgo/trj/ppl/draws"
)

// Draws of two chains, written in CmdStan's CSV layout and read back.
func Example() {
	d, err := draws.New(draws.Layout{Diagnostics: []string{draws.LP}, Params: []string{"mu", "sigma"}}, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	for c := range 2 {
		for i := range 2 {
			mu, sigma := float64(c)+0.5*float64(i), 1.25
			lp := -mu * mu / 2
			if err := d.Append(c, []float64{mu, sigma}, []float64{lp}); err != nil {
				fmt.Println(err)
				return
			}
		}
	}
	var csv strings.Builder
	if err := d.WriteCSV(&csv, 1, []draws.Setting{{Key: "seed", Value: "1"}, {Key: "num_samples", Value: "2"}}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(csv.String())

	back, config, err := draws.ReadCSV(strings.NewReader(csv.String()))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(back.Layout().Params, back.Len(0), back.Params(0, 1), config[0])
	// Output:
	// # seed = 1
	// # num_samples = 2
	// lp__,mu,sigma
	// -0.5,1,1.25
	// -1.125,1.5,1.25
	// [mu sigma] 2 [1.5 1.25] {seed 1}
}

// A stansummary-style table of a transdimensional run.
func ExampleSummary_WriteTable() {
	rng := rand.New(rand.NewPCG(1, 2))
	d, _ := draws.New(draws.Layout{Params: []string{"mu"}, Transdimensional: true}, 4)
	for c := range 4 {
		for range 1000 {
			k := 1
			if rng.Float64() < 0.25 {
				k = 2
			}
			_ = d.AppendModel(c, k, []float64{float64(k) + rng.NormFloat64()}, nil)
		}
	}
	s, err := draws.Summarize(d)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = s.WriteTable(os.Stdout)
	// Output:
	// 4 chains: each with 1000 draws; 4000 draws in all.
	//
	//           Mean      MCSE    StdDev        5%       50%       95%  ESS_bulk  ESS_tail     R_hat
	// mu        1.23    0.0172      1.08    -0.514      1.22      3.02      3912      4050     1.002
	//
	// model__      Draws      Prob      MCSE
	// 1             3009    0.7522    0.0068
	// 2              991    0.2477    0.0068
	//
	// ESS_bulk and ESS_tail are the rank-normalized bulk and tail effective sample sizes, MCSE the
	// Monte Carlo standard error of the mean, and R_hat the larger of the rank-normalized bulk and
	// folded split-R̂ (Vehtari et al. 2021); R_hat > 1.01 means the chains have not mixed.
}

// Streaming a transdimensional chain while it runs.
func ExampleCSVWriter() {
	l := draws.Layout{Diagnostics: []string{draws.LP}, Params: []string{"beta.1", "beta.2"}, Transdimensional: true}
	cw, err := draws.NewCSVWriter(os.Stdout, l, []draws.Setting{{Key: "algorithm", Value: "trj"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	nan := math.NaN()
	_ = cw.WriteModel(1, []float64{0.5, nan}, []float64{-1.5}) // beta.2 is not in model 1
	_ = cw.WriteModel(2, []float64{0.25, -1}, []float64{-2})
	if err := cw.Flush(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// # algorithm = trj
	// lp__,model__,beta.1,beta.2
	// -1.5,1,0.5,nan
	// -2,2,0.25,-1
}
