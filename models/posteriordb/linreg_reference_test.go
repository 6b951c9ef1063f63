package posteriordb

import (
	"fmt"
	"math"
	"testing"
)

// The plain-Go references of the linear regressions: each posterior's
// transformed data written out row by row from the data file, then one
// generic log density, y ~ normal(xβ, σ) with flat priors unless stated,
// on the unconstrained space (σ = e^u, Jacobian u).

// linregDesign returns a posterior's response and design rows.
type linregDesign func(t *testing.T, d refData) (y []float64, x [][]float64)

// refLinreg is the reference of a linear regression whose data set is
// file and whose design is design; logPrior adds the priors of β and σ.
func refLinreg(file string, design linregDesign, logPrior func(beta []float64, sigma float64) float64) func(*testing.T) refFunc {
	return func(t *testing.T) refFunc {
		y, x := design(t, readRefData(t, file))
		k := len(x[0])
		return func(u []float64) (float64, []float64) {
			beta, sigma := u[:k], math.Exp(u[k])
			lp := u[k]
			if logPrior != nil {
				lp += logPrior(beta, sigma)
			}
			for i := range y {
				mu := 0.0
				for j := range beta {
					mu += x[i][j] * beta[j]
				}
				lp += normal(y[i], mu, sigma)
			}
			return lp, append(append([]float64{}, beta...), sigma)
		}
	}
}

// rows builds design rows with an intercept from per-row functions of the
// observation index.
func rows(n int, cols ...func(i int) float64) [][]float64 {
	x := make([][]float64, n)
	for i := range x {
		x[i] = []float64{1}
		for _, c := range cols {
			x[i] = append(x[i], c(i))
		}
	}
	return x
}

// stdOf returns the mean and the N−1 standard deviation.
func stdOf(v []float64) (float64, float64) {
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	ss := 0.0
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(v)-1))
}

func eq(v []float64, level float64) func(int) float64 {
	return func(i int) float64 {
		if v[i] == level {
			return 1
		}
		return 0
	}
}

func halfCauchyPrior(_ []float64, s float64) float64 { return cauchy(s, 0, 2.5) }

// linregRefs are the references of the linear regressions, by name.
func linregRefs() map[string]func(*testing.T) refFunc {
	at := func(v []float64) func(int) float64 { return func(i int) float64 { return v[i] } }
	earn := func(logY func(float64) float64, cols func(h, m []float64) []func(int) float64) linregDesign {
		return func(t *testing.T, d refData) ([]float64, [][]float64) {
			e, h, m := d.vec(t, "earn"), d.vec(t, "height"), d.vec(t, "male")
			y := make([]float64, len(e))
			for i := range e {
				y[i] = logY(e[i])
			}
			return y, rows(len(y), cols(h, m)...)
		}
	}
	id := func(v float64) float64 { return v }
	// inter is the kidiq interaction design on transformed predictors.
	inter := func(tr func(v []float64, c float64) []float64) linregDesign {
		return func(t *testing.T, d refData) ([]float64, [][]float64) {
			y := d.vec(t, "kid_score")
			hs, iq := tr(d.vec(t, "mom_hs"), 0.5), tr(d.vec(t, "mom_iq"), 100)
			return y, rows(len(y), at(hs), at(iq), func(i int) float64 { return hs[i] * iq[i] })
		}
	}
	// scaled returns (v − centre)/scale, the centre and scale from v's
	// mean and sd by how.
	scaled := func(how string) func(v []float64, c float64) []float64 {
		return func(v []float64, c float64) []float64 {
			m, sd := stdOf(v)
			out := make([]float64, len(v))
			for i := range v {
				switch how {
				case "centre":
					out[i] = v[i] - m
				case "shift":
					out[i] = v[i] - c
				case "z1":
					out[i] = (v[i] - m) / sd
				case "z2":
					out[i] = (v[i] - m) / (2 * sd)
				}
			}
			return out
		}
	}
	mesq := func(logged bool, cols func(f map[string][]float64, i int) []float64) linregDesign {
		return func(t *testing.T, d refData) ([]float64, [][]float64) {
			f := map[string][]float64{}
			for _, k := range []string{"weight", "diam1", "diam2", "canopy_height", "total_height", "density", "group"} {
				f[k] = d.vec(t, k)
			}
			y := make([]float64, len(f["weight"]))
			x := make([][]float64, len(y))
			for i := range y {
				y[i] = f["weight"][i]
				if logged {
					y[i] = math.Log(y[i])
				}
				x[i] = append([]float64{1}, cols(f, i)...)
			}
			return y, x
		}
	}
	ln := math.Log
	refs := map[string]func(*testing.T) refFunc{
		"earnings-earn_height":         refLinreg(earningsFile, earn(id, func(h, _ []float64) []func(int) float64 { return []func(int) float64{at(h)} }), nil),
		"earnings-log10earn_height":    refLinreg(earningsFile, earn(math.Log10, func(h, _ []float64) []func(int) float64 { return []func(int) float64{at(h)} }), nil),
		"earnings-logearn_height":      refLinreg(earningsFile, earn(ln, func(h, _ []float64) []func(int) float64 { return []func(int) float64{at(h)} }), nil),
		"earnings-logearn_height_male": refLinreg(earningsFile, earn(ln, func(h, m []float64) []func(int) float64 { return []func(int) float64{at(h), at(m)} }), nil),
		"earnings-logearn_interaction": refLinreg(earningsFile, earn(ln, func(h, m []float64) []func(int) float64 {
			return []func(int) float64{at(h), at(m), func(i int) float64 { return h[i] * m[i] }}
		}), nil),
		"earnings-logearn_interaction_z": refLinreg(earningsFile, earn(ln, func(h, m []float64) []func(int) float64 {
			z := scaled("z1")(h, 0)
			return []func(int) float64{at(z), at(m), func(i int) float64 { return z[i] * m[i] }}
		}), nil),
		"earnings-logearn_logheight_male": refLinreg(earningsFile, earn(ln, func(h, m []float64) []func(int) float64 {
			return []func(int) float64{func(i int) float64 { return ln(h[i]) }, at(m)}
		}), nil),
		"kidiq-kidscore_momhs": refLinreg(kidiqFile, func(t *testing.T, d refData) ([]float64, [][]float64) {
			y, hs := d.vec(t, "kid_score"), d.vec(t, "mom_hs")
			return y, rows(len(y), func(i int) float64 { return hs[i] })
		}, halfCauchyPrior),
		"kidiq-kidscore_momiq": refLinreg(kidiqFile, func(t *testing.T, d refData) ([]float64, [][]float64) {
			y, iq := d.vec(t, "kid_score"), d.vec(t, "mom_iq")
			return y, rows(len(y), func(i int) float64 { return iq[i] })
		}, halfCauchyPrior),
		"kidiq-kidscore_momhsiq": refLinreg(kidiqFile, func(t *testing.T, d refData) ([]float64, [][]float64) {
			y, hs, iq := d.vec(t, "kid_score"), d.vec(t, "mom_hs"), d.vec(t, "mom_iq")
			return y, rows(len(y), func(i int) float64 { return hs[i] }, func(i int) float64 { return iq[i] })
		}, halfCauchyPrior),
		"kidiq_with_mom_work-kidscore_interaction_c":  refLinreg(momWorkFile, inter(scaled("centre")), nil),
		"kidiq_with_mom_work-kidscore_interaction_c2": refLinreg(momWorkFile, inter(scaled("shift")), nil),
		"kidiq_with_mom_work-kidscore_interaction_z":  refLinreg(momWorkFile, inter(scaled("z2")), nil),
		"kidiq_with_mom_work-kidscore_mom_work": refLinreg(momWorkFile, func(t *testing.T, d refData) ([]float64, [][]float64) {
			y, w := d.vec(t, "kid_score"), d.vec(t, "mom_work")
			return y, rows(len(y), eq(w, 2), eq(w, 3), eq(w, 4))
		}, nil),
		"mesquite-mesquite": refLinreg(mesquiteFile, mesq(false, func(f map[string][]float64, i int) []float64 {
			return []float64{f["diam1"][i], f["diam2"][i], f["canopy_height"][i], f["total_height"][i], f["density"][i], f["group"][i]}
		}), nil),
		"mesquite-logmesquite": refLinreg(mesquiteFile, mesq(true, func(f map[string][]float64, i int) []float64 {
			return []float64{ln(f["diam1"][i]), ln(f["diam2"][i]), ln(f["canopy_height"][i]), ln(f["total_height"][i]), ln(f["density"][i]), f["group"][i]}
		}), nil),
		"mesquite-logmesquite_logvolume": refLinreg(mesquiteFile, mesq(true, func(f map[string][]float64, i int) []float64 {
			return []float64{ln(f["diam1"][i] * f["diam2"][i] * f["canopy_height"][i])}
		}), nil),
		"mesquite-logmesquite_logva": refLinreg(mesquiteFile, mesq(true, func(f map[string][]float64, i int) []float64 {
			return []float64{ln(f["diam1"][i] * f["diam2"][i] * f["canopy_height"][i]), ln(f["diam1"][i] * f["diam2"][i]), f["group"][i]}
		}), nil),
		"mesquite-logmesquite_logvash": refLinreg(mesquiteFile, mesq(true, func(f map[string][]float64, i int) []float64 {
			return []float64{ln(f["diam1"][i] * f["diam2"][i] * f["canopy_height"][i]), ln(f["diam1"][i] * f["diam2"][i]),
				ln(f["diam1"][i] / f["diam2"][i]), ln(f["total_height"][i]), f["group"][i]}
		}), nil),
		"mesquite-logmesquite_logvas": refLinreg(mesquiteFile, mesq(true, func(f map[string][]float64, i int) []float64 {
			return []float64{ln(f["diam1"][i] * f["diam2"][i] * f["canopy_height"][i]), ln(f["diam1"][i] * f["diam2"][i]),
				ln(f["diam1"][i] / f["diam2"][i]), ln(f["total_height"][i]), ln(f["density"][i]), f["group"][i]}
		}), nil),
		"sblri-blr": refLinreg("sblri-blr.json", func(t *testing.T, d refData) ([]float64, [][]float64) {
			return d.vec(t, "y"), d.mat(t, "X")
		}, func(beta []float64, s float64) float64 {
			lp := normal(s, 0, 10)
			for _, b := range beta {
				lp += normal(b, 0, 10)
			}
			return lp
		}),
	}
	for _, year := range NESYears() {
		refs[fmt.Sprintf("nes%d-nes", year)] = refLinreg(NESFile(year), func(t *testing.T, d refData) ([]float64, [][]float64) {
			y, age := d.vec(t, "partyid7"), d.vec(t, "age_discrete")
			ideo, race, educ, gender, income := d.vec(t, "real_ideo"), d.vec(t, "race_adj"), d.vec(t, "educ1"), d.vec(t, "gender"), d.vec(t, "income")
			return y, rows(len(y), at(ideo), at(race), eq(age, 2), eq(age, 3), eq(age, 4), at(educ), at(gender), at(income))
		}, nil)
	}
	return refs
}
