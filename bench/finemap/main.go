// Command finemap is issue 34's fine-mapping benchmark on SuSiE's own
// example, N3finemapping (n = 574 real genotypes, p = 1,001 candidate
// variants, embedded as select/n3finemapping.csv.gz): a long reference of
// the posterior inclusion probabilities under BMS's g-prior (g = n,
// beta-binomial(1, 1) model prior) by an MC3 of its own on the
// closed-form evidence, trj's selection.Run with its defaults scored
// against it, and SuSiE (susieR) on the same data, side by side; -scale
// is the scaling table on simulated block-correlated designs (scale.go).
//
// Run from the module root:
//
//	GOMAXPROCS=1 nice go run ./bench/finemap -ref bench/finemap/testdata/n3_reference.json -chains 16 -steps 30000000 -batches 20
//	go run ./bench/finemap -trj -seed 1 [-save run1.json]
//	go run ./bench/finemap -rescore run1.json run2.json run3.json
//	go run ./bench/finemap -susie
//	go run ./bench/finemap -scale [-scale-n 574,5000 -scale-p 1000,3000,10000]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/trjgo/trj/bench/internal/mc3"
	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/glmselect"
)

// dataName is the embedded data set: y, then v1..v1001.
const dataName = datasets.FineMapping

func main() {
	ref := flag.String("ref", "", "compute the MC3 reference and write it to this JSON file")
	chains := flag.Int("chains", 16, "-ref: chains")
	steps := flag.Int("steps", 30000000, "-ref: kept steps per chain (a multiple of -batches)")
	batches := flag.Int("batches", 20, "-ref: batches per chain for the MCSE")
	trjRun := flag.Bool("trj", false, "run selection.Run with its defaults and score it against -against")
	against := flag.String("against", "bench/finemap/testdata/n3_reference.json", "-trj, -susie: the reference JSON")
	susie := flag.Bool("susie", false, "run bench/finemap/susie.R (susieR::susie, L = 10) on the same data")
	save := flag.String("save", "", "-trj: also write the run's PIPs, CPU and memory to this JSON file")
	rescoreRuns := flag.Bool("rescore", false, "score the runs saved by -trj -save (the arguments) against -against")
	scale := flag.Bool("scale", false, "the scaling table: simulated block-correlated designs of -scale-n rows × -scale-p columns")
	scaleN := flag.String("scale-n", "574,5000", "-scale: rows")
	scaleP := flag.String("scale-p", "1000,3000,10000", "-scale: columns")
	scaleOneNP := flag.String("scale-one", "", "-scale's child: run n,p and print its row as JSON")
	seed := flag.Uint64("seed", 1, "seed")
	flag.Parse()
	var err error
	switch {
	case *ref != "":
		err = reference(*ref, *seed, *chains, *steps, *batches)
	case *trjRun:
		err = scoreTrj(*against, *save, *seed)
	case *rescoreRuns:
		err = rescore(*against, flag.Args())
	case *susie:
		err = runSusie(*against)
	case *scale:
		var ns, ps []int
		if ns, err = parseInts(*scaleN); err == nil {
			if ps, err = parseInts(*scaleP); err == nil {
				err = scaleTable(ns, ps, *seed)
			}
		}
	case *scaleOneNP != "":
		var np []int
		if np, err = parseInts(*scaleOneNP); err == nil && len(np) != 2 {
			err = fmt.Errorf("-scale-one %q: want n,p", *scaleOneNP)
		}
		if err == nil {
			err = scaleOne(np[0], np[1], *seed)
		}
	default:
		err = fmt.Errorf("nothing to do: give -ref FILE, -trj, -susie or -scale")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "finemap:", err)
		os.Exit(1)
	}
}

// readN3 reads the embedded data set.
func readN3() (*glmselect.Data, error) {
	f, err := datasets.Open(dataName)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return glmselect.ReadData(f, "y", nil)
}

// Reference is the JSON of the MC3 reference.
type Reference struct {
	What    string    `json:"what"`
	Data    string    `json:"data"`
	Command string    `json:"command"`
	Chains  int       `json:"chains"`
	Steps   int       `json:"steps_per_chain"`
	Burn    int       `json:"burn_in_per_chain"`
	Batches int       `json:"batches_per_chain"`
	Seed    uint64    `json:"seed"`
	CPU     float64   `json:"cpu_seconds"`
	Names   []string  `json:"names"`
	PIP     []float64 `json:"pip"`
	// MCSE is each PIP's standard error by batch means: the spread of the
	// chains × batches batch estimates over the root of their number.
	MCSE []float64 `json:"mcse"`
	// ChainSpread is the largest standard deviation of a PIP over the
	// chains' own estimates, over the root of chains: a check of MCSE
	// that needs no independence between a chain's batches.
	ChainSpread float64 `json:"max_chain_mcse"`
}

func reference(path string, seed uint64, chains, steps, batches int) error {
	if chains < 2 || batches < 1 || steps%batches != 0 {
		return fmt.Errorf("-ref: want at least 2 chains and -steps a multiple of -batches, got %d chains, %d steps, %d batches", chains, steps, batches)
	}
	d, err := readN3()
	if err != nil {
		return err
	}
	n, p := d.X.Dims()
	x := make([][]float64, n)
	for i := range x {
		x[i] = d.X.RawRowView(i)
	}
	cpu0 := cpuSeconds()
	g := mc3.New(x, d.Y)
	burn := steps / 10
	per := make([][][]float64, chains)
	var wg sync.WaitGroup
	for c := range chains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			per[c] = g.Chain(seed, c, burn, steps, batches)
		}()
	}
	wg.Wait()
	r := Reference{
		What: "PIPs of N3finemapping (susieR; y = Y[,1], 1,001 genotype columns) under Zellner's g-prior as BMS uses it (g = n = 574, flat intercept, p(σ²) ∝ 1/σ²; exactly collinear models get no mass) and the beta-binomial(1, 1) model prior, " +
			"by MC3 (uniform add/drop or swap, each with probability 1/2) on the closed-form evidence, written in bench/internal/mc3 independently of trj's selection and glmselect; each chain starts from the empty model",
		Data: "embedded:" + dataName, Command: "GOMAXPROCS=1 nice go run ./bench/finemap " + strings.Join(os.Args[1:], " "),
		Chains: chains, Steps: steps, Burn: burn, Batches: batches, Seed: seed, Names: d.Names,
		PIP: make([]float64, p), MCSE: make([]float64, p)}
	m := float64(chains * batches)
	for j := range p {
		var mean float64
		chainMean := make([]float64, chains)
		for c := range chains {
			for b := range batches {
				mean += per[c][b][j]
				chainMean[c] += per[c][b][j] / float64(batches)
			}
		}
		mean /= m
		var s, sc float64
		for c := range chains {
			for b := range batches {
				s += (per[c][b][j] - mean) * (per[c][b][j] - mean)
			}
			sc += (chainMean[c] - mean) * (chainMean[c] - mean)
		}
		r.PIP[j] = mean
		r.MCSE[j] = math.Sqrt(s / (m - 1) / m)
		r.ChainSpread = max(r.ChainSpread, math.Sqrt(sc/float64(chains-1)/float64(chains)))
	}
	r.CPU = cpuSeconds() - cpu0
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d chains × %d steps in %.0f CPU-s (GOMAXPROCS %d)\n", path, chains, steps, r.CPU, runtime.GOMAXPROCS(0))
	for _, j := range topTerms(r.PIP, 10) {
		fmt.Printf("  %-6s %.4f ± %.4f\n", r.Names[j], r.PIP[j], r.MCSE[j])
	}
	return nil
}

// topTerms returns the indices of the k largest values of pip, largest
// first.
func topTerms(pip []float64, k int) []int {
	idx := make([]int, len(pip))
	for j := range idx {
		idx[j] = j
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case pip[a] > pip[b]:
			return -1
		case pip[a] < pip[b]:
			return 1
		}
		return 0
	})
	return idx[:min(k, len(idx))]
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
