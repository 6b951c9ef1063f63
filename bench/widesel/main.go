// Command widesel is issue 32's p > n problem: it writes the data set
// (n = 47 rows, p = 100 block-correlated predictors, six effects), computes
// its reference posterior inclusion probabilities under Zellner's g-prior
// with g = n and the beta-binomial(1, 1) model prior by a long MC3 on the
// closed-form evidence (independent of trj's samplers and of
// models/glmselect), and runs trj's selection.Run on it, scoring each run
// against the reference with its CPU time and peak memory.
//
// Run from the module root:
//
//	go run ./bench/widesel -data models/datasets/select/wide_p100.csv
//	go run ./bench/widesel -ref bench/widesel/reference.json -chains 8 -steps 4000000
//	go run ./bench/widesel -trj -informed -steps 20000 -seed 1
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"sync"

	"github.com/trjgo/trj/bench/internal/mc3"
)

func main() {
	data := flag.String("data", "", "write the data set to this CSV file")
	ref := flag.String("ref", "", "compute the MC3 reference and write it to this JSON file")
	chains := flag.Int("chains", 8, "reference: chains")
	steps := flag.Int("steps", 2000000, "reference: kept steps per chain; -trj: kept steps per chain")
	trjRun := flag.Bool("trj", false, "run selection.Run and score it against -against")
	against := flag.String("against", "bench/widesel/reference.json", "-trj: the reference JSON")
	informed := flag.Bool("informed", false, "-trj: informed jumps")
	seed := flag.Uint64("seed", 1, "seed")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "widesel:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	x, y := wideData()
	var err error
	switch {
	case *data != "":
		err = os.WriteFile(*data, csv(x, y), 0o644)
	case *ref != "":
		err = reference(*ref, x, y, *seed, *chains, *steps)
	case *trjRun:
		err = score(*against, x, y, *seed, *steps, *informed)
	default:
		err = fmt.Errorf("nothing to do: give -data, -ref or -trj")
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "widesel:", err)
		os.Exit(1)
	}
}

// Reference is the JSON of the MC3 reference.
type Reference struct {
	What   string    `json:"what"`
	Chains int       `json:"chains"`
	Steps  int       `json:"steps_per_chain"`
	PIP    []float64 `json:"pip"`
	// MCSE is each PIP's standard error from the spread of the chains'
	// estimates.
	MCSE []float64 `json:"mcse"`
}

func reference(path string, x [][]float64, y []float64, seed uint64, chains, steps int) error {
	g := mc3.New(x, y)
	per := make([][]float64, chains)
	var wg sync.WaitGroup
	for c := range chains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			per[c] = g.Chain(seed, c, steps/10, steps, 1)[0]
		}()
	}
	wg.Wait()
	r := Reference{What: "PIPs of wide_p100 under the g-prior (g = n, flat intercept, p(σ²) ∝ 1/σ²) and the beta-binomial(1, 1) model prior, by MC3 on the closed-form evidence",
		Chains: chains, Steps: steps, PIP: make([]float64, g.P()), MCSE: make([]float64, g.P())}
	for j := range g.P() {
		var m, s float64
		for c := range chains {
			m += per[c][j]
		}
		m /= float64(chains)
		for c := range chains {
			s += (per[c][j] - m) * (per[c][j] - m)
		}
		r.PIP[j] = m
		r.MCSE[j] = math.Sqrt(s / float64(chains-1) / float64(chains))
	}
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
