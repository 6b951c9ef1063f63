package posteriordb

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/trjgo/trj/ppl/diag"
)

// drawSummary is the embedded summary of one posterior's reference draws
// (testdata/reference/POSTERIOR.json): per parameter, the mean, sd and 5 %
// and 95 % quantiles with their Monte Carlo standard errors. It is written
// by TestGenerateReferenceSummaries from posteriordb's files, so go test
// never needs posteriordb.
type drawSummary struct {
	Posterior string     `json:"posterior"`
	Source    string     `json:"source"`
	Draws     int        `json:"draws"`
	Params    []refParam `json:"params"`
}

// refParam summarises one parameter; Q05 and Q95 are absent (NaN-free
// zero MCSE) when the source has no draws, only moments.
type refParam struct {
	Name     string  `json:"name"`
	Mean     float64 `json:"mean"`
	MeanMCSE float64 `json:"mean_mcse"`
	SD       float64 `json:"sd"`
	SDMCSE   float64 `json:"sd_mcse"`
	Q05      float64 `json:"q05,omitempty"`
	Q05MCSE  float64 `json:"q05_mcse,omitempty"`
	Q95      float64 `json:"q95,omitempty"`
	Q95MCSE  float64 `json:"q95_mcse,omitempty"`
}

// refName turns Stan's theta1[1] or C[2,1] into trj's theta1.1, C.2.1.
func refName(s string) string {
	r := strings.NewReplacer("[", ".", "]", "", ",", ".")
	return r.Replace(s)
}

// summarise returns the summary statistics of the chains x with their
// MCSEs: the mean's and the quantiles' from package diag, the sd's by the
// delta method from the MCSE of the mean of (x − x̄)².
func summariseParam(name string, x [][]float64) (refParam, error) {
	var all []float64
	for _, c := range x {
		all = append(all, c...)
	}
	p := refParam{Name: name}
	p.Mean = stat.Mean(all, nil)
	p.SD = stat.StdDev(all, nil)
	var err error
	if p.MeanMCSE, err = diag.MCSEMean(x); err != nil {
		return p, err
	}
	sq := make([][]float64, len(x))
	for i, c := range x {
		sq[i] = make([]float64, len(c))
		for j, v := range c {
			sq[i][j] = (v - p.Mean) * (v - p.Mean)
		}
	}
	mv, err := diag.MCSEMean(sq)
	if err != nil {
		return p, err
	}
	p.SDMCSE = mv / (2 * p.SD)
	if p.Q05, err = diag.Quantile(x, 0.05); err != nil {
		return p, err
	}
	if p.Q95, err = diag.Quantile(x, 0.95); err != nil {
		return p, err
	}
	if p.Q05MCSE, err = diag.MCSEQuantile(x, 0.05); err != nil {
		return p, err
	}
	p.Q95MCSE, err = diag.MCSEQuantile(x, 0.95)
	return p, err
}

// gitShow reads path at HEAD of the git directory repo.
func gitShow(repo, path string) ([]byte, error) {
	out, err := exec.Command("git", "-C", repo, "show", "HEAD:"+path).Output()
	if err != nil {
		return nil, fmt.Errorf("git show %s: %w", path, err)
	}
	return out, nil
}

// referenceFromDraws summarises posteriordb's reference draws of posterior
// (a zip of one JSON file: an array of chains, each an object of named
// draws).
func referenceFromDraws(repo, posterior string) (*drawSummary, error) {
	raw, err := gitShow(repo, "posterior_database/reference_posteriors/draws/draws/"+posterior+".json.zip")
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil || len(zr.File) != 1 {
		return nil, fmt.Errorf("%s: want a zip of one file: %v", posterior, err)
	}
	f, err := zr.File[0].Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var chains []map[string][]float64
	if err := json.NewDecoder(f).Decode(&chains); err != nil {
		return nil, err
	}
	info, err := gitShow(repo, "posterior_database/reference_posteriors/draws/info/"+posterior+".info.json")
	if err != nil {
		return nil, err
	}
	var meta struct {
		Diagnostics struct {
			Info struct {
				Names []string `json:"names"`
			} `json:"diagnostic_information"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(info, &meta); err != nil {
		return nil, err
	}
	s := &drawSummary{Posterior: posterior, Source: "posteriordb reference_posteriors/draws/draws/" + posterior + ".json.zip"}
	for _, name := range meta.Diagnostics.Info.Names {
		x := make([][]float64, len(chains))
		for c, ch := range chains {
			x[c] = ch[name]
			if c == 0 {
				s.Draws = 0
			}
			s.Draws += len(ch[name])
		}
		p, err := summariseParam(refName(name), x)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", posterior, name, err)
		}
		s.Params = append(s.Params, p)
	}
	return s, nil
}

// referenceFromMoments builds the summary of a posterior whose draws the
// mirror lacks from posteriordb's mean_value and mean_squared_value
// summaries and their MCSEs: sd = √(E x² − (E x)²) and, as the two
// estimates' errors are correlated, the bound
// MCSE(sd) ≤ (MCSE(E x²) + 2|E x| MCSE(E x)) / (2 sd) of the delta method.
// No quantiles.
func referenceFromMoments(repo, posterior string) (*drawSummary, error) {
	const base = "posterior_database/reference_posteriors/"
	var mv struct {
		Names []string  `json:"names"`
		Mean  []float64 `json:"mean_value"`
		MCSE  []float64 `json:"mcse_mean"`
	}
	var msv struct {
		MeanSq []float64 `json:"mean_squared_value"`
		MCSE   []float64 `json:"mcse_mean"`
	}
	var info struct {
		Diagnostics struct {
			NDraws int `json:"ndraws"`
		} `json:"diagnostics"`
	}
	for _, f := range []struct {
		path string
		v    any
	}{
		{base + "summary_statistics/mean_value/mean_value/" + posterior + ".json", &mv},
		{base + "summary_statistics/mean_squared_value/mean_squared_value/" + posterior + ".json", &msv},
		{base + "draws/info/" + posterior + ".info.json", &info},
	} {
		raw, err := gitShow(repo, f.path)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, f.v); err != nil {
			return nil, fmt.Errorf("%s: %w", f.path, err)
		}
	}
	k := len(mv.Names)
	if len(mv.Mean) != k || len(mv.MCSE) != k || len(msv.MeanSq) != k || len(msv.MCSE) != k || info.Diagnostics.NDraws < 2 {
		return nil, fmt.Errorf("%s: inconsistent summaries", posterior)
	}
	n := float64(info.Diagnostics.NDraws)
	s := &drawSummary{Posterior: posterior, Draws: info.Diagnostics.NDraws,
		Source: "posteriordb reference_posteriors/summary_statistics (mean_value, mean_squared_value) of " + posterior + "; its draws are not in the mirror"}
	for i, name := range mv.Names {
		sd := math.Sqrt((msv.MeanSq[i] - mv.Mean[i]*mv.Mean[i]) * n / (n - 1))
		sdMCSE := (msv.MCSE[i] + 2*math.Abs(mv.Mean[i])*mv.MCSE[i]) / (2 * sd)
		s.Params = append(s.Params, refParam{Name: refName(name), Mean: mv.Mean[i], MeanMCSE: mv.MCSE[i], SD: sd, SDMCSE: sdMCSE})
	}
	return s, nil
}

// referencePosteriors are posteriordb's 46 posteriors with reference
// draws, each with its generator: the draws' summary, or for mcycle_gp,
// whose draws file the mirror lacks, the summary statistics posteriordb
// publishes.
var referencePosteriors = func() map[string]func(string, string) (*drawSummary, error) {
	m := map[string]func(string, string) (*drawSummary, error){}
	for _, p := range []string{
		"arK-arK", "arma-arma11", "bball_drive_event_0-hmm_drive_0", "bball_drive_event_1-hmm_drive_1",
		"diamonds-diamonds", "eight_schools-eight_schools_noncentered", "garch-garch11",
		"gp_pois_regr-gp_pois_regr", "gp_pois_regr-gp_regr", "hmm_example-hmm_example",
		"hudson_lynx_hare-lotka_volterra", "kidiq-kidscore_interaction", "kilpisjarvi_mod-kilpisjarvi",
		"low_dim_gauss_mix-low_dim_gauss_mix", "one_comp_mm_elim_abs-one_comp_mm_elim_abs", "sblrc-blr",
	} {
		m[p] = referenceFromDraws
	}
	for _, p := range linregPosteriors {
		m[p] = referenceFromDraws
	}
	m["mcycle_gp-accel_gp"] = referenceFromMoments
	return m
}()

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

// TestGenerateReferenceSummaries rewrites testdata/reference/*.json, the
// one reference format of the package, from a posteriordb git mirror:
//
//	TRJ_POSTERIORDB=/path/to/posteriordb/git go test -run TestGenerateReferenceSummaries ./models/posteriordb
//
// Without the variable it is skipped, and no test needs posteriordb.
func TestGenerateReferenceSummaries(t *testing.T) {
	repo := os.Getenv("TRJ_POSTERIORDB")
	if repo == "" {
		t.Skip("set TRJ_POSTERIORDB to a posteriordb git directory to regenerate the reference summaries")
	}
	for name, f := range referencePosteriors {
		s, err := f(repo, name)
		if err != nil {
			t.Fatal(err)
		}
		out, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "reference", name+".json"), append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readRefSummary reads the embedded summary of posterior.
func readRefSummary(t *testing.T, posterior string) *drawSummary {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "reference", posterior+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var s drawSummary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}
