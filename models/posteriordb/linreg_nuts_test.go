package posteriordb

import (
	"archive/zip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/diag"
)

// refDraws is the folder of posteriordb's reference draws
// (posterior_database/reference_posteriors/draws/draws of a posteriordb
// checkout, files NAME.json.zip). With it, TestWriteLinregReference
// rewrites linregReferenceFile from them:
//
//	go test ./models/posteriordb -run TestWriteLinregReference -refdraws DIR
//
// Without it that test skips, and no test needs posteriordb.
var refDraws = flag.String("refdraws", "", "folder of posteriordb's reference draws (NAME.json.zip) to summarise into "+linregReferenceFile)

// linregReferenceFile holds the summaries of posteriordb's reference draws
// of the linear regressions (10 chains × 1000 draws each).
const linregReferenceFile = "testdata/linreg_reference.json"

// linregPosteriors are the posteriordb posteriors built by linearRegression.
var linregPosteriors = []string{
	"earnings-earn_height", "earnings-log10earn_height", "earnings-logearn_height",
	"earnings-logearn_height_male", "earnings-logearn_interaction", "earnings-logearn_interaction_z",
	"earnings-logearn_logheight_male",
	"kidiq-kidscore_momhs", "kidiq-kidscore_momhsiq", "kidiq-kidscore_momiq",
	"kidiq_with_mom_work-kidscore_interaction_c", "kidiq_with_mom_work-kidscore_interaction_c2",
	"kidiq_with_mom_work-kidscore_interaction_z", "kidiq_with_mom_work-kidscore_mom_work",
	"mesquite-logmesquite", "mesquite-logmesquite_logva", "mesquite-logmesquite_logvas",
	"mesquite-logmesquite_logvash", "mesquite-logmesquite_logvolume", "mesquite-mesquite",
	"nes1972-nes", "nes1976-nes", "nes1980-nes", "nes1984-nes", "nes1988-nes", "nes1992-nes",
	"nes1996-nes", "nes2000-nes",
	"sblri-blr",
}

// refSummary summarises one parameter's reference draws, each statistic
// with its Monte Carlo standard error from ppl/diag.
type refSummary struct {
	Mean, MCSEMean float64
	SD             float64
	Q05, MCSEQ05   float64
	Q95, MCSEQ95   float64
}

// linregReference maps a posterior's name to its parameters' summaries,
// keyed by trj's names (beta.1, sigma).
type linregReference map[string]map[string]refSummary

func TestWriteLinregReference(t *testing.T) {
	if *refDraws == "" {
		t.Skip("no -refdraws folder")
	}
	out := linregReference{}
	for _, name := range linregPosteriors {
		cols, err := readRefDraws(filepath.Join(*refDraws, name+".json.zip"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = map[string]refSummary{}
		for col, x := range cols {
			s, err := summarise(x)
			if err != nil {
				t.Fatalf("%s %s: %v", name, col, err)
			}
			// Stan's beta[1] is trj's beta.1.
			key := strings.NewReplacer("[", ".", "]", "").Replace(col)
			out[name][key] = s
		}
	}
	raw, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(linregReferenceFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(linregReferenceFile, append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readRefDraws reads a posteriordb draws file: a zipped JSON array of
// chains, each an object of parameter names to draws.
func readRefDraws(path string) (map[string][][]float64, error) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	if len(z.File) != 1 {
		return nil, fmt.Errorf("%d files in the archive, want 1", len(z.File))
	}
	f, err := z.File[0].Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	var chains []map[string][]float64
	if err := json.Unmarshal(raw, &chains); err != nil {
		return nil, err
	}
	cols := map[string][][]float64{}
	for _, ch := range chains {
		for k, v := range ch {
			cols[k] = append(cols[k], v)
		}
	}
	return cols, nil
}

func summarise(x [][]float64) (refSummary, error) {
	var s refSummary
	var all []float64
	for _, c := range x {
		all = append(all, c...)
	}
	s.Mean, s.SD = stat.MeanStdDev(all, nil)
	var errs [5]error
	s.MCSEMean, errs[0] = diag.MCSEMean(x)
	s.Q05, errs[1] = diag.Quantile(x, 0.05)
	s.MCSEQ05, errs[2] = diag.MCSEQuantile(x, 0.05)
	s.Q95, errs[3] = diag.Quantile(x, 0.95)
	s.MCSEQ95, errs[4] = diag.MCSEQuantile(x, 0.95)
	for _, err := range errs {
		if err != nil {
			return s, err
		}
	}
	return s, nil
}

// TestNUTSLinregMatchReference runs short NUTS chains on every linear
// regression and compares the means and 5 % and 95 % quantiles with
// posteriordb's reference draws: each difference over the Monte Carlo
// standard errors of both sides, combined, must be at most 4.
func TestNUTSLinregMatchReference(t *testing.T) {
	if testing.Short() {
		t.Skip("short NUTS runs of 29 posteriors (about a minute on one core)")
	}
	skipInRacePass(t)
	raw, err := os.ReadFile(linregReferenceFile)
	if err != nil {
		t.Fatal(err)
	}
	var ref linregReference
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref) != len(linregPosteriors) {
		t.Fatalf("%s summarises %d posteriors, want %d", linregReferenceFile, len(ref), len(linregPosteriors))
	}
	for i, name := range linregPosteriors {
		build := galleryModel(t, name)
		t.Run(name, func(t *testing.T) {
			m, err := build("")
			if err != nil {
				t.Fatal(err)
			}
			want := ref[name]
			if names := m.ParamNames(); len(names) != len(want) {
				t.Fatalf("parameters %v, reference has %d", names, len(want))
			}
			cols := sampleNUTS(t, m, 2, 300, 300, uint64(100+i))
			worst, where := 0.0, ""
			for _, p := range m.ParamNames() {
				r, ok := want[p]
				if !ok {
					t.Fatalf("no reference for %s", p)
				}
				for _, c := range []struct {
					stat       string
					ref, refSE float64
					get        func([][]float64) (float64, float64, error)
				}{
					{"mean", r.Mean, r.MCSEMean, meanWithSE},
					{"q05", r.Q05, r.MCSEQ05, quantileWithSE(0.05)},
					{"q95", r.Q95, r.MCSEQ95, quantileWithSE(0.95)},
				} {
					v, se, err := c.get(cols[p])
					if err != nil {
						t.Fatalf("%s %s: %v", p, c.stat, err)
					}
					z := (v - c.ref) / math.Hypot(se, c.refSE)
					if math.Abs(z) > math.Abs(worst) {
						worst, where = z, p+" "+c.stat
					}
					if math.Abs(z) > 4 || math.IsNaN(z) {
						t.Errorf("%s %s: %.5g ± %.2g, reference %.5g ± %.2g: z = %.2f", p, c.stat, v, se, c.ref, c.refSE, z)
					}
				}
			}
			t.Logf("largest |z| %.2f (%s)", math.Abs(worst), where)
		})
	}
}

func meanWithSE(x [][]float64) (float64, float64, error) {
	se, err := diag.MCSEMean(x)
	var all []float64
	for _, c := range x {
		all = append(all, c...)
	}
	return stat.Mean(all, nil), se, err
}

func quantileWithSE(p float64) func([][]float64) (float64, float64, error) {
	return func(x [][]float64) (float64, float64, error) {
		q, err := diag.Quantile(x, p)
		if err != nil {
			return q, 0, err
		}
		se, err := diag.MCSEQuantile(x, p)
		return q, se, err
	}
}

// galleryModel returns the constructor of the gallery table's model name.
func galleryModel(t *testing.T, name string) func(string) (*ppl.GraphModel, error) {
	t.Helper()
	i := slices.IndexFunc(gallery, func(g galleryEntry) bool { return g.name == name })
	if i < 0 {
		t.Fatalf("%s is not in the gallery table", name)
	}
	return gallery[i].build
}
