package posteriordb

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/ppl"
)

// The linear regressions of posteriordb that come from Gelman and Hill's
// ARM examples (earnings, kidiq, mesquite, nes) and the simulated sblri.
// Every one is linearRegression with flat priors on β (and on σ unless
// stated): each constructor reads its data fields and writes its design.

// Data sets shared by several posteriors are embedded once, under the
// data set's posteriordb name.
const (
	earningsFile = "earnings.json"
	kidiqFile    = "kidiq-kidscore_interaction.json"
	momWorkFile  = "kidiq_with_mom_work.json"
	mesquiteFile = "mesquite.json"
)

// earnings reads the earnings data: N, earn (dollars; positive when the
// model takes its log), height (inches) and, when withMale, male (0/1).
func earnings(dataPath string, logEarn, withMale bool) (l *loader, earn, height, male []float64) {
	l = load(dataPath, earningsFile)
	n := l.integer("N", 0)
	if logEarn {
		earn = l.positive("earn", n)
	} else {
		earn = l.vector("earn", n)
	}
	height = l.positive("height", n)
	if withMale {
		male = l.vector("male", n)
	}
	return l, earn, height, male
}

// EarnHeight is posteriordb's earnings-earn_height: earnings in dollars
// on height, earn_n ~ normal(β₁ + β₂·height_n, σ). Parameters beta (2),
// sigma.
func EarnHeight(dataPath string) (*ppl.GraphModel, error) {
	l, earn, height, _ := earnings(dataPath, false, false)
	return l.regression(earn, height)
}

// Log10earnHeight is posteriordb's earnings-log10earn_height:
// log₁₀ earn_n ~ normal(β₁ + β₂·height_n, σ). Parameters beta (2), sigma.
func Log10earnHeight(dataPath string) (*ppl.GraphModel, error) {
	l, earn, height, _ := earnings(dataPath, true, false)
	return l.regression(apply(earn, math.Log10), height)
}

// LogearnHeight is posteriordb's earnings-logearn_height:
// log earn_n ~ normal(β₁ + β₂·height_n, σ). Parameters beta (2), sigma.
func LogearnHeight(dataPath string) (*ppl.GraphModel, error) {
	l, earn, height, _ := earnings(dataPath, true, false)
	return l.regression(logs(earn), height)
}

// LogearnHeightMale is posteriordb's earnings-logearn_height_male:
// log earn_n ~ normal(β₁ + β₂·height_n + β₃·male_n, σ). Parameters beta
// (3), sigma.
func LogearnHeightMale(dataPath string) (*ppl.GraphModel, error) {
	l, earn, height, male := earnings(dataPath, true, true)
	return l.regression(logs(earn), height, male)
}

// LogearnInteraction is posteriordb's earnings-logearn_interaction:
// log earn_n ~ normal(β₁ + β₂·height_n + β₃·male_n + β₄·height_n·male_n,
// σ). Parameters beta (4), sigma.
func LogearnInteraction(dataPath string) (*ppl.GraphModel, error) {
	l, earn, height, male := earnings(dataPath, true, true)
	return l.regression(logs(earn), height, male, times(height, male))
}

// LogearnInteractionZ is posteriordb's earnings-logearn_interaction_z:
// LogearnInteraction with height standardised, z_n = (height_n −
// mean)/sd. Parameters beta (4), sigma.
func LogearnInteractionZ(dataPath string) (*ppl.GraphModel, error) {
	l, earn, _, male := earnings(dataPath, true, true)
	z := l.standardised("height", len(earn), 1)
	return l.regression(logs(earn), z, male, times(z, male))
}

// LogearnLogheightMale is posteriordb's earnings-logearn_logheight_male:
// log earn_n ~ normal(β₁ + β₂·log height_n + β₃·male_n, σ). Parameters
// beta (3), sigma.
func LogearnLogheightMale(dataPath string) (*ppl.GraphModel, error) {
	l, earn, height, male := earnings(dataPath, true, true)
	return l.regression(logs(earn), logs(height), male)
}

// kidiq reads the kid_score field and the named predictors of the kidiq
// data, with the Stan programs' bounds: scores and mom_iq in [0, 200],
// mom_hs in [0, 1].
func kidiq(dataPath string, fields ...string) (l *loader, score []float64, cols [][]float64) {
	l = load(dataPath, kidiqFile)
	n := l.integer("N", 0)
	score = l.boundedVector("kid_score", n, 0, 200)
	for _, f := range fields {
		hi := 200.0
		if f == "mom_hs" {
			hi = 1
		}
		cols = append(cols, l.boundedVector(f, n, 0, hi))
	}
	return l, score, cols
}

// KidscoreMomhs is posteriordb's kidiq-kidscore_momhs: a child's test
// score on the mother's high-school completion,
// kid_score_n ~ normal(β₁ + β₂·mom_hs_n, σ), σ ~ half-Cauchy(0, 2.5).
// Parameters beta (2), sigma.
func KidscoreMomhs(dataPath string) (*ppl.GraphModel, error) {
	l, score, x := kidiq(dataPath, "mom_hs")
	return l.regressionWith(ppl.HalfCauchy{Scale: 2.5}, score, x...)
}

// KidscoreMomiq is posteriordb's kidiq-kidscore_momiq:
// kid_score_n ~ normal(β₁ + β₂·mom_iq_n, σ), σ ~ half-Cauchy(0, 2.5).
// Parameters beta (2), sigma.
func KidscoreMomiq(dataPath string) (*ppl.GraphModel, error) {
	l, score, x := kidiq(dataPath, "mom_iq")
	return l.regressionWith(ppl.HalfCauchy{Scale: 2.5}, score, x...)
}

// KidscoreMomhsiq is posteriordb's kidiq-kidscore_momhsiq:
// kid_score_n ~ normal(β₁ + β₂·mom_hs_n + β₃·mom_iq_n, σ),
// σ ~ half-Cauchy(0, 2.5). Parameters beta (3), sigma.
func KidscoreMomhsiq(dataPath string) (*ppl.GraphModel, error) {
	l, score, x := kidiq(dataPath, "mom_hs", "mom_iq")
	return l.regressionWith(ppl.HalfCauchy{Scale: 2.5}, score, x...)
}

// momWork reads kid_score, mom_hs and mom_iq of the kidiq_with_mom_work
// data (no bounds: these programs declare none).
func momWork(dataPath string) (l *loader, score, hs, iq []float64) {
	l = load(dataPath, momWorkFile)
	n := l.integer("N", 0)
	return l, l.vector("kid_score", n), l.vector("mom_hs", n), l.vector("mom_iq", n)
}

// KidscoreInteractionC is posteriordb's
// kidiq_with_mom_work-kidscore_interaction_c: kidscore_interaction with
// both predictors centred on their means, c_hs = mom_hs − mean and
// c_iq = mom_iq − mean,
//
//	kid_score_n ~ normal(β₁ + β₂·c_hs_n + β₃·c_iq_n + β₄·c_hs_n·c_iq_n, σ).
//
// Parameters beta (4), sigma.
func KidscoreInteractionC(dataPath string) (*ppl.GraphModel, error) {
	l, score, hs, iq := momWork(dataPath)
	chs, ciq := centred(hs), centred(iq)
	return l.regression(score, chs, ciq, times(chs, ciq))
}

// KidscoreInteractionC2 is posteriordb's
// kidiq_with_mom_work-kidscore_interaction_c2: the predictors centred on
// reference points instead, mom_hs − 0.5 and mom_iq − 100. Parameters beta
// (4), sigma.
func KidscoreInteractionC2(dataPath string) (*ppl.GraphModel, error) {
	l, score, hs, iq := momWork(dataPath)
	chs, ciq := shift(hs, 0.5), shift(iq, 100)
	return l.regression(score, chs, ciq, times(chs, ciq))
}

// KidscoreInteractionZ is posteriordb's
// kidiq_with_mom_work-kidscore_interaction_z: the predictors standardised
// by two standard deviations, (x − mean)/(2·sd) (Gelman 2008). Parameters
// beta (4), sigma.
func KidscoreInteractionZ(dataPath string) (*ppl.GraphModel, error) {
	l, score, _, _ := momWork(dataPath)
	zhs := l.standardised("mom_hs", len(score), 2)
	ziq := l.standardised("mom_iq", len(score), 2)
	return l.regression(score, zhs, ziq, times(zhs, ziq))
}

// KidscoreMomWork is posteriordb's kidiq_with_mom_work-kidscore_mom_work:
// the score on the mother's work pattern as a factor with levels 1–4,
// level 1 the baseline,
//
//	kid_score_n ~ normal(β₁ + β₂·[work_n = 2] + β₃·[work_n = 3] + β₄·[work_n = 4], σ).
//
// Parameters beta (4), sigma.
func KidscoreMomWork(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, momWorkFile)
	n := l.integer("N", 0)
	score := l.vector("kid_score", n)
	work := l.integers("mom_work", n)
	return l.regression(score, indicator(work, 2), indicator(work, 3), indicator(work, 4))
}

// mesquiteData reads the named fields of the mesquite data (leaf weight,
// canopy diameters diam1 and diam2, canopy_height, total_height, density,
// group); logged says whether the model takes their logarithms, which
// must then be positive (group is never logged).
func mesquiteData(dataPath string, logged bool, fields ...string) (*loader, map[string][]float64) {
	l := load(dataPath, mesquiteFile)
	n := l.integer("N", 0)
	v := make(map[string][]float64, len(fields))
	for _, f := range fields {
		if logged && f != "group" {
			v[f] = l.positive(f, n)
		} else {
			v[f] = l.vector(f, n)
		}
	}
	return l, v
}

// Mesquite is posteriordb's mesquite-mesquite: the leaf weight of mesquite
// bushes on the raw measurements,
//
//	weight ~ normal(β₁ + β₂·diam1 + β₃·diam2 + β₄·canopy_height
//	                + β₅·total_height + β₆·density + β₇·group, σ).
//
// Parameters beta (7), sigma.
func Mesquite(dataPath string) (*ppl.GraphModel, error) {
	l, v := mesquiteData(dataPath, false, "weight", "diam1", "diam2", "canopy_height", "total_height", "density", "group")
	return l.regression(v["weight"], v["diam1"], v["diam2"], v["canopy_height"], v["total_height"], v["density"], v["group"])
}

// Logmesquite is posteriordb's mesquite-logmesquite: Mesquite on the log
// scale, the logarithms of weight and of every predictor but group.
// Parameters beta (7), sigma.
func Logmesquite(dataPath string) (*ppl.GraphModel, error) {
	l, v := mesquiteData(dataPath, true, "weight", "diam1", "diam2", "canopy_height", "total_height", "density", "group")
	return l.regression(logs(v["weight"]), logs(v["diam1"]), logs(v["diam2"]), logs(v["canopy_height"]),
		logs(v["total_height"]), logs(v["density"]), v["group"])
}

// LogmesquiteLogvolume is posteriordb's mesquite-logmesquite_logvolume:
// log weight on the log canopy volume, log(diam1·diam2·canopy_height).
// Parameters beta (2), sigma.
func LogmesquiteLogvolume(dataPath string) (*ppl.GraphModel, error) {
	l, v := mesquiteData(dataPath, true, "weight", "diam1", "diam2", "canopy_height")
	return l.regression(logs(v["weight"]), logs(times(v["diam1"], v["diam2"], v["canopy_height"])))
}

// LogmesquiteLogva is posteriordb's mesquite-logmesquite_logva: log weight
// on the log canopy volume, the log canopy area log(diam1·diam2) and group.
// Parameters beta (4), sigma.
func LogmesquiteLogva(dataPath string) (*ppl.GraphModel, error) {
	l, v := mesquiteData(dataPath, true, "weight", "diam1", "diam2", "canopy_height", "group")
	area := times(v["diam1"], v["diam2"])
	return l.regression(logs(v["weight"]), logs(times(area, v["canopy_height"])), logs(area), v["group"])
}

// LogmesquiteLogvash is posteriordb's mesquite-logmesquite_logvash: log
// weight on the log canopy volume, area and shape log(diam1/diam2), the
// log total height and group. Parameters beta (6), sigma.
func LogmesquiteLogvash(dataPath string) (*ppl.GraphModel, error) {
	l, v := mesquiteData(dataPath, true, "weight", "diam1", "diam2", "canopy_height", "total_height", "group")
	area := times(v["diam1"], v["diam2"])
	return l.regression(logs(v["weight"]), logs(times(area, v["canopy_height"])), logs(area),
		logs(over(v["diam1"], v["diam2"])), logs(v["total_height"]), v["group"])
}

// LogmesquiteLogvas is posteriordb's mesquite-logmesquite_logvas:
// LogmesquiteLogvash with the log density before group. Parameters beta
// (7), sigma.
func LogmesquiteLogvas(dataPath string) (*ppl.GraphModel, error) {
	l, v := mesquiteData(dataPath, true, "weight", "diam1", "diam2", "canopy_height", "total_height", "density", "group")
	area := times(v["diam1"], v["diam2"])
	return l.regression(logs(v["weight"]), logs(times(area, v["canopy_height"])), logs(area),
		logs(over(v["diam1"], v["diam2"])), logs(v["total_height"]), logs(v["density"]), v["group"])
}

// NESYears returns the years of the National Election Study surveys that
// posteriordb holds, each a posterior nesYEAR-nes with its data set
// embedded. The slice is the caller's.
func NESYears() []int { return []int{1972, 1976, 1980, 1984, 1988, 1992, 1996, 2000} }

// NESFile returns the name of the embedded data set of the posterior
// nesYEAR-nes.
func NESFile(year int) string { return fmt.Sprintf("nes%d-nes.json", year) }

// NES is posteriordb's nesYEAR-nes: party identification on a 7-point
// scale regressed on ideology, race, age group (a factor with levels 1–4,
// 18–29 the baseline), education, gender and income,
//
//	partyid7 ~ normal(β₁ + β₂·real_ideo + β₃·race_adj + β₄·[age = 2]
//	                  + β₅·[age = 3] + β₆·[age = 4] + β₇·educ1
//	                  + β₈·gender + β₉·income, σ),
//
// on the survey of the given year (one of NESYears) when dataPath is "".
// Parameters beta (9), sigma.
func NES(year int, dataPath string) (*ppl.GraphModel, error) {
	if dataPath == "" && !slices.Contains(NESYears(), year) {
		return nil, fmt.Errorf("%w: no embedded NES survey of %d (have %v)", ErrData, year, NESYears())
	}
	l := load(dataPath, NESFile(year))
	n := l.integer("N", 0)
	party := l.vector("partyid7", n)
	ideo := l.vector("real_ideo", n)
	race := l.vector("race_adj", n)
	age := l.integers("age_discrete", n)
	educ := l.vector("educ1", n)
	gender := l.vector("gender", n)
	income := l.vector("income", n)
	return l.regression(party, ideo, race, indicator(age, 2), indicator(age, 3), indicator(age, 4), educ, gender, income)
}

// BLRIndependent is posteriordb's sblri-blr: the model of BLR on the
// simulated data set whose coefficients are independent a posteriori,
//
//	β_d ~ normal(0, 10),  σ ~ half-normal(0, 10),  y ~ normal(Xβ, σ),
//
// with X the data's N×D design (no intercept added). Parameters beta (D),
// sigma.
func BLRIndependent(dataPath string) (*ppl.GraphModel, error) {
	l := load(dataPath, "sblri-blr.json")
	n, d := l.integer("N", 0), l.integer("D", 0)
	x := l.matrix("X", n, d)
	y := l.vector("y", n)
	if l.err != nil {
		return nil, l.err
	}
	cols := make([][]float64, d)
	for j := range cols {
		cols[j] = mat.Col(nil, j, x)
	}
	return linearRegression{d: l.d, y: y, cols: cols,
		betaPrior: ppl.Normal{Mu: 0.0, Sigma: 10.0}, sigmaPrior: ppl.HalfNormal{Sigma: 10.0}}.model()
}
