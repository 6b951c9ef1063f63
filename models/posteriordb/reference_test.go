package posteriordb

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trjgo/trj/models/datasets"
)

// The reference implementations below evaluate each posterior's log
// density on the unconstrained space in plain Go, with gonum's distuv and
// hand-written transforms and Jacobians, independently of ppl and ad. They
// return the log density and the constrained values in ParamNames order.

// refData reads a data file for the references (independently of data.go).
type refData map[string]json.RawMessage

func readRefData(t *testing.T, file string) refData {
	t.Helper()
	raw, err := datasets.ReadFile(embeddedDir + file)
	if err != nil {
		t.Fatal(err)
	}
	var d refData
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d refData) num(t *testing.T, k string) float64 {
	var v float64
	if err := json.Unmarshal(d[k], &v); err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	return v
}

func (d refData) vec(t *testing.T, k string) []float64 {
	var v []float64
	if err := json.Unmarshal(d[k], &v); err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	return v
}

func (d refData) mat(t *testing.T, k string) [][]float64 {
	var v [][]float64
	if err := json.Unmarshal(d[k], &v); err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	return v
}

func normal(x, mu, sigma float64) float64 {
	return distuv.Normal{Mu: mu, Sigma: sigma}.LogProb(x)
}

// cauchy is the Cauchy log density (gonum has no Cauchy).
func cauchy(x, mu, s float64) float64 {
	z := (x - mu) / s
	return -math.Log(math.Pi*s) - math.Log1p(z*z)
}

func logistic(u float64) float64 { return 1 / (1 + math.Exp(-u)) }

type refFunc func(u []float64) (lp float64, constrained []float64)

func refEightSchoolsNoncentered(t *testing.T) refFunc {
	d := readRefData(t, "eight_schools-eight_schools_noncentered.json")
	y, sigma := d.vec(t, "y"), d.vec(t, "sigma")
	return func(u []float64) (float64, []float64) {
		tt, mu, tau := u[:8], u[8], math.Exp(u[9])
		lp := u[9] + normal(mu, 0, 5) + cauchy(tau, 0, 5)
		theta := make([]float64, 8)
		for j := range theta {
			theta[j] = tt[j]*tau + mu
			lp += normal(tt[j], 0, 1) + normal(y[j], theta[j], sigma[j])
		}
		return lp, append(append(append([]float64{}, tt...), mu, tau), theta...)
	}
}

func refEightSchoolsCentered(t *testing.T) refFunc {
	d := readRefData(t, "eight_schools-eight_schools_centered.json")
	y, sigma := d.vec(t, "y"), d.vec(t, "sigma")
	return func(u []float64) (float64, []float64) {
		mu, tau, theta := u[0], math.Exp(u[1]), u[2:10]
		lp := u[1] + normal(mu, 0, 5) + cauchy(tau, 0, 5)
		for j := range theta {
			lp += normal(theta[j], mu, tau) + normal(y[j], theta[j], sigma[j])
		}
		return lp, append([]float64{mu, tau}, theta...)
	}
}

func refKilpisjarvi(t *testing.T) refFunc {
	d := readRefData(t, "kilpisjarvi_mod-kilpisjarvi.json")
	x, y := d.vec(t, "x"), d.vec(t, "y")
	pa, sa, pb, sb := d.num(t, "pmualpha"), d.num(t, "psalpha"), d.num(t, "pmubeta"), d.num(t, "psbeta")
	return func(u []float64) (float64, []float64) {
		a, b, s := u[0], u[1], math.Exp(u[2])
		lp := u[2] + normal(a, pa, sa) + normal(b, pb, sb)
		for i := range x {
			lp += normal(y[i], a+b*x[i], s)
		}
		return lp, []float64{a, b, s}
	}
}

func refKidscore(t *testing.T) refFunc {
	d := readRefData(t, "kidiq-kidscore_interaction.json")
	score, hs, iq := d.vec(t, "kid_score"), d.vec(t, "mom_hs"), d.vec(t, "mom_iq")
	return func(u []float64) (float64, []float64) {
		b, s := u[:4], math.Exp(u[4])
		lp := u[4] + cauchy(s, 0, 2.5)
		for i := range score {
			lp += normal(score[i], b[0]+b[1]*hs[i]+b[2]*iq[i]+b[3]*hs[i]*iq[i], s)
		}
		return lp, append(append([]float64{}, b...), s)
	}
}

func refBLR(t *testing.T) refFunc {
	d := readRefData(t, "sblrc-blr.json")
	x, y := d.mat(t, "X"), d.vec(t, "y")
	return func(u []float64) (float64, []float64) {
		b, s := u[:5], math.Exp(u[5])
		lp := u[5] + normal(s, 0, 10)
		for _, bj := range b {
			lp += normal(bj, 0, 10)
		}
		for i := range y {
			lp += normal(y[i], floats.Dot(x[i], b), s)
		}
		return lp, append(append([]float64{}, b...), s)
	}
}

func refDiamonds(t *testing.T) refFunc {
	d := readRefData(t, "diamonds-diamonds.json")
	x, y := d.mat(t, "X"), d.vec(t, "Y")
	k := len(x[0])
	means := make([]float64, k)
	for _, row := range x {
		floats.Add(means, row)
	}
	floats.Scale(1/float64(len(x)), means)
	xc := make([][]float64, len(x))
	for i, row := range x {
		xc[i] = make([]float64, k-1)
		for j := 1; j < k; j++ {
			xc[i][j-1] = row[j] - means[j]
		}
	}
	t3 := func(v, mu, s float64) float64 { return distuv.StudentsT{Mu: mu, Sigma: s, Nu: 3}.LogProb(v) }
	return func(u []float64) (float64, []float64) {
		b, ic, s := u[:k-1], u[k-1], math.Exp(u[k])
		lp := u[k] + t3(ic, 8, 10) + t3(s, 0, 10)
		for _, bj := range b {
			lp += normal(bj, 0, 1)
		}
		for i := range y {
			lp += normal(y[i], ic+floats.Dot(xc[i], b), s)
		}
		return lp, append(append([]float64{}, b...), ic, s)
	}
}

func refArK(t *testing.T) refFunc {
	d := readRefData(t, "arK-arK.json")
	y := d.vec(t, "y")
	k := int(d.num(t, "K"))
	return func(u []float64) (float64, []float64) {
		a, b, s := u[0], u[1:k+1], math.Exp(u[k+1])
		lp := u[k+1] + normal(a, 0, 10) + cauchy(s, 0, 2.5)
		for _, bj := range b {
			lp += normal(bj, 0, 10)
		}
		for i := k; i < len(y); i++ {
			m := a
			for j := 1; j <= k; j++ {
				m += b[j-1] * y[i-j]
			}
			lp += normal(y[i], m, s)
		}
		return lp, append(append([]float64{a}, b...), s)
	}
}

func refArma11(t *testing.T) refFunc {
	d := readRefData(t, "arma-arma11.json")
	y := d.vec(t, "y")
	return func(u []float64) (float64, []float64) {
		mu, phi, theta, s := u[0], u[1], u[2], math.Exp(u[3])
		lp := u[3] + normal(mu, 0, 10) + normal(phi, 0, 2) + normal(theta, 0, 2) + cauchy(s, 0, 2.5)
		nu := mu + phi*mu
		err := y[0] - nu
		lp += normal(err, 0, s)
		for i := 1; i < len(y); i++ {
			nu = mu + phi*y[i-1] + theta*err
			err = y[i] - nu
			lp += normal(err, 0, s)
		}
		return lp, []float64{mu, phi, theta, s}
	}
}

func refGarch11(t *testing.T) refFunc {
	d := readRefData(t, "garch-garch11.json")
	y, s1 := d.vec(t, "y"), d.num(t, "sigma1")
	return func(u []float64) (float64, []float64) {
		mu, a0, a1 := u[0], math.Exp(u[1]), logistic(u[2])
		l3 := logistic(u[3])
		b1 := (1 - a1) * l3
		lp := u[1] + math.Log(a1) + math.Log(1-a1) + math.Log(1-a1) + math.Log(l3) + math.Log(1-l3)
		sig := s1
		lp += normal(y[0], mu, sig)
		for i := 1; i < len(y); i++ {
			sig = math.Sqrt(a0 + a1*(y[i-1]-mu)*(y[i-1]-mu) + b1*sig*sig)
			lp += normal(y[i], mu, sig)
		}
		return lp, []float64{mu, a0, a1, b1}
	}
}

func refGPPoisRegr(t *testing.T) refFunc {
	d := readRefData(t, "gp_pois_regr-gp_pois_regr.json")
	x, k := d.vec(t, "x"), d.vec(t, "k")
	n := len(x)
	return func(u []float64) (float64, []float64) {
		rho, alpha, ft := math.Exp(u[0]), math.Exp(u[1]), u[2:2+n]
		cov := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				v := alpha * alpha * math.Exp(-(x[i]-x[j])*(x[i]-x[j])/(2*rho*rho))
				if i == j {
					v += 1e-10
				}
				cov.SetSym(i, j, v)
			}
		}
		var chol mat.Cholesky
		if !chol.Factorize(cov) {
			return math.NaN(), nil
		}
		var l mat.TriDense
		chol.LTo(&l)
		f := mat.NewVecDense(n, nil)
		f.MulVec(&l, mat.NewVecDense(n, append([]float64(nil), ft...)))
		lp := u[0] + u[1] + distuv.Gamma{Alpha: 25, Beta: 4}.LogProb(rho) + normal(alpha, 0, 2)
		for i := 0; i < n; i++ {
			lp += normal(ft[i], 0, 1) + distuv.Poisson{Lambda: math.Exp(f.AtVec(i))}.LogProb(k[i])
		}
		out := append([]float64{rho, alpha}, ft...)
		return lp, append(out, f.RawVector().Data...)
	}
}

func refLowDimGaussMix(t *testing.T) refFunc {
	d := readRefData(t, "low_dim_gauss_mix-low_dim_gauss_mix.json")
	y := d.vec(t, "y")
	return func(u []float64) (float64, []float64) {
		m1 := u[0]
		m2 := m1 + math.Exp(u[1])
		s1, s2 := math.Exp(u[2]), math.Exp(u[3])
		th := logistic(u[4])
		lp := u[1] + u[2] + u[3] + math.Log(th) + math.Log(1-th)
		lp += normal(s1, 0, 2) + normal(s2, 0, 2) + normal(m1, 0, 2) + normal(m2, 0, 2)
		lp += distuv.Beta{Alpha: 5, Beta: 5}.LogProb(th)
		for _, v := range y {
			lp += floats.LogSumExp([]float64{math.Log(th) + normal(v, m1, s1), math.Log(1-th) + normal(v, m2, s2)})
		}
		return lp, []float64{m1, m2, s1, s2, th}
	}
}

func refHMM(t *testing.T) refFunc {
	d := readRefData(t, "hmm_example-hmm_example.json")
	y := d.vec(t, "y")
	return func(u []float64) (float64, []float64) {
		th := [2][2]float64{{logistic(u[0]), 1 - logistic(u[0])}, {logistic(u[1]), 1 - logistic(u[1])}}
		mu := [2]float64{math.Exp(u[2]), 0}
		mu[1] = mu[0] + math.Exp(u[3])
		lp := u[2] + u[3]
		for j := range th {
			lp += math.Log(th[j][0]) + math.Log(th[j][1])
		}
		lp += normal(mu[0], 3, 1) + normal(mu[1], 10, 1)
		g := [2]float64{normal(y[0], mu[0], 1), normal(y[0], mu[1], 1)}
		for i := 1; i < len(y); i++ {
			var next [2]float64
			for k := range next {
				next[k] = floats.LogSumExp([]float64{g[0] + math.Log(th[0][k]), g[1] + math.Log(th[1][k])}) + normal(y[i], mu[k], 1)
			}
			g = next
		}
		lp += floats.LogSumExp(g[:])
		return lp, []float64{th[0][0], th[0][1], th[1][0], th[1][1], mu[0], mu[1]}
	}
}

// lotkaVolterraRK4 solves the Lotka–Volterra system from z0 at θ = (α, β,
// γ, δ) with the classical fourth-order Runge–Kutta method in fixed steps
// of 1/steps, returning the states at the integer times 1, …, n. With
// 2000 steps per unit its error is far below the tests' tolerances.
func lotkaVolterraRK4(theta, z0 []float64, n, steps int) [][2]float64 {
	f := func(z [2]float64) [2]float64 {
		return [2]float64{(theta[0] - theta[1]*z[1]) * z[0], (-theta[2] + theta[3]*z[0]) * z[1]}
	}
	h := 1 / float64(steps)
	z := [2]float64{z0[0], z0[1]}
	out := make([][2]float64, n)
	for t := range out {
		for range steps {
			k1 := f(z)
			k2 := f([2]float64{z[0] + h/2*k1[0], z[1] + h/2*k1[1]})
			k3 := f([2]float64{z[0] + h/2*k2[0], z[1] + h/2*k2[1]})
			k4 := f([2]float64{z[0] + h*k3[0], z[1] + h*k3[1]})
			for i := range z {
				z[i] += h / 6 * (k1[i] + 2*k2[i] + 2*k3[i] + k4[i])
			}
		}
		out[t] = z
	}
	return out
}

func refLotkaVolterra(t *testing.T) refFunc {
	d := readRefData(t, "hudson_lynx_hare-lotka_volterra.json")
	yInit, y := d.vec(t, "y_init"), d.mat(t, "y")
	lognormal := func(x, mu, s float64) float64 { return distuv.LogNormal{Mu: mu, Sigma: s}.LogProb(x) }
	return func(u []float64) (float64, []float64) {
		c := make([]float64, 8)
		lp := 0.0
		for i := range c {
			c[i] = math.Exp(u[i])
			lp += u[i]
		}
		theta, z0, sigma := c[:4], c[4:6], c[6:8]
		lp += normal(theta[0], 1, 0.5) + normal(theta[2], 1, 0.5) + normal(theta[1], 0.05, 0.05) + normal(theta[3], 0.05, 0.05)
		out := append([]float64(nil), c...)
		for k := range 2 {
			lp += lognormal(sigma[k], -1, 1) + lognormal(z0[k], math.Log(10), 1) + lognormal(yInit[k], math.Log(z0[k]), sigma[k])
		}
		for n, z := range lotkaVolterraRK4(theta, z0, len(y), 2000) {
			for k := range 2 {
				lp += lognormal(y[n][k], math.Log(z[k]), sigma[k])
			}
			out = append(out, z[0], z[1])
		}
		return lp, out
	}
}

// TestLogDensityMatchesReference compares each model with its plain-Go
// reference: the constrained values at random points, and the difference
// of log densities between two points (the references keep Stan's
// unnormalised half-distributions, so the levels differ by constants).
func TestLogDensityMatchesReference(t *testing.T) {
	skipInRacePass(t)
	refs := map[string]func(*testing.T) refFunc{
		"eight_schools_noncentered":       refEightSchoolsNoncentered,
		"eight_schools_centered":          refEightSchoolsCentered,
		"kilpisjarvi":                     refKilpisjarvi,
		"kidscore_interaction":            refKidscore,
		"blr":                             refBLR,
		"diamonds":                        refDiamonds,
		"arK":                             refArK,
		"arma11":                          refArma11,
		"garch11":                         refGarch11,
		"gp_pois_regr":                    refGPPoisRegr,
		"low_dim_gauss_mix":               refLowDimGaussMix,
		"hmm_example":                     refHMM,
		"lotka_volterra":                  refLotkaVolterra,
		"bball_drive_event_0-hmm_drive_0": refHMMDrive0,
		"bball_drive_event_1-hmm_drive_1": refHMMDrive1,
		"gp_pois_regr-gp_regr":            refGPRegr,
		"mcycle_gp-accel_gp":              refAccelGP,
		"one_comp_mm_elim_abs-one_comp_mm_elim_abs": refOneCompMM,
	}
	for name, ref := range linregRefs() {
		refs[name] = ref
	}
	for _, m := range gallery {
		t.Run(m.name, func(t *testing.T) {
			model, err := m.build("")
			if err != nil {
				t.Fatal(err)
			}
			mk, ok := refs[m.name]
			if !ok {
				t.Fatal("no reference implementation")
			}
			ref := mk(t)
			rng := rand.New(rand.NewPCG(11, 12))
			n := model.Dim()
			var lps, refs [2]float64
			for p := range lps {
				u := make([]float64, n)
				for i := range u {
					u[i] = rng.Float64() - 0.5
				}
				lp, err := model.LogDensity(u)
				if err != nil {
					t.Fatal(err)
				}
				r, want := ref(u)
				lps[p], refs[p] = lp, r
				got := make([]float64, len(model.ParamNames()))
				if err := model.Constrain(u, got); err != nil {
					t.Fatal(err)
				}
				if len(want) != len(got) {
					t.Fatalf("%d constrained values, reference has %d", len(got), len(want))
				}
				for i := range got {
					if math.Abs(got[i]-want[i]) > 1e-10*(1+math.Abs(want[i])) {
						t.Errorf("%s = %v, reference %v", model.ParamNames()[i], got[i], want[i])
					}
				}
			}
			diff, want := lps[0]-lps[1], refs[0]-refs[1]
			if math.Abs(diff-want) > 1e-9*(1+math.Abs(lps[0])+math.Abs(lps[1])) {
				t.Errorf("log density difference %v, reference %v (values %v, reference %v)", diff, want, lps, refs)
			}
		})
	}
}

// refHMMDrive is the log-scale forward algorithm of the drive models, the
// emission log density emit(t, k, φ_k, λ_k) given; the parameter order is
// theta1 (1 free), theta2 (1), then the two ordered pairs phi and lambda,
// positive (exp of the first, then exp of the increment) or not.
func refHMMDrive(t *testing.T, file string, positive bool, emit func(d refData) func(i int, phi, lambda float64) float64) refFunc {
	d := readRefData(t, file)
	alpha := d.mat(t, "alpha")
	e := emit(d)
	n := int(d.num(t, "N"))
	return func(u []float64) (float64, []float64) {
		th := [2][2]float64{{logistic(u[0]), 1 - logistic(u[0])}, {logistic(u[1]), 1 - logistic(u[1])}}
		lp := 0.0
		for j := range th {
			lp += math.Log(th[j][0]) + math.Log(th[j][1]) // the simplexes' Jacobians
			lp += distuv.Beta{Alpha: alpha[j][0], Beta: alpha[j][1]}.LogProb(th[j][0])
		}
		ordered := func(a, b float64) [2]float64 {
			if positive {
				lp += a + b
				return [2]float64{math.Exp(a), math.Exp(a) + math.Exp(b)}
			}
			lp += b
			return [2]float64{a, a + math.Exp(b)}
		}
		phi, lam := ordered(u[2], u[3]), ordered(u[4], u[5])
		lp += normal(phi[0], 0, 1) + normal(phi[1], 3, 1) + normal(lam[0], 0, 1) + normal(lam[1], 3, 1)
		g := [2]float64{e(0, phi[0], lam[0]), e(0, phi[1], lam[1])}
		for i := 1; i < n; i++ {
			var next [2]float64
			for k := range next {
				next[k] = floats.LogSumExp([]float64{g[0] + math.Log(th[0][k]), g[1] + math.Log(th[1][k])}) + e(i, phi[k], lam[k])
			}
			g = next
		}
		lp += floats.LogSumExp(g[:])
		return lp, []float64{th[0][0], th[0][1], th[1][0], th[1][1], phi[0], phi[1], lam[0], lam[1]}
	}
}

func refHMMDrive0(t *testing.T) refFunc {
	return refHMMDrive(t, "bball_drive_event_0-hmm_drive_0.json", true, func(d refData) func(int, float64, float64) float64 {
		u, v := d.vec(t, "u"), d.vec(t, "v")
		return func(i int, phi, lambda float64) float64 {
			return distuv.Exponential{Rate: phi}.LogProb(u[i]) + distuv.Exponential{Rate: lambda}.LogProb(v[i])
		}
	})
}

func refHMMDrive1(t *testing.T) refFunc {
	return refHMMDrive(t, "bball_drive_event_1-hmm_drive_1.json", false, func(d refData) func(int, float64, float64) float64 {
		u, v, tau, rho := d.vec(t, "u"), d.vec(t, "v"), d.num(t, "tau"), d.num(t, "rho")
		return func(i int, phi, lambda float64) float64 {
			return normal(u[i], phi, tau) + normal(v[i], lambda, rho)
		}
	})
}

func refGPRegr(t *testing.T) refFunc {
	d := readRefData(t, "gp_pois_regr-gp_regr.json")
	x, y := d.vec(t, "x"), d.vec(t, "y")
	n := len(x)
	return func(u []float64) (float64, []float64) {
		rho, alpha, sigma := math.Exp(u[0]), math.Exp(u[1]), math.Exp(u[2])
		cov := mat.NewSymDense(n, nil)
		for i := range n {
			for j := 0; j <= i; j++ {
				v := alpha * alpha * math.Exp(-(x[i]-x[j])*(x[i]-x[j])/(2*rho*rho))
				if i == j {
					v += sigma
				}
				cov.SetSym(i, j, v)
			}
		}
		var chol mat.Cholesky
		if !chol.Factorize(cov) {
			return math.NaN(), nil
		}
		yv := mat.NewVecDense(n, append([]float64(nil), y...))
		var sol mat.VecDense
		if err := chol.SolveVecTo(&sol, yv); err != nil {
			return math.NaN(), nil
		}
		lp := u[0] + u[1] + u[2] + distuv.Gamma{Alpha: 25, Beta: 4}.LogProb(rho) + normal(alpha, 0, 2) + normal(sigma, 0, 1)
		lp += -0.5*mat.Dot(yv, &sol) - 0.5*chol.LogDet() - float64(n)*logSqrt2Pi
		return lp, []float64{rho, alpha, sigma}
	}
}

func refAccelGP(t *testing.T) refFunc {
	d := readRefData(t, "mcycle_gp-accel_gp.json")
	y, x, xs := d.vec(t, "Y"), d.mat(t, "Xgp_1"), d.mat(t, "Xgp_sigma_1")
	sl, sls := d.mat(t, "slambda_1"), d.mat(t, "slambda_sigma_1")
	m, ms := len(sl), len(sls)
	st := func(v, nu, mu, s float64) float64 { return distuv.StudentsT{Mu: mu, Sigma: s, Nu: nu}.LogProb(v) }
	ig := func(v float64) float64 { // inv_gamma(1.124909, 0.0177)
		a, b := 1.124909, 0.0177
		lg, _ := math.Lgamma(a)
		return a*math.Log(b) - lg - (a+1)*math.Log(v) - b/v
	}
	gp := func(xm [][]float64, s [][]float64, sd, ls float64, z []float64) []float64 {
		w := make([]float64, len(z))
		for i := range w {
			spd := sd * sd * math.Sqrt(2*math.Pi) * ls * math.Exp(-0.5*ls*ls*s[i][0]*s[i][0])
			w[i] = math.Sqrt(spd) * z[i]
		}
		f := make([]float64, len(xm))
		for i, row := range xm {
			f[i] = floats.Dot(row, w)
		}
		return f
	}
	return func(u []float64) (float64, []float64) {
		b, sd, ls, z := u[0], math.Exp(u[1]), math.Exp(u[2]), u[3:3+m]
		o := 3 + m
		bs, sds, lss, zs := u[o], math.Exp(u[o+1]), math.Exp(u[o+2]), u[o+3:o+3+ms]
		lp := u[1] + u[2] + u[o+1] + u[o+2]
		lp += st(b, 3, -13, 36) + st(sd, 3, 0, 36) + math.Ln2 + ig(ls)
		lp += st(bs, 3, 0, 10) + st(sds, 3, 0, 36) + math.Ln2 + ig(lss)
		for _, v := range append(append([]float64{}, z...), zs...) {
			lp += normal(v, 0, 1)
		}
		mu, ls2 := gp(x, sl, sd, ls, z), gp(xs, sls, sds, lss, zs)
		for i := range y {
			lp += normal(y[i], b+mu[i], math.Exp(bs+ls2[i]))
		}
		out := append([]float64{b, sd, ls}, z...)
		return lp, append(append(out, bs, sds, lss), zs...)
	}
}

// oneCompMMRK4 solves the one-compartment model from C(0) = 0 with the
// classical fourth-order Runge–Kutta method in fixed steps of 1/steps,
// returning C at the given times.
func oneCompMMRK4(ka, km, vm, dose, vol float64, times []float64, steps int) []float64 {
	f := func(t, c float64) float64 { return dose*ka*math.Exp(-ka*t)/vol - vm/vol*c/(km+c) }
	h := 1 / float64(steps)
	c, t := 0.0, 0.0
	out := make([]float64, len(times))
	for i, te := range times {
		for t < te-h/2 {
			k1 := f(t, c)
			k2 := f(t+h/2, c+h/2*k1)
			k3 := f(t+h/2, c+h/2*k2)
			k4 := f(t+h, c+h*k3)
			c += h / 6 * (k1 + 2*k2 + 2*k3 + k4)
			t += h
		}
		out[i] = c
	}
	return out
}

func refOneCompMM(t *testing.T) refFunc {
	d := readRefData(t, "one_comp_mm_elim_abs-one_comp_mm_elim_abs.json")
	times, cHat, dose, vol := d.vec(t, "times"), d.vec(t, "C_hat"), d.num(t, "D"), d.num(t, "V")
	return func(u []float64) (float64, []float64) {
		p := make([]float64, 4)
		lp := 0.0
		for i := range p {
			p[i] = math.Exp(u[i])
			lp += u[i] + cauchy(p[i], 0, 1) + math.Ln2
		}
		c := oneCompMMRK4(p[0], p[1], p[2], dose, vol, times, 2000)
		for i, ch := range cHat {
			lp += distuv.LogNormal{Mu: math.Log(c[i]), Sigma: p[3]}.LogProb(ch)
		}
		return lp, append(p, c...)
	}
}
