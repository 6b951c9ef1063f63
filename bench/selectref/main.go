// Command selectref generates the variable-selection data sets of issue 23
// and computes their reference posteriors without trj's samplers.
//
// Run from the module root:
//
//	go run ./bench/selectref -data       # write models/datasets/select/{linear_p20,logistic_p15}.csv
//	go run ./bench/selectref -linear     # exact PIPs of linear_p20 by enumeration (NIG and g-prior)
//	go run ./bench/selectref -logistic   # PIPs of logistic_p15 by importance sampling over all models
//	go run ./bench/selectref -real uscrime,fls,pima   # the references of the real data sets (issue 32)
//
// The real data sets' references (realref.go): UScrime by enumerating its
// 2^15 models under the g-prior (g = n) with the model-averaged
// coefficients; FLS (41 predictors) by long MC³ runs on the same
// closed-form evidence with Rao-Blackwellised estimates and batch-means
// standard errors (mc3.go); Pima by importance sampling of its 128
// logistic models under trj's logistic prior, replicated for the
// standard errors.
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
	"strings"
	"time"
)

func main() {
	dir := flag.String("dir", filepath.Join("models", "datasets", "select"), "folder of the data sets and references")
	doData := flag.Bool("data", false, "write the data sets")
	doLinear := flag.Bool("linear", false, "compute the exact references of the linear set")
	doLogistic := flag.Bool("logistic", false, "compute the importance-sampling reference of the logistic set")
	draws := flag.Int("draws", 1000, "importance draws per model (logistic); 0 gives the Laplace approximation, for quick looks only")
	workers := flag.Int("workers", 2, "goroutines (logistic, MC³ chains)")
	real := flag.String("real", "", "references of the real data sets: any of uscrime, fls, pima (comma separated)")
	mc3Steps := flag.Int("mc3-steps", DefaultFLSMC3.Steps, "fls: MC³ steps per chain")
	flag.Parse()
	if *real != "" {
		s := DefaultFLSMC3
		s.Steps = *mc3Steps
		if err := runReal(*dir, strings.Split(*real, ","), s, *workers); err != nil {
			fmt.Fprintln(os.Stderr, "selectref:", err)
			os.Exit(1)
		}
		if !*doData && !*doLinear && !*doLogistic {
			return
		}
	}
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

// runReal computes and writes the references of the real data sets names.
func runReal(dir string, names []string, s mc3Settings, workers int) error {
	for _, name := range names {
		t0 := time.Now()
		var ref *Reference
		var file string
		var err error
		switch name {
		case "uscrime":
			file = UScrimeRef
			ref, err = uscrimeReference()
		case "fls":
			file = FLSRef
			ref, err = flsReference(s, workers)
		case "pima":
			file = PimaRef
			ref, err = pimaReference(DefaultPimaIS, workers)
		default:
			return fmt.Errorf("unknown real data set %q (uscrime, fls, pima)", name)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, time.Since(t0))
		if err := writeJSON(filepath.Join(dir, file), ref); err != nil {
			return err
		}
	}
	return nil
}
