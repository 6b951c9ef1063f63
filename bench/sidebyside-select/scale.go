package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/selection"
)

// scaleRun is one measurement of memory and time at p candidate terms.
type scaleRun struct {
	P             int     `json:"p"`
	N             int     `json:"n"`
	Chains        int     `json:"chains"`
	Warmup        int     `json:"warmup"`
	Steps         int     `json:"steps"`
	WallSeconds   float64 `json:"wall_seconds"`
	CPUSeconds    float64 `json:"cpu_seconds"`
	Visited       int     `json:"visited"`
	Built         int     `json:"built"`
	PeakRSSMiB    float64 `json:"peak_rss_mib"`
	JSONBytes     int     `json:"json_bytes"`
	MicrosPerStep float64 `json:"cpu_microseconds_per_step"`
}

// widen returns the linear set's predictors with p − 20 further null
// columns, independent N(0, 1) from a fixed seed: the same n and the same
// signal, a larger space.
func widen(x *mat.Dense, p int) *mat.Dense {
	n, p0 := x.Dims()
	if p <= p0 {
		return mat.DenseCopyOf(x.Slice(0, n, 0, p))
	}
	w := mat.NewDense(n, p, nil)
	w.Slice(0, n, 0, p0).(*mat.Dense).Copy(x)
	r := rand.New(rand.NewPCG(20261129, uint64(p)))
	for i := range n {
		for j := p0; j < p; j++ {
			w.Set(i, j, r.NormFloat64())
		}
	}
	return w
}

// scaleOne runs selection.Run at p terms in this process and prints its
// measurement as JSON on stdout (peak RSS is read by the parent).
func scaleOne(p, chains, warmup, steps int) error {
	pr, err := loadProblem("linear", os.TempDir())
	if err != nil {
		return err
	}
	x := widen(pr.x, p)
	sp, err := glmselect.Gaussian(x, pr.y, &glmselect.Settings{Prior: glmselect.NormalInverseGamma{}})
	if err != nil {
		return err
	}
	c0, t0 := cpuSeconds(), time.Now()
	res, err := selection.Run(context.Background(), sp, &selection.Settings{Seed: 1, Chains: chains, Warmup: warmup, Steps: steps, Proposal: trjProposal})
	cpu, wall := cpuSeconds()-c0, time.Since(t0).Seconds()
	if err != nil {
		return err
	}
	var js strings.Builder
	if err := res.WriteJSON(&js); err != nil {
		return err
	}
	n, _ := x.Dims()
	out := scaleRun{P: p, N: n, Chains: chains, Warmup: warmup, Steps: steps, WallSeconds: wall, CPUSeconds: cpu,
		Visited: res.Visited, Built: res.Built, JSONBytes: js.Len(),
		MicrosPerStep: 1e6 * cpu / float64(chains*(warmup+steps))}
	fmt.Fprintf(os.Stderr, "p = %d%s\n", p, moveNote(res))
	return json.NewEncoder(os.Stdout).Encode(out)
}

func proposalName() string {
	if trjProposal == nil {
		return ""
	}
	return trjProposal.String()
}

// scale measures each p in a fresh process (its own peak RSS).
func scale(ps []int, chains, warmup, steps int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Println("| p | models | chains × (warm-up + kept) | wall s | CPU s | CPU µs per step | models visited | models built | peak RSS MiB | JSON bytes |")
	fmt.Println("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, p := range ps {
		cmd := exec.Command(self, "-scale-one", strconv.Itoa(p), "-chains", strconv.Itoa(chains),
			"-scale-warmup", strconv.Itoa(warmup), "-scale-steps", strconv.Itoa(steps), "-proposal", proposalName())
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("p = %d: %w", p, err)
		}
		var r scaleRun
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("p = %d: %w (%s)", p, err, b)
		}
		r.PeakRSSMiB = peakRSSMiB(cmd.ProcessState)
		fmt.Printf("| %d | 2^%d | %d × (%d + %d) | %.1f | %.1f | %.0f | %d | %d | %.0f | %d |\n",
			r.P, r.P, r.Chains, r.Warmup, r.Steps, r.WallSeconds, r.CPUSeconds, r.MicrosPerStep, r.Visited, r.Built, r.PeakRSSMiB, r.JSONBytes)
	}
	return nil
}
