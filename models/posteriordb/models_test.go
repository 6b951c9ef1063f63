package posteriordb

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/ppl"
)

// galleryEntry is a model of the gallery table: its name, data file,
// constructor and unconstrained dimension.
type galleryEntry struct {
	name, file string
	build      func(string) (*ppl.GraphModel, error)
	dim        int
}

// gallery lists the models with their data files, as the posteriordb
// posterior names them (data-model).
var gallery = []galleryEntry{
	{"eight_schools_noncentered", "eight_schools-eight_schools_noncentered.json", EightSchoolsNoncentered, 10},
	{"eight_schools_centered", "eight_schools-eight_schools_centered.json", EightSchoolsCentered, 10},
	{"kilpisjarvi", "kilpisjarvi_mod-kilpisjarvi.json", Kilpisjarvi, 3},
	{"kidscore_interaction", "kidiq-kidscore_interaction.json", KidscoreInteraction, 5},
	{"blr", "sblrc-blr.json", BLR, 6},
	{"diamonds", "diamonds-diamonds.json", Diamonds, 26},
	{"arK", "arK-arK.json", ArK, 7},
	{"arma11", "arma-arma11.json", Arma11, 4},
	{"garch11", "garch-garch11.json", Garch11, 4},
	{"gp_pois_regr", "gp_pois_regr-gp_pois_regr.json", GPPoisRegr, 13},
	{"low_dim_gauss_mix", "low_dim_gauss_mix-low_dim_gauss_mix.json", LowDimGaussMix, 5},
	{"hmm_example", "hmm_example-hmm_example.json", HMMExample, 4},
	// Solved tightly, so that finite differences and the reference's
	// solution see the same smooth function (the program's tolerances are
	// checked in TestLotkaVolterraTolerances).
	{"lotka_volterra", "hudson_lynx_hare-lotka_volterra.json", func(p string) (*ppl.GraphModel, error) {
		return lotkaVolterra(p, &ops.ODESettings{RelTol: 1e-11, AbsTol: 1e-11})
	}, 8},
	// The linear regressions (linearRegression).
	{"earnings-earn_height", earningsFile, EarnHeight, 3},
	{"earnings-log10earn_height", earningsFile, Log10earnHeight, 3},
	{"earnings-logearn_height", earningsFile, LogearnHeight, 3},
	{"earnings-logearn_height_male", earningsFile, LogearnHeightMale, 4},
	{"earnings-logearn_interaction", earningsFile, LogearnInteraction, 5},
	{"earnings-logearn_interaction_z", earningsFile, LogearnInteractionZ, 5},
	{"earnings-logearn_logheight_male", earningsFile, LogearnLogheightMale, 4},
	{"kidiq-kidscore_momhs", kidiqFile, KidscoreMomhs, 3},
	{"kidiq-kidscore_momhsiq", kidiqFile, KidscoreMomhsiq, 4},
	{"kidiq-kidscore_momiq", kidiqFile, KidscoreMomiq, 3},
	{"kidiq_with_mom_work-kidscore_interaction_c", momWorkFile, KidscoreInteractionC, 5},
	{"kidiq_with_mom_work-kidscore_interaction_c2", momWorkFile, KidscoreInteractionC2, 5},
	{"kidiq_with_mom_work-kidscore_interaction_z", momWorkFile, KidscoreInteractionZ, 5},
	{"kidiq_with_mom_work-kidscore_mom_work", momWorkFile, KidscoreMomWork, 5},
	{"mesquite-logmesquite", mesquiteFile, Logmesquite, 8},
	{"mesquite-logmesquite_logva", mesquiteFile, LogmesquiteLogva, 5},
	{"mesquite-logmesquite_logvas", mesquiteFile, LogmesquiteLogvas, 8},
	{"mesquite-logmesquite_logvash", mesquiteFile, LogmesquiteLogvash, 7},
	{"mesquite-logmesquite_logvolume", mesquiteFile, LogmesquiteLogvolume, 3},
	{"mesquite-mesquite", mesquiteFile, Mesquite, 8},
	{"nes1972-nes", NESFile(1972), nes(1972), 10},
	{"nes1976-nes", NESFile(1976), nes(1976), 10},
	{"nes1980-nes", NESFile(1980), nes(1980), 10},
	{"nes1984-nes", NESFile(1984), nes(1984), 10},
	{"nes1988-nes", NESFile(1988), nes(1988), 10},
	{"nes1992-nes", NESFile(1992), nes(1992), 10},
	{"nes1996-nes", NESFile(1996), nes(1996), 10},
	{"nes2000-nes", NESFile(2000), nes(2000), 10},
	{"sblri-blr", "sblri-blr.json", BLRIndependent, 6},
	{"bball_drive_event_0-hmm_drive_0", "bball_drive_event_0-hmm_drive_0.json", HMMDrive0, 6},
	{"bball_drive_event_1-hmm_drive_1", "bball_drive_event_1-hmm_drive_1.json", HMMDrive1, 6},
	{"gp_pois_regr-gp_regr", "gp_pois_regr-gp_regr.json", GPRegr, 3},
	{"mcycle_gp-accel_gp", "mcycle_gp-accel_gp.json", AccelGP, 66},
	// Solved tightly, as lotka_volterra above.
	{"one_comp_mm_elim_abs-one_comp_mm_elim_abs", "one_comp_mm_elim_abs-one_comp_mm_elim_abs.json", func(p string) (*ppl.GraphModel, error) {
		return oneCompMMElimAbs(p, &ops.ODESettings{RelTol: 1e-11, AbsTol: 1e-11})
	}, 4},
}

// nes is NES's constructor for one year's survey.
func nes(year int) func(string) (*ppl.GraphModel, error) {
	return func(p string) (*ppl.GraphModel, error) { return NES(year, p) }
}

func TestGradientsMatchFiniteDifferences(t *testing.T) {
	skipInRacePass(t)
	for _, m := range gallery {
		t.Run(m.name, func(t *testing.T) {
			model, err := m.build("")
			if err != nil {
				t.Fatal(err)
			}
			if model.Dim() != m.dim {
				t.Fatalf("Dim = %d, want %d", model.Dim(), m.dim)
			}
			if fb := model.Fallbacks(); len(fb) > 0 {
				t.Logf("slow-path ops: %v", fb)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			n := model.Dim()
			grad := make([]float64, n)
			for trial := 0; trial < 3; trial++ {
				u := make([]float64, n)
				if err := model.Init(rng, u); err != nil {
					t.Fatal(err)
				}
				for i := range u { // Init draws in (−2, 2); stay closer to 0
					u[i] /= 2
				}
				lp, err := model.LogDensityGrad(u, grad)
				if err != nil {
					t.Fatalf("at %v: %v", u, err)
				}
				lp0, err := model.LogDensity(u)
				if err != nil || math.Abs(lp-lp0) > 1e-9*(1+math.Abs(lp)) {
					t.Fatalf("LogDensity %v (%v) != LogDensityGrad %v", lp0, err, lp)
				}
				want := checks.CentralGradient(model.LogDensity, u, 1e-5)
				for i := range want {
					tol := 1e-5 * (1 + math.Abs(want[i]) + math.Abs(lp)*1e-3)
					if math.Abs(grad[i]-want[i]) > tol {
						t.Errorf("point %d: grad[%d] = %v, finite differences %v", trial, i, grad[i], want[i])
					}
				}
			}
		})
	}
}

func TestBadData(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name, content string
	}{
		{"notjson", "{J: 8"},
		{"array", "[1, 2]"},
		{"missing", `{"J": 8, "y": [1,2,3,4,5,6,7,8]}`},
		{"short", `{"J": 8, "y": [1,2,3], "sigma": [1,2,3,4,5,6,7,8]}`},
		{"negative", `{"J": 2, "y": [1,2], "sigma": [1,-2]}`},
		{"fraction", `{"J": 2.5, "y": [1,2], "sigma": [1,2]}`},
		{"string", `{"J": 2, "y": ["a","b"], "sigma": [1,2]}`},
	}
	for _, c := range cases {
		_, err := EightSchoolsCentered(write(c.name+".json", c.content))
		if !errors.Is(err, ErrData) {
			t.Errorf("%s: err = %v, want ErrData", c.name, err)
		}
	}
	if _, err := EightSchoolsCentered(filepath.Join(dir, "absent.json")); err == nil {
		t.Error("absent file: no error")
	}
	if _, err := GPPoisRegr(write("gp.json", `{"N": 2, "x": [0, 1], "k": [1, 2.5]}`)); !errors.Is(err, ErrData) {
		t.Errorf("fractional count: err = %v, want ErrData", err)
	}
	if _, err := HMMExample(write("hmm.json", `{"N": 2, "K": 3, "y": [0, 1]}`)); !errors.Is(err, ErrData) {
		t.Errorf("K = 3: err = %v, want ErrData", err)
	}
	if _, err := Diamonds(write("d.json", `{"N": 2, "K": 2, "Y": [0, 1], "X": [[1, 2], [1]], "prior_only": 0}`)); !errors.Is(err, ErrData) {
		t.Errorf("ragged matrix: err = %v, want ErrData", err)
	}
	// A declared size far beyond the data must be an error before any
	// allocation of that size (N·K here would be 16 GB).
	if _, err := Diamonds(write("d.json", `{"N": 2, "K": 1000000000, "Y": [0, 1], "X": [[1, 2], [1, 2]], "prior_only": 0}`)); !errors.Is(err, ErrData) {
		t.Errorf("oversized K: err = %v, want ErrData", err)
	}
}

// TestEmbeddedDataMatchFiles builds every model twice, from its embedded
// data set and from a copy of it on disk, and checks that the two give
// the same log density; an error from the embedded copy names it.
func TestEmbeddedDataMatchFiles(t *testing.T) {
	skipInRacePass(t)
	dir := t.TempDir()
	for _, m := range gallery {
		raw, err := datasets.ReadFile(embeddedDir + m.file)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, m.file)
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		fromFile, err := m.build(path)
		if err != nil {
			t.Fatalf("%s from %s: %v", m.name, path, err)
		}
		embedded, err := m.build("")
		if err != nil {
			t.Fatalf("%s embedded: %v", m.name, err)
		}
		u := make([]float64, embedded.Dim())
		if err := embedded.Init(rand.New(rand.NewPCG(1, 2)), u); err != nil {
			t.Fatal(err)
		}
		a, errA := embedded.LogDensity(u)
		b, errB := fromFile.LogDensity(u)
		if errA != nil || errB != nil || a != b {
			t.Errorf("%s: embedded %v (%v), file %v (%v)", m.name, a, errA, b, errB)
		}
	}
	d, err := readData("", "nope.json")
	if err == nil || !strings.Contains(err.Error(), `"posteriordb/nope.json"`) {
		t.Errorf("missing embedded set: %v, %v", d, err)
	}
}

// BenchmarkLogDensityGrad times one value-and-gradient evaluation of each
// gallery model at a random point.
func BenchmarkLogDensityGrad(b *testing.B) {
	for _, m := range gallery {
		b.Run(m.name, func(b *testing.B) {
			model, err := m.build("")
			if err != nil {
				b.Fatal(err)
			}
			u := make([]float64, model.Dim())
			if err := model.Init(rand.New(rand.NewPCG(1, 2)), u); err != nil {
				b.Fatal(err)
			}
			for i := range u {
				u[i] /= 4
			}
			grad := make([]float64, len(u))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := model.LogDensityGrad(u, grad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
