package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"syscall"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/selection"
)

// score runs selection.Run with its defaults (but steps and informed) on
// the data and prints its largest PIP error against the reference, the
// largest |z|, the CPU-seconds of the process and its peak resident
// memory.
func score(path string, x [][]float64, y []float64, seed uint64, steps int, informed bool) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var ref Reference
	if err := json.Unmarshal(b, &ref); err != nil {
		return err
	}
	X := mat.NewDense(len(y), len(x[0]), nil)
	for i, row := range x {
		X.SetRow(i, row)
	}
	cpu0 := cpuSeconds()
	t0 := time.Now()
	sp, err := glmselect.Gaussian(X, y, nil)
	if err != nil {
		return err
	}
	res, err := selection.Run(context.Background(), sp, &selection.Settings{Seed: seed, Steps: steps, Informed: informed})
	if err != nil {
		return err
	}
	cpu := cpuSeconds() - cpu0
	var maxErr, maxZ, maxRhat float64
	worst := 0
	minESS := math.Inf(1)
	for j, e := range res.PIP {
		d := math.Abs(e.P - ref.PIP[j])
		if d > maxErr {
			worst = j
		}
		maxErr = max(maxErr, d)
		if se := math.Hypot(e.MCSE, ref.MCSE[j]); se > 0 {
			maxZ = max(maxZ, d/se)
		}
		if e.Mixed {
			maxRhat = max(maxRhat, e.Rhat)
			minESS = min(minESS, e.ESS)
		}
	}
	var rbErr, rbZ float64
	for j, e := range res.PIPVisits {
		d := math.Abs(e.P - ref.PIP[j])
		rbErr = max(rbErr, d)
		if se := math.Hypot(e.MCSE, ref.MCSE[j]); se > 0 {
			rbZ = max(rbZ, d/se)
		}
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("informed=%v seed=%d steps=%d: max |PIP error| %.4f (visit frequencies %.4f), max |z| %.2f (%.2f), max R̂ %.3f, min ESS %.0f, CPU %.1f s, wall %.1f s, peak RSS %d MB, built %d models\n",
		informed, seed, steps, maxErr, rbErr, maxZ, rbZ, maxRhat, minESS, cpu, time.Since(t0).Seconds(), ru.Maxrss/1024, res.Built)
	w := res.PIP[worst]
	fmt.Printf("  largest error: %s, PIP %.4f ± %.4f (R̂ %.3f, mixed %v), visit frequency %.4f ± %.4f, reference %.4f ± %.4f\n",
		res.Names[worst], w.P, w.MCSE, w.Rhat, w.Mixed, visits(res, worst).P, visits(res, worst).MCSE, ref.PIP[worst], ref.MCSE[worst])
	for _, w := range res.Warnings {
		fmt.Println("  warning:", w)
	}
	return nil
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// visits is term j's visit-frequency PIP (NaN where PIP is the frequency
// itself).
func visits(res *selection.Result, j int) pipeline.Estimate {
	if j < len(res.PIPVisits) {
		return res.PIPVisits[j]
	}
	return pipeline.Estimate{P: math.NaN(), MCSE: math.NaN()}
}
