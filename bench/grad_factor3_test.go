package bench

import (
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/trjgo/trj/ad"
	"github.com/trjgo/trj/ad/ops"
	"github.com/trjgo/trj/internal/checks"
	"github.com/trjgo/trj/models/datasets"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// init registers factor3 with BenchmarkGradient.
func init() {
	registerGradModel("factor3", factor3Setup)
}

// loadExchangeRates reads the 143×6 standardized exchange-rate data of the
// paper's factor-analysis example, embedded in package datasets, with its
// own CSV parsing (independently of package factor).
func loadExchangeRates(tb testing.TB) *mat.Dense {
	tb.Helper()
	f, err := datasets.Open(datasets.ExchangeRates)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	if len(rows) < 2 {
		tb.Fatal("exchange rates: no data rows")
	}
	p := len(rows[0])
	y := mat.NewDense(len(rows)-1, p, nil)
	for i, r := range rows[1:] {
		if len(r) != p {
			tb.Fatalf("exchange rates: row %d has %d fields, want %d", i+2, len(r), p)
		}
		for j, s := range r {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				tb.Fatalf("exchange rates: row %d: %v", i+2, err)
			}
			y.Set(i, j, v)
		}
	}
	return y
}

// factorHand is the factor model's log-posterior and gradient written
// directly in Go on gonum's BLAS and LAPACK, as a careful Go programmer
// would: one Cholesky of Σ (lapack64.Potrf, which unlike mat.Cholesky skips
// the condition-number estimate and does not allocate), its inverse, and
// dℓ/dΣ = −n/2·Σ⁻¹ + ½Σ⁻¹SΣ⁻¹, dℓ/dB = 2(dℓ/dΣ)B. It owns its scratch, like
// a Program.
type factorHand struct {
	n, p, k, nLow int
	c             float64
	s             []float64 // YᵀY, p×p row-major, full

	b       blas64.General // p×k loadings
	chol    []float64      // p×p: Σ, then L, then Σ⁻¹ (lower triangle)
	inv     blas64.General // Σ⁻¹, both triangles
	tmp, gs blas64.General // p×p scratch and dℓ/dΣ
	db      blas64.General // p×k: dℓ/dB / 2
}

func newFactorHand(y mat.Matrix, k int) *factorHand {
	n, p := y.Dims()
	gen := func(r, c int) blas64.General {
		return blas64.General{Rows: r, Cols: c, Stride: c, Data: make([]float64, r*c)}
	}
	h := &factorHand{n: n, p: p, k: k, nLow: factorLowerCount(p, k), c: factorConst(n, p, k),
		b: gen(p, k), chol: make([]float64, p*p), inv: gen(p, p), tmp: gen(p, p), gs: gen(p, p), db: gen(p, k)}
	var s mat.SymDense
	s.SymOuterK(1, y.T())
	h.s = make([]float64, p*p)
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			h.s[i*p+j] = s.At(i, j)
		}
	}
	return h
}

var errFactorNotPD = errors.New("factor model: covariance is not positive definite")

// logDensityGrad returns the log-posterior at theta and writes its gradient.
func (h *factorHand) logDensityGrad(theta, grad []float64) (float64, error) {
	p, k, nLow := h.p, h.k, h.nLow
	if len(theta) != factorDim(p, k) || len(grad) != len(theta) {
		return 0, fmt.Errorf("factor model: got %d parameters and %d gradient entries, want %d", len(theta), len(grad), factorDim(p, k))
	}
	low, dlog, vlog := theta[:nLow], theta[nLow:nLow+k], theta[nLow+k:]
	bd := h.b.Data
	for i := range bd {
		bd[i] = 0
	}
	idx := 0
	for i := 0; i < p; i++ {
		for j := 0; j < min(i, k); j++ {
			bd[i*k+j] = low[idx]
			idx++
		}
		if i < k {
			bd[i*k+i] = math.Exp(dlog[i])
		}
	}
	// Σ = BBᵀ + Λ (lower triangle), factored in place.
	sym := blas64.Symmetric{N: p, Stride: p, Data: h.chol, Uplo: blas.Lower}
	blas64.Syrk(blas.NoTrans, 1, h.b, 0, sym)
	for i, v := range vlog {
		h.chol[i*p+i] += math.Exp(v)
	}
	t, ok := lapack64.Potrf(sym)
	if !ok {
		return math.Inf(-1), errFactorNotPD
	}
	var logDet float64
	for i := 0; i < p; i++ {
		logDet += 2 * math.Log(h.chol[i*p+i])
	}
	if _, ok := lapack64.Potri(t); !ok {
		return math.Inf(-1), errFactorNotPD
	}
	inv := h.inv.Data
	var tr float64
	for i := 0; i < p; i++ {
		for j := 0; j <= i; j++ {
			v := h.chol[i*p+j]
			inv[i*p+j], inv[j*p+i] = v, v
			if i == j {
				tr += v * h.s[i*p+i]
			} else {
				tr += 2 * v * h.s[i*p+j]
			}
		}
	}
	nf := float64(h.n)
	lp := h.c - 0.5*nf*logDet - 0.5*tr

	// G = dℓ/dΣ = ½Σ⁻¹SΣ⁻¹ − n/2·Σ⁻¹, then dℓ/dB = 2GB.
	sGen := blas64.General{Rows: p, Cols: p, Stride: p, Data: h.s}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, h.inv, sGen, 0, h.tmp)
	copy(h.gs.Data, inv)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 0.5, h.tmp, h.inv, -0.5*nf, h.gs)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 2, h.gs, h.b, 0, h.db)
	db, gs := h.db.Data, h.gs.Data

	idx = 0
	for i := 0; i < p; i++ {
		for j := 0; j < min(i, k); j++ {
			bij := low[idx]
			lp -= 0.5 * bij * bij
			grad[idx] = db[i*k+j] - bij
			idx++
		}
	}
	for j, u := range dlog {
		d := math.Exp(u)
		lp += -0.5*d*d + u
		grad[nLow+j] = db[j*k+j]*d - d*d + 1
	}
	for i, v := range vlog {
		lam := math.Exp(v)
		lp += -factorIGShape*v - factorIGScale/lam
		grad[nLow+k+i] = gs[i*p+i]*lam - factorIGShape + factorIGScale/lam
	}
	return lp, nil
}

// factorReference evaluates the log-posterior the slow, obvious way: the
// likelihood row by row, the priors from gonum's distributions and the
// log-Jacobians of the exp transforms. It shares nothing with the other
// implementations but the parameter layout.
func factorReference(y mat.Matrix, k int, theta []float64) float64 {
	n, p := y.Dims()
	nLow := factorLowerCount(p, k)
	b := mat.NewDense(p, k, nil)
	lp := 0.0
	idx := 0
	std := distuv.Normal{Mu: 0, Sigma: 1}
	for i := 0; i < p; i++ {
		for j := 0; j < min(i, k); j++ {
			b.Set(i, j, theta[idx])
			lp += std.LogProb(theta[idx])
			idx++
		}
	}
	for j := 0; j < k; j++ {
		u := theta[nLow+j]
		d := math.Exp(u)
		b.Set(j, j, d)
		lp += math.Ln2 + std.LogProb(d) + u // half-normal, Jacobian
	}
	sigma := mat.NewSymDense(p, nil)
	sigma.SymOuterK(1, b)
	ig := distuv.InverseGamma{Alpha: factorIGShape, Beta: factorIGScale}
	for i := 0; i < p; i++ {
		v := theta[nLow+k+i]
		lam := math.Exp(v)
		sigma.SetSym(i, i, sigma.At(i, i)+lam)
		lp += ig.LogProb(lam) + v
	}
	var ch mat.Cholesky
	if !ch.Factorize(sigma) {
		return math.NaN()
	}
	var z mat.VecDense
	for r := 0; r < n; r++ {
		yr := mat.Row(nil, r, y)
		if err := ch.SolveVecTo(&z, mat.NewVecDense(p, yr)); err != nil {
			return math.NaN()
		}
		lp += -0.5 * (float64(p)*math.Log(2*math.Pi) + ch.LogDet() + mat.Dot(&z, mat.NewVecDense(p, yr)))
	}
	return lp
}

// factorTestPoints returns fixed-seed points in a plausible posterior region.
func factorTestPoints(p, k, count int) [][]float64 {
	rng := rand.New(rand.NewPCG(43, 3))
	nLow := factorLowerCount(p, k)
	pts := make([][]float64, count)
	for c := range pts {
		x := make([]float64, factorDim(p, k))
		for i := range x {
			switch {
			case i < nLow:
				x[i] = 0.5 * rng.NormFloat64()
			case i < nLow+k:
				x[i] = -0.3 + 0.3*rng.NormFloat64()
			default:
				x[i] = -1.5 + 0.5*rng.NormFloat64()
			}
		}
		pts[c] = x
	}
	return pts
}

// newFactorTape builds the graph a second time with values in the
// parameter nodes, as tapeImpl needs.
func newFactorTape(tb testing.TB, y mat.Matrix, k int) gradImpl {
	fg, err := newFactorGraph(y, k)
	if err != nil {
		tb.Fatal(err)
	}
	for _, n := range fg.wrt {
		v := tensor.New(tensor.WithShape(n.Shape().Clone()...), tensor.WithBacking(make([]float64, n.Shape().TotalSize())))
		if err := gorgonia.Let(n, v); err != nil {
			tb.Fatal(err)
		}
	}
	return tapeImpl(tb, fg.g, fg.logp, fg.wrt)
}

func factor3Setup(tb testing.TB) ([]float64, map[string]gradImpl) {
	y := loadExchangeRates(tb)
	const k = 3
	fg, err := newFactorGraph(y, k)
	if err != nil {
		tb.Fatal(err)
	}
	h := newFactorHand(y, k)
	_, p := y.Dims()
	return factorTestPoints(p, k, 1)[0], map[string]gradImpl{
		"compiled": compiledImpl(tb, fg.g, fg.logp, fg.wrt),
		"tape":     newFactorTape(tb, y, k),
		"hand":     panicOnError(h.logDensityGrad),
	}
}

// TestFactor3Gradient checks the compiled graph and the hand-written
// log-posterior against an independent row-by-row evaluation and against
// each other, and both gradients against finite differences, for the
// benchmark's three-factor model (dimension 21) and the paper's two-factor
// model (dimension 17).
func TestFactor3Gradient(t *testing.T) {
	y := loadExchangeRates(t)
	n, p := y.Dims()
	if n != 143 || p != 6 {
		t.Fatalf("exchange rates: %d×%d, want 143×6", n, p)
	}
	for _, c := range []struct{ k, dim int }{{2, 17}, {3, 21}} {
		t.Run(fmt.Sprintf("k=%d", c.k), func(t *testing.T) { checkFactorModel(t, y, c.k, c.dim) })
	}
}

func checkFactorModel(t *testing.T, y *mat.Dense, k, dim int) {
	_, p := y.Dims()
	if d := factorDim(p, k); d != dim {
		t.Fatalf("dimension %d, want %d", d, dim)
	}
	fg, err := newFactorGraph(y, k)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := ad.Compile(fg.g, fg.logp, fg.wrt)
	if err != nil {
		t.Fatal(err)
	}
	if fb := prog.Fallbacks(); len(fb) != 0 {
		t.Errorf("compiled factor model has fallbacks: %v", fb)
	}
	if prog.Dim() != dim {
		t.Fatalf("program dimension %d, want %d", prog.Dim(), dim)
	}
	h := newFactorHand(y, k)
	tape := newFactorTape(t, y, k)
	gc := make([]float64, dim)
	gh := make([]float64, dim)
	gt := make([]float64, dim)
	scratch := make([]float64, dim)
	for _, x := range factorTestPoints(p, k, 3) {
		vc, vh := checks.Grad(t, prog.LogDensityGrad, x, gc), checks.Grad(t, h.logDensityGrad, x, gh)
		vt := tape(x, gt)
		ref := factorReference(y, k, x)
		if !near(vc, ref) || !near(vh, ref) || !near(vt, ref) {
			t.Errorf("log-posterior: compiled %v, hand %v, tape %v, row-by-row reference %v", vc, vh, vt, ref)
		}
		want := checks.CentralGradient(func(x []float64) (float64, error) { return h.logDensityGrad(x, scratch) }, x, 1e-6)
		wantC := checks.CentralGradient(prog.LogDensity, x, 1e-6)
		for i := range want {
			if math.Abs(gc[i]-wantC[i]) > 1e-5*math.Max(1, math.Abs(wantC[i])) {
				t.Errorf("grad[%d]: compiled %v, finite difference of compiled %v", i, gc[i], wantC[i])
			}
			if !near(gc[i], gh[i]) || !near(gt[i], gh[i]) {
				t.Errorf("grad[%d]: compiled %v, hand %v, tape %v", i, gc[i], gh[i], gt[i])
			}
			// Central differences of a value of size ~10³ with step 1e-6
			// are good to ~1e-6 absolute.
			if math.Abs(gh[i]-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
				t.Errorf("grad[%d]: hand %v, finite difference %v", i, gh[i], want[i])
			}
		}
	}
	x := factorTestPoints(p, k, 1)[0]
	if a := testing.AllocsPerRun(20, func() { _, _ = prog.LogDensityGrad(x, gc) }); a != 0 {
		t.Errorf("compiled LogDensityGrad allocates %v times per call", a)
	}
	// A covariance that is not positive definite is an error, not a NaN:
	// zero loadings, and diagonals and Λ that underflow to 0.
	bad := make([]float64, len(x))
	for i := factorLowerCount(p, k); i < len(bad); i++ {
		bad[i] = -800
	}
	if _, err := prog.LogDensityGrad(bad, gc); err == nil {
		t.Error("singular covariance: compiled program returned no error")
	}
}

// Prior of the factor-analysis model (paper §4.3, after Lopes & West 2004):
// Λ_ii ~ InvGamma(factorIGShape, factorIGScale).
const (
	factorIGShape = 1.1
	factorIGScale = 0.05
)

// factorGraph is the unnormalised log-posterior of the factor-analysis model
// y_i ~ N(0, BBᵀ+Λ) with k factors, as a gorgonia graph on the unconstrained
// scale.
//
// B is p×k lower triangular with a positive diagonal and Λ is diagonal and
// positive. The parameters are three vector nodes, in the order of wrt:
// the entries of B strictly below the diagonal (row-major, p·k − k(k+1)/2 of
// them), the logs of B's k diagonal entries and the logs of Λ's p diagonal
// entries; log-Jacobians are included. Priors: β_ij ~ N(0, 1) below the
// diagonal, β_jj ~ N⁺(0, 1), Λ_ii ~ InvGamma(1.1, 0.05). All normalising
// constants are included, so logp is the log of the exact unnormalised
// posterior density (prior × likelihood × Jacobian).
//
// The likelihood uses the sufficient statistic S = YᵀY:
// −n/2·(p log 2π + log det Σ) − ½ tr(Σ⁻¹S), with tr(Σ⁻¹S) = ‖L⁻¹R‖²_F for
// Σ = LLᵀ and S = RRᵀ, so the data enter only through the constant p×p R.
type factorGraph struct {
	g    *gorgonia.ExprGraph
	logp *gorgonia.Node
	wrt  []*gorgonia.Node
	p, k int
}

// factorLowerCount is the number of entries of a p×k lower-triangular matrix
// strictly below the diagonal.
func factorLowerCount(p, k int) int { return p*k - k*(k+1)/2 }

// factorDim is the dimension of the k-factor model with p observed variables.
func factorDim(p, k int) int { return factorLowerCount(p, k) + k + p }

// newFactorGraph builds the k-factor model's log-posterior for the data y
// (n rows × p columns).
func newFactorGraph(y mat.Matrix, k int) (fg *factorGraph, err error) {
	if y == nil {
		return nil, errors.New("factor model: nil data")
	}
	n, p := y.Dims()
	if n < 1 || p < 2 || k < 1 || k > p {
		return nil, fmt.Errorf("factor model: %d factors for %d×%d data, want p ≥ 2 and 1 ≤ k ≤ p", k, n, p)
	}
	var s mat.SymDense
	s.SymOuterK(1, y.T())
	var chs mat.Cholesky
	if !chs.Factorize(&s) {
		return nil, errors.New("factor model: YᵀY is not positive definite (collinear columns or too few rows)")
	}
	var r mat.TriDense
	chs.LTo(&r)

	nLow := factorLowerCount(p, k)
	// Selection matrices scatter (lower entries, diagonal) into B (p×k) and
	// the diagonal of Λ into Λ (p×p), flattened row-major. gorgonia cannot
	// concatenate single elements (slicing one out of a vector yields a
	// scalar), and at these sizes the products cost less than the dozens of
	// slice nodes a scatter would need.
	selB := mat.NewDense(p*k, nLow+k, nil)
	selLam := mat.NewDense(p*p, p, nil)
	idx := 0
	for i := 0; i < p; i++ {
		for j := 0; j < min(i, k); j++ {
			selB.Set(i*k+j, idx, 1)
			idx++
		}
		if i < k {
			selB.Set(i*k+i, nLow+i, 1)
		}
		selLam.Set(i*p+i, i, 1)
	}

	var b graphBuilder
	// gorgonia's constructors panic when handed the nil node that follows
	// a failed step; report the first error instead.
	defer func() {
		if r := recover(); r != nil {
			fg, err = nil, fmt.Errorf("factor model: building graph: %v (first error: %v)", r, b.err)
		}
	}()
	g := gorgonia.NewGraph()
	data := func(name string, m *mat.Dense) *gorgonia.Node {
		rr, cc := m.Dims()
		v := tensor.New(tensor.WithShape(rr, cc), tensor.WithBacking(append([]float64(nil), m.RawMatrix().Data...)))
		return gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(rr, cc), gorgonia.WithName(name), gorgonia.WithValue(v))
	}
	scalar := func(v float64) *gorgonia.Node { return gorgonia.NewConstant(v) }

	bLow := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(nLow), gorgonia.WithName("beta_lower"))
	bDiagLog := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(k), gorgonia.WithName("log_beta_diag"))
	lamLog := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(p), gorgonia.WithName("log_lambda"))

	bDiag := b.do(gorgonia.Exp(bDiagLog))
	lam := b.do(gorgonia.Exp(lamLog))
	bFlat := b.do(gorgonia.Mul(data("sel_b", selB), b.do(gorgonia.Concat(0, bLow, bDiag))))
	bm := b.do(gorgonia.Reshape(bFlat, tensor.Shape{p, k}))
	bbt := b.do(gorgonia.Mul(bm, b.do(gorgonia.Transpose(bm))))
	lamM := b.do(gorgonia.Reshape(b.do(gorgonia.Mul(data("sel_lambda", selLam), lam)), tensor.Shape{p, p}))
	sigma := b.do(gorgonia.Add(bbt, lamM))

	l := b.do(ops.Cholesky(sigma))
	rNode := data("chol_yty", mat.DenseCopyOf(&r))
	z := b.do(ops.SolveTriangular(l, rNode, true))
	quad := b.do(gorgonia.Sum(b.do(gorgonia.Square(z))))
	logDet := b.do(ops.LogDetSPD(sigma))
	// −n/2·log det Σ − ½ tr(Σ⁻¹S)
	lik := b.do(gorgonia.Add(
		b.do(gorgonia.Mul(scalar(-0.5*float64(n)), logDet)),
		b.do(gorgonia.Mul(scalar(-0.5), quad))))

	// Priors with Jacobians, up to the constant below:
	// −½Σβ_ij² − ½Σβ_jj² + Σ log β_jj − αΣ log Λ_ii − βΣ 1/Λ_ii.
	prior := b.do(gorgonia.Add(
		b.do(gorgonia.Mul(scalar(-0.5), b.do(gorgonia.Sum(b.do(gorgonia.Square(bDiag)))))),
		b.do(gorgonia.Sum(bDiagLog))))
	prior = b.do(gorgonia.Add(prior,
		b.do(gorgonia.Mul(scalar(-0.5), b.do(gorgonia.Sum(b.do(gorgonia.Square(bLow))))))))
	invLam := b.do(gorgonia.Exp(b.do(gorgonia.Neg(lamLog))))
	prior = b.do(gorgonia.Add(prior, b.do(gorgonia.Mul(scalar(-factorIGShape), b.do(gorgonia.Sum(lamLog))))))
	prior = b.do(gorgonia.Add(prior, b.do(gorgonia.Mul(scalar(-factorIGScale), b.do(gorgonia.Sum(invLam))))))

	logp := b.do(gorgonia.Add(b.do(gorgonia.Add(lik, prior)), scalar(factorConst(n, p, k))))
	if b.err != nil {
		return nil, fmt.Errorf("factor model: building graph: %w", b.err)
	}
	wrt := []*gorgonia.Node{bLow, bDiagLog, lamLog}
	return &factorGraph{g: g, logp: logp, wrt: wrt, p: p, k: k}, nil
}

// factorConst collects the normalising constants of the likelihood and the
// priors: −np/2·log 2π, N(0,1) and N⁺(0,1) normalisers and the inverse-gamma
// normaliser α log β − log Γ(α) per Λ_ii.
func factorConst(n, p, k int) float64 {
	log2pi := math.Log(2 * math.Pi)
	lg, _ := math.Lgamma(factorIGShape)
	return -0.5*float64(n*p)*log2pi +
		float64(factorLowerCount(p, k))*(-0.5*log2pi) +
		float64(k)*(math.Ln2-0.5*log2pi) +
		float64(p)*(factorIGShape*math.Log(factorIGScale)-lg)
}

// graphBuilder threads the first error through a chain of graph
// constructors, so that a model reads as its formula.
type graphBuilder struct{ err error }

func (b *graphBuilder) do(n *gorgonia.Node, err error) *gorgonia.Node {
	if b.err == nil && err != nil {
		b.err = err
	}
	if b.err != nil {
		return nil
	}
	return n
}
