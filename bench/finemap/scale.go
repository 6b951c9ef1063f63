package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/selection"
)

// Profiling a configuration: -scale-one's CPU and heap profiles (the heap
// one at the run's end, with every allocation since the start: pprof's
// -sample_index=alloc_space) and a shorter run (-scale-steps, default
// selection's).
var (
	scaleCPUProfile = flag.String("scale-cpuprofile", "", "-scale-one: write a CPU profile of Gaussian and selection.Run to this file")
	scaleMemProfile = flag.String("scale-memprofile", "", "-scale-one: write a heap profile at the run's end to this file")
	scaleSteps      = flag.Int("scale-steps", 0, "-scale-one: kept steps per chain (0: selection's default)")
)

// scaleRow is one line of the scaling table: a block-correlated design of
// n rows and p columns, selection.Run with its defaults but the seed.
type scaleRow struct {
	N, P, Blocks int
	Causal       []int
	// DataMB is the resident memory once the design and y are built (the
	// user's data), PeakMB the peak over the whole process.
	DataMB, PeakMB int64
	// SetupCPU is glmselect.Gaussian's CPU-s, CPU the whole run's
	// (Gaussian and selection.Run), both by getrusage.
	SetupCPU, CPU float64
	// MaxRhat is the largest R̂ of a mixed PIP, MinESS the smallest ESS
	// of a mixed term of PIP ≥ 0.1, Top the five largest PIPs.
	MaxRhat, MinESS float64
	Top             []scaleTerm
	Warnings        int
	// NaN counts the mixed terms whose R̂ or ESS the chains could not
	// estimate (NaN) or whose R̂ is +Inf (chains at different constant
	// values; pipeline.Estimate), left out of MaxRhat and MinESS.
	NaN int
}

type scaleTerm struct {
	Name           string
	PIP, ESS, Rhat float64
}

// scaleDesign simulates n rows of p predictors in blocks of 10 to 50
// columns, correlated 0.9 to 0.95 inside a block (a shared factor) and
// independent across blocks, and y from three causal columns in blocks
// at 1/6, 1/2 and 5/6 of the design, effects 0.25, −0.25, 0.25 on unit
// noise.
func scaleDesign(n, p int, seed uint64) (*mat.Dense, []float64, []string, int, []int) {
	rng := rand.New(rand.NewPCG(seed, uint64(n)<<32|uint64(p)))
	var starts []int
	var rho []float64
	for j := 0; j < p; {
		starts = append(starts, j)
		rho = append(rho, 0.9+0.05*rng.Float64())
		j += 10 + rng.IntN(41)
	}
	starts = append(starts, p)
	nb := len(rho)
	var causal []int
	for _, f := range []float64{1.0 / 6, 0.5, 5.0 / 6} {
		b := int(f * float64(nb))
		causal = append(causal, starts[b]+rng.IntN(starts[b+1]-starts[b]))
	}
	beta := []float64{0.25, -0.25, 0.25}
	X := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := range n {
		row := X.RawRowView(i)
		for b := range nb {
			z, a, e := rng.NormFloat64(), math.Sqrt(rho[b]), math.Sqrt(1-rho[b])
			for j := starts[b]; j < starts[b+1]; j++ {
				row[j] = a*z + e*rng.NormFloat64()
			}
		}
		y[i] = rng.NormFloat64()
		for c, j := range causal {
			y[i] += beta[c] * row[j]
		}
	}
	names := make([]string, p)
	for j := range names {
		names[j] = "v" + strconv.Itoa(j+1)
	}
	return X, y, names, nb, causal
}

// scaleOne runs one configuration in this process and prints its row as
// JSON, so that its peak memory is its own.
func scaleOne(n, p int, seed uint64) error {
	X, y, names, nb, causal := scaleDesign(n, p, seed)
	runtime.GC()
	debug.FreeOSMemory()
	row := scaleRow{N: n, P: p, Blocks: nb, Causal: causal, DataMB: residentMB()}
	if *scaleMemProfile != "" {
		runtime.MemProfileRate = 64 << 10
		stop := make(chan struct{})
		defer close(stop)
		go heapAtPeak(*scaleMemProfile+".peak", stop)
	}
	if *scaleCPUProfile != "" {
		f, err := os.Create(*scaleCPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	cpu0 := cpuSeconds()
	sp, err := glmselect.Gaussian(X, y, &glmselect.Settings{Names: names})
	if err != nil {
		return err
	}
	row.SetupCPU = cpuSeconds() - cpu0
	res, err := selection.Run(context.Background(), sp, &selection.Settings{Seed: seed, Steps: *scaleSteps})
	if err != nil {
		return err
	}
	row.CPU = cpuSeconds() - cpu0
	if *scaleMemProfile != "" {
		if err := writeHeapProfile(*scaleMemProfile); err != nil {
			return err
		}
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	row.PeakMB = int64(ru.Maxrss) / 1024
	row.MinESS = math.Inf(1)
	pips := make([]float64, len(res.PIP))
	for j, e := range res.PIP {
		pips[j] = e.P
		if !e.Mixed {
			continue
		}
		if math.IsNaN(e.Rhat) || math.IsNaN(e.ESS) || math.IsInf(e.Rhat, 0) {
			row.NaN++ // chains too short for the term: counted, not maxed
			continue
		}
		row.MaxRhat = max(row.MaxRhat, e.Rhat)
		if e.P >= 0.1 {
			row.MinESS = min(row.MinESS, e.ESS)
		}
	}
	for _, j := range topTerms(pips, 5) {
		e := res.PIP[j]
		t := scaleTerm{Name: res.Names[j], PIP: e.P, ESS: e.ESS, Rhat: e.Rhat}
		if math.IsNaN(t.ESS) || math.IsNaN(t.Rhat) || math.IsInf(t.Rhat, 0) {
			t.ESS, t.Rhat = -1, -1 // JSON has no NaN
		}
		row.Top = append(row.Top, t)
	}
	row.Warnings = len(res.Warnings)
	if math.IsInf(row.MinESS, 1) {
		row.MinESS = 0 // no mixed term of PIP ≥ 0.1
	}
	return json.NewEncoder(os.Stdout).Encode(row)
}

// writeHeapProfile writes the heap profile to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// heapAtPeak writes the heap profile to path whenever the resident
// memory has grown by a tenth since the last one, until stop: the last
// file is the live heap near the run's peak.
func heapAtPeak(path string, stop <-chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var last int64
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if r := residentMB(); r > last+last/10 {
				last = r
				_ = writeHeapProfile(path)
			}
		}
	}
}

// residentMB reads VmRSS from /proc/self/status (0 where there is none).
func residentMB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb / 1024
		}
	}
	return 0
}

// scaleTable runs every n × p configuration in a child process of its
// own and prints the table (markdown) as the rows come.
func scaleTable(ns, ps []int, seed uint64) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Printf("seed %d, GOMAXPROCS %d, %s\n\n", seed, runtime.GOMAXPROCS(0), time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Println("| n | p | blocks | data MB | peak MB | setup CPU-s | CPU-s | max R̂ | min ESS (PIP ≥ 0.1) | CPU-s per eff. sample | top PIPs (ESS) | causal | R̂ NaN |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, n := range ns {
		for _, p := range ps {
			cmd := exec.Command(self, "-scale-one", fmt.Sprintf("%d,%d", n, p), "-seed", strconv.FormatUint(seed, 10))
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("n = %d, p = %d: %w", n, p, err)
			}
			var r scaleRow
			if err := json.Unmarshal(out, &r); err != nil {
				return fmt.Errorf("n = %d, p = %d: %w", n, p, err)
			}
			var top []string
			for _, t := range r.Top {
				top = append(top, fmt.Sprintf("%s %.2f (%.0f)", t.Name, t.PIP, t.ESS))
			}
			var causal []string
			for _, j := range r.Causal {
				causal = append(causal, "v"+strconv.Itoa(j+1))
			}
			fmt.Printf("| %d | %d | %d | %d | %d | %.1f | %.1f | %.4f | %.0f | %.4f | %s | %s | %d |\n",
				r.N, r.P, r.Blocks, r.DataMB, r.PeakMB, r.SetupCPU, r.CPU, r.MaxRhat, r.MinESS, r.CPU/r.MinESS,
				strings.Join(top, ", "), strings.Join(causal, " "), r.NaN)
		}
	}
	return nil
}

// parseInts parses a comma-separated list of positive integers.
func parseInts(s string) ([]int, error) {
	var v []int
	for _, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("%q: want positive integers separated by commas", s)
		}
		v = append(v, k)
	}
	return v, nil
}
