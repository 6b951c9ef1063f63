// Command selectref generates the variable-selection data sets of issue 23
// and computes their reference posteriors without trj's samplers.
//
// Run from the module root:
//
//	go run ./bench/selectref -data       # write models/datasets/select/{linear_p20,logistic_p15}.csv
//	go run ./bench/selectref -linear     # exact PIPs of linear_p20 by enumeration (NIG and g-prior)
//	go run ./bench/selectref -logistic   # PIPs of logistic_p15 by importance sampling over all models
//
// The data are generated from fixed seeds (gen.go). The linear references
// enumerate all 2^20 models with closed-form evidences (enum.go), written
// here independently of trj's models/glmselect; the logistic reference
// estimates each of the 2^15 models' evidences by importance sampling from
// a multivariate t around the posterior mode (logistic.go) and reports
// delta-method standard errors of the PIPs.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func main() {
	dir := flag.String("dir", filepath.Join("models", "datasets", "select"), "folder of the data sets and references")
	doData := flag.Bool("data", false, "write the data sets")
	doLinear := flag.Bool("linear", false, "compute the exact references of the linear set")
	doLogistic := flag.Bool("logistic", false, "compute the importance-sampling reference of the logistic set")
	draws := flag.Int("draws", 1000, "importance draws per model (logistic); 0 gives the Laplace approximation, for quick looks only")
	workers := flag.Int("workers", 2, "goroutines (logistic)")
	flag.Parse()
	if !*doData && !*doLinear && !*doLogistic {
		fmt.Fprintln(os.Stderr, "selectref: nothing to do; give -data, -linear and/or -logistic")
		os.Exit(2)
	}
	if err := run(*dir, *doData, *doLinear, *doLogistic, *draws, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "selectref:", err)
		os.Exit(1)
	}
}

func run(dir string, doData, doLinear, doLogistic bool, draws, workers int) error {
	if doData {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, LinearFile), linearData().csv(), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, LogisticFile), logisticData().csv(), 0o644); err != nil {
			return err
		}
	}
	if doLinear {
		t0 := time.Now()
		ref, err := linearNIGReference(linearData(), DefaultNIG)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "NIG enumeration: %v\n", time.Since(t0))
		if err := writeJSON(filepath.Join(dir, LinearNIGRef), ref); err != nil {
			return err
		}
		t0 = time.Now()
		ref, err = linearGPriorReference(linearData())
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "g-prior enumeration: %v\n", time.Since(t0))
		if err := writeJSON(filepath.Join(dir, LinearGPriorRef), ref); err != nil {
			return err
		}
	}
	if doLogistic {
		t0 := time.Now()
		ref, err := logisticReference(logisticData(), DefaultLogit, isSettings{Draws: draws, Nu: 5, Seed: 1}, workers)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "logistic importance sampling: %v\n", time.Since(t0))
		if err := writeJSON(filepath.Join(dir, LogisticRef), ref); err != nil {
			return err
		}
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
