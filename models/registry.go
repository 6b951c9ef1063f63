package models

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/trjgo/trj/models/posteriordb"
	"github.com/trjgo/trj/ppl"
)

// Entry describes one model of the gallery.
type Entry struct {
	// Name is the model's name on the command line (trj sample -model).
	Name string
	// New builds the model conditioned on the data file at dataPath, or
	// on its own data set DataFile, embedded in package datasets, when
	// dataPath is "".
	New func(dataPath string) (ppl.Model, error)
	// DataFile names the model's own data set in package datasets; it is
	// also the file's path inside a data folder laid out like that
	// package's (see DataPath).
	DataFile string
	// Description says in one line what the model is.
	Description string
	// Posterior is the entry's name in posteriordb (DATA-MODEL) when it is
	// one of posteriordb's posteriors with reference draws, and "" when it
	// is not. Users coming from posteriordb or Stan know the posterior by
	// that name, so Lookup accepts it as well as Name.
	Posterior string
}

// DataPath returns the entry's default data file inside the folder dir.
func (e Entry) DataPath(dir string) string { return filepath.Join(dir, filepath.FromSlash(e.DataFile)) }

// sources lists the functions that contribute entries, one per model
// package; a new package adds its function here. It is never modified.
var sources = []func() []Entry{
	posteriordbEntries,
}

// All returns every entry of the gallery, sorted by name. The slice is
// the caller's.
func All() []Entry {
	var out []Entry
	for _, f := range sources {
		out = append(out, f()...)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the entry called name, by its gallery name or its
// posteriordb posterior name.
func Lookup(name string) (Entry, bool) {
	for _, e := range All() {
		if e.Name == name || (e.Posterior != "" && e.Posterior == name) {
			return e, true
		}
	}
	return Entry{}, false
}

// Names returns the names of the gallery's models, sorted.
func Names() []string {
	var names []string
	for _, e := range All() {
		names = append(names, e.Name)
	}
	return names
}

// graphModel adapts a constructor returning *ppl.GraphModel to Entry.New
// without turning a nil pointer into a non-nil interface.
func graphModel(f func(string) (*ppl.GraphModel, error)) func(string) (ppl.Model, error) {
	return func(path string) (ppl.Model, error) {
		m, err := f(path)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}

// posteriordbEntries are the reference posteriors of package posteriordb,
// with data files named data-model.json as posteriordb names posteriors.
func posteriordbEntries() []Entry {
	const dir = "posteriordb/"
	entries := []Entry{
		{"eight_schools_noncentered", graphModel(posteriordb.EightSchoolsNoncentered), dir + "eight_schools-eight_schools_noncentered.json",
			"eight schools, non-centred hierarchical normal model (10 parameters)", ""},
		{"eight_schools_centered", graphModel(posteriordb.EightSchoolsCentered), dir + "eight_schools-eight_schools_centered.json",
			"eight schools, centred: a funnel with expected divergences (10 parameters)", ""},
		{"kilpisjarvi", graphModel(posteriordb.Kilpisjarvi), dir + "kilpisjarvi_mod-kilpisjarvi.json",
			"linear trend of Kilpisjärvi summer temperatures, uncentred years (3 parameters)", ""},
		{"kidscore_interaction", graphModel(posteriordb.KidscoreInteraction), dir + "kidiq-kidscore_interaction.json",
			"child test scores on mother's IQ and schooling with interaction (5 parameters)", ""},
		{"blr", graphModel(posteriordb.BLR), dir + "sblrc-blr.json",
			"Bayesian linear regression, dense 100×5 design (6 parameters)", ""},
		{"diamonds", graphModel(posteriordb.Diamonds), dir + "diamonds-diamonds.json",
			"log diamond prices on 24 correlated centred predictors, N = 5000 (26 parameters)", ""},
		{"arK", graphModel(posteriordb.ArK), dir + "arK-arK.json",
			"autoregression of order 5 (7 parameters)", ""},
		{"arma11", graphModel(posteriordb.Arma11), dir + "arma-arma11.json",
			"ARMA(1,1) time series (4 parameters)", ""},
		{"garch11", graphModel(posteriordb.Garch11), dir + "garch-garch11.json",
			"GARCH(1,1) volatility, flat prior on the stationarity triangle (4 parameters)", ""},
		{"gp_pois_regr", graphModel(posteriordb.GPPoisRegr), dir + "gp_pois_regr-gp_pois_regr.json",
			"Poisson regression with a latent Gaussian process, non-centred (13 parameters)", ""},
		{"low_dim_gauss_mix", graphModel(posteriordb.LowDimGaussMix), dir + "low_dim_gauss_mix-low_dim_gauss_mix.json",
			"two-component normal mixture with ordered means (5 parameters)", ""},
		{"hmm_example", graphModel(posteriordb.HMMExample), dir + "hmm_example-hmm_example.json",
			"two-state hidden Markov model, forward algorithm (4 free parameters)", ""},
		{"hudson_lynx_hare-lotka_volterra", graphModel(posteriordb.LotkaVolterra), dir + "hudson_lynx_hare-lotka_volterra.json",
			"Lotka–Volterra ODE fitted to the Hudson's Bay lynx and hare pelts, 1900–1920 (8 parameters)", ""},

		// posteriordb's linear regressions, named by posterior (DATA-MODEL):
		// several share a model name or a data set.
		{"earnings-earn_height", graphModel(posteriordb.EarnHeight), dir + "earnings.json",
			"earnings in dollars on height, flat priors (3 parameters)", ""},
		{"earnings-log10earn_height", graphModel(posteriordb.Log10earnHeight), dir + "earnings.json",
			"log10 earnings on height, flat priors (3 parameters)", ""},
		{"earnings-logearn_height", graphModel(posteriordb.LogearnHeight), dir + "earnings.json",
			"log earnings on height, flat priors (3 parameters)", ""},
		{"earnings-logearn_height_male", graphModel(posteriordb.LogearnHeightMale), dir + "earnings.json",
			"log earnings on height and sex, flat priors (4 parameters)", ""},
		{"earnings-logearn_interaction", graphModel(posteriordb.LogearnInteraction), dir + "earnings.json",
			"log earnings on height, sex and their interaction, flat priors (5 parameters)", ""},
		{"earnings-logearn_interaction_z", graphModel(posteriordb.LogearnInteractionZ), dir + "earnings.json",
			"log earnings on standardised height, sex and their interaction, flat priors (5 parameters)", ""},
		{"earnings-logearn_logheight_male", graphModel(posteriordb.LogearnLogheightMale), dir + "earnings.json",
			"log earnings on log height and sex, flat priors (4 parameters)", ""},
		{"kidiq-kidscore_momhs", graphModel(posteriordb.KidscoreMomhs), dir + "kidiq-kidscore_interaction.json",
			"child test scores on mother's schooling (3 parameters)", ""},
		{"kidiq-kidscore_momhsiq", graphModel(posteriordb.KidscoreMomhsiq), dir + "kidiq-kidscore_interaction.json",
			"child test scores on mother's schooling and IQ (4 parameters)", ""},
		{"kidiq-kidscore_momiq", graphModel(posteriordb.KidscoreMomiq), dir + "kidiq-kidscore_interaction.json",
			"child test scores on mother's IQ (3 parameters)", ""},
		{"kidiq_with_mom_work-kidscore_interaction_c", graphModel(posteriordb.KidscoreInteractionC), dir + "kidiq_with_mom_work.json",
			"child test scores, interaction of mean-centred predictors, flat priors (5 parameters)", ""},
		{"kidiq_with_mom_work-kidscore_interaction_c2", graphModel(posteriordb.KidscoreInteractionC2), dir + "kidiq_with_mom_work.json",
			"child test scores, interaction of predictors centred on reference points, flat priors (5 parameters)", ""},
		{"kidiq_with_mom_work-kidscore_interaction_z", graphModel(posteriordb.KidscoreInteractionZ), dir + "kidiq_with_mom_work.json",
			"child test scores, interaction of predictors scaled by 2 sd, flat priors (5 parameters)", ""},
		{"kidiq_with_mom_work-kidscore_mom_work", graphModel(posteriordb.KidscoreMomWork), dir + "kidiq_with_mom_work.json",
			"child test scores on mother's work pattern as a 4-level factor, flat priors (5 parameters)", ""},
		{"mesquite-mesquite", graphModel(posteriordb.Mesquite), dir + "mesquite.json",
			"mesquite leaf weight on six raw measurements, N = 46, flat priors (8 parameters)", ""},
		{"mesquite-logmesquite", graphModel(posteriordb.Logmesquite), dir + "mesquite.json",
			"log mesquite leaf weight on the logged measurements, flat priors (8 parameters)", ""},
		{"mesquite-logmesquite_logvolume", graphModel(posteriordb.LogmesquiteLogvolume), dir + "mesquite.json",
			"log mesquite leaf weight on log canopy volume, flat priors (3 parameters)", ""},
		{"mesquite-logmesquite_logva", graphModel(posteriordb.LogmesquiteLogva), dir + "mesquite.json",
			"log mesquite leaf weight on log canopy volume and area, flat priors (5 parameters)", ""},
		{"mesquite-logmesquite_logvash", graphModel(posteriordb.LogmesquiteLogvash), dir + "mesquite.json",
			"log mesquite leaf weight on log canopy volume, area, shape and height, flat priors (7 parameters)", ""},
		{"mesquite-logmesquite_logvas", graphModel(posteriordb.LogmesquiteLogvas), dir + "mesquite.json",
			"log mesquite leaf weight on log canopy volume, area, shape, height and density, flat priors (8 parameters)", ""},
		{"sblri-blr", graphModel(posteriordb.BLRIndependent), dir + "sblri-blr.json",
			"Bayesian linear regression, 100×5 design with independent coefficients (6 parameters)", ""},
		{"bball_drive_event_0-hmm_drive_0", graphModel(posteriordb.HMMDrive0), dir + "bball_drive_event_0-hmm_drive_0.json",
			"two-state hidden Markov model of a basketball drive, exponential emissions, Dirichlet priors, N = 416 (6 free parameters)", ""},
		{"bball_drive_event_1-hmm_drive_1", graphModel(posteriordb.HMMDrive1), dir + "bball_drive_event_1-hmm_drive_1.json",
			"two-state hidden Markov model of a basketball drive, normal emissions, Dirichlet priors, N = 416 (6 free parameters)", ""},
		{"gp_pois_regr-gp_regr", graphModel(posteriordb.GPRegr), dir + "gp_pois_regr-gp_regr.json",
			"Gaussian-process regression, latent function integrated out (3 parameters)", ""},
		{"mcycle_gp-accel_gp", graphModel(posteriordb.AccelGP), dir + "mcycle_gp-accel_gp.json",
			"motorcycle-crash accelerations: basis-function GPs for the mean and the log sd (66 parameters)", ""},
		{"one_comp_mm_elim_abs-one_comp_mm_elim_abs", graphModel(posteriordb.OneCompMMElimAbs), dir + "one_comp_mm_elim_abs-one_comp_mm_elim_abs.json",
			"one-compartment pharmacokinetics, Michaelis–Menten elimination: an ODE solve (4 parameters)", ""},
	}
	for _, year := range posteriordb.NESYears() {
		entries = append(entries, Entry{fmt.Sprintf("nes%d-nes", year),
			graphModel(func(path string) (*ppl.GraphModel, error) { return posteriordb.NES(year, path) }),
			dir + posteriordb.NESFile(year),
			fmt.Sprintf("party identification on ideology, race, age, education, gender and income, NES %d, flat priors (10 parameters)", year), ""})
	}
	for i, e := range entries {
		if p, ok := olderPosteriors[e.Name]; ok {
			entries[i].Posterior = p
		} else if strings.Contains(e.Name, "-") {
			entries[i].Posterior = e.Name
		}
	}
	return entries
}

// olderPosteriors maps the gallery's first posteriordb entries, named
// before the gallery adopted posteriordb's DATA-MODEL names, to their
// posterior names. eight_schools_centered is absent: posteriordb has no
// reference draws of it.
var olderPosteriors = map[string]string{
	"eight_schools_noncentered": "eight_schools-eight_schools_noncentered",
	"kilpisjarvi":               "kilpisjarvi_mod-kilpisjarvi",
	"kidscore_interaction":      "kidiq-kidscore_interaction",
	"blr":                       "sblrc-blr",
	"diamonds":                  "diamonds-diamonds",
	"arK":                       "arK-arK",
	"arma11":                    "arma-arma11",
	"garch11":                   "garch-garch11",
	"gp_pois_regr":              "gp_pois_regr-gp_pois_regr",
	"low_dim_gauss_mix":         "low_dim_gauss_mix-low_dim_gauss_mix",
	"hmm_example":               "hmm_example-hmm_example",
}
