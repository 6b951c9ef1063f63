package ops

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/trjgo/trj/ad"
)

// The fused GLM kernel. Rows are processed in blocks of glmBlock: η for the
// block's rows (dotRows), the family's log-likelihood terms and residuals
// r_i = ∂ℓ/∂η_i in place of η, then Xᵀr accumulated into the gradient
// (axpyRows) while the block's rows are still in the L1 cache. So X is read
// from memory once per evaluation.
//
// Blocks are grouped into chunks of rows whose size depends on n alone.
// Each chunk's partial sum and partial gradient start from zero, and the
// partials are added in chunk order, so the result is bit-for-bit the same
// whether one goroutine runs every chunk or several share them: the number
// of workers never changes the draws of a sampler.

// glmBlock is the number of rows whose η, residuals and rows of X are kept
// hot between the two products; it also bounds the product of (1 + e^−|η|)
// that the Bernoulli family takes one logarithm of (at most 2^64).
const glmBlock = 64

// glmChunkRows is the number of rows per chunk for n rows: all of them for
// small n, otherwise about n/64 (a multiple of glmBlock, at least 1024).
func glmChunkRows(n int) int {
	if n <= 4096 {
		return n
	}
	c := (n + 63) / 64
	c = (c + glmBlock - 1) / glmBlock * glmBlock
	return max(c, 1024)
}

// glmKernel evaluates glmOp. It keeps scratch (η per worker, partial sums
// per chunk, the cached data constant), so each Program clone needs its own.
type glmKernel struct {
	fam     glmFamily
	n, d    int
	chunk   int // rows per chunk
	nChunks int
	workers int

	eta   []float64    // glmBlock per worker
	claim []chunkClaim // per worker
	partS []float64    // per chunk
	partG []float64    // d per chunk, when nChunks > 1
	errs  []error      // per chunk

	// For the Poisson family: the outcomes the constant was computed for,
	// and −Σ log(y_i!).
	yCache []float64
	yConst float64
	yValid bool
}

var (
	_ ad.Cloner   = (*glmKernel)(nil)
	_ ad.Parallel = (*glmKernel)(nil)
)

func newGLMKernel(fam glmFamily, n, d, workers int) *glmKernel {
	k := &glmKernel{fam: fam, n: n, d: d, chunk: glmChunkRows(n)}
	k.nChunks = (n + k.chunk - 1) / k.chunk
	k.partS = make([]float64, k.nChunks)
	k.errs = make([]error, k.nChunks)
	if k.nChunks > 1 {
		k.partG = make([]float64, k.nChunks*d)
	}
	if fam == glmPoissonLog {
		k.yCache = make([]float64, n)
	}
	k.SetWorkers(workers)
	return k
}

// CloneKernel implements ad.Cloner.
func (k *glmKernel) CloneKernel() ad.Kernel { return newGLMKernel(k.fam, k.n, k.d, k.workers) }

// SetWorkers implements ad.Parallel: an evaluation runs its chunks of rows
// on up to n goroutines (the calling one included). Fewer than one means
// one. Only data sets of more than 4096 rows have more than one chunk.
func (k *glmKernel) SetWorkers(n int) {
	n = min(max(n, 1), k.nChunks)
	k.workers = n
	if len(k.eta) != n*glmBlock {
		k.eta = make([]float64, n*glmBlock)
		k.claim = make([]chunkClaim, n)
	}
}

func (k *glmKernel) Eval(out []float64, in [][]float64) error {
	wantIn := 3
	if k.fam.hasScale() {
		wantIn = 4
	}
	if len(in) != wantIn || len(in[0]) != k.n*k.d || len(in[1]) != k.d || len(in[2]) != k.n ||
		len(out) != (glmOp{fam: k.fam}).packedLen(k.d) {
		return errBufferSize
	}
	x, beta, y := in[0], in[1], in[2]
	var scale float64 // 1/σ² for the normal family
	switch k.fam {
	case glmPoissonLog:
		if err := k.poissonConstant(y); err != nil {
			return err
		}
	case glmNormalID:
		if len(in[3]) != 1 {
			return errBufferSize
		}
		sigma := in[3][0]
		if !(sigma > 0) || math.IsInf(sigma, 1) {
			return ErrDomain
		}
		scale = 1 / (sigma * sigma)
	}

	grad := out[1 : 1+k.d]
	var s float64
	if k.nChunks == 1 {
		clear(grad)
		var err error
		if s, err = k.rows(0, k.n, x, beta, y, scale, k.eta[:glmBlock], grad); err != nil {
			return err
		}
	} else {
		k.runChunks(x, beta, y, scale)
		for c, err := range k.errs {
			if err != nil {
				return err
			}
			k.errs[c] = nil
		}
		s = k.partS[0]
		copy(grad, k.partG[:k.d])
		for c := 1; c < k.nChunks; c++ {
			s += k.partS[c]
			for j, v := range k.partG[c*k.d : (c+1)*k.d] {
				grad[j] += v
			}
		}
	}

	switch k.fam {
	case glmBernoulliLogit:
		out[0] = s
	case glmPoissonLog:
		out[0] = s + k.yConst
	case glmNormalID:
		// s is the residual sum of squares; the residuals were already
		// scaled by 1/σ².
		sigma := in[3][0]
		nf := float64(k.n)
		out[0] = -0.5*s*scale - nf*math.Log(sigma) - 0.5*nf*math.Log(2*math.Pi)
		out[k.d+1] = (s*scale - nf) / sigma
	}
	return nil
}

// runChunks evaluates every chunk into partS and partG on k.workers
// goroutines. Worker w owns the contiguous run of chunks
// [w·nChunks/workers, (w+1)·nChunks/workers) and takes them in order, so
// each core streams its own part of X as one sequential read (measured
// faster than handing out chunks in turn from one counter, which
// interleaves the cores' reads); a worker that finishes its run then takes
// the remaining chunks of the others', so a worker that starts late or is
// descheduled does not hold up the evaluation.
func (k *glmKernel) runChunks(x, beta, y []float64, scale float64) {
	nw := k.workers
	for w := range nw {
		k.claim[w].next.Store(int64(w * k.nChunks / nw))
	}
	work := func(w int) {
		eta := k.eta[w*glmBlock : (w+1)*glmBlock]
		for v := range nw {
			owner := (w + v) % nw
			end := int64((owner + 1) * k.nChunks / nw)
			for {
				c := k.claim[owner].next.Add(1) - 1
				if c >= end {
					break
				}
				lo, hi := int(c)*k.chunk, min(int(c+1)*k.chunk, k.n)
				g := k.partG[int(c)*k.d : int(c+1)*k.d]
				clear(g)
				k.partS[c], k.errs[c] = k.rows(lo, hi, x, beta, y, scale, eta, g)
			}
		}
	}
	if nw == 1 {
		work(0)
		return
	}
	var wg sync.WaitGroup
	for w := 1; w < nw; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(w)
		}()
	}
	work(0)
	wg.Wait()
}

// chunkClaim is the next unclaimed chunk of one worker's run, padded to
// its own cache lines so that the workers' counters do not share one.
type chunkClaim struct {
	next atomic.Int64
	_    [120]byte
}

// rows adds the gradient of rows lo…hi−1 to g and returns their part of
// the family's sum, using eta (glmBlock long) as scratch.
func (k *glmKernel) rows(lo, hi int, x, beta, y []float64, scale float64, eta, g []float64) (float64, error) {
	d := k.d
	var s float64
	for i0 := lo; i0 < hi; i0 += glmBlock {
		i1 := min(i0+glmBlock, hi)
		xb := x[i0*d : i1*d]
		e := eta[:i1-i0]
		dotRows(xb, d, beta, e)
		var bs float64
		var err error
		switch k.fam {
		case glmBernoulliLogit:
			bs, err = bernoulliLogitBlock(e, y[i0:i1])
		case glmPoissonLog:
			bs = poissonLogBlock(e, y[i0:i1])
		case glmNormalID:
			bs = normalIDBlock(e, y[i0:i1], scale)
		}
		if err != nil {
			return 0, err
		}
		s += bs
		axpyRows(xb, d, e, g)
	}
	return s, nil
}

// bernoulliLogitBlockGo is bernoulliLogitBlock in portable Go: it
// returns Σ y_i η_i − log(1 + e^η_i) over a block of at most glmBlock rows
// and replaces each η_i by y_i − σ(η_i).
//
// With t = e^−|η| ∈ (0, 1], log(1 + e^η) = max(η, 0) + log(1 + t) and
// σ(η) = ½ + ½·sign(η)·(1 − t)/(1 + t): one exp per row, no branch on the
// sign of η, and one logarithm per block, of Π(1 + t_i) ≤ 2^glmBlock.
func bernoulliLogitBlockGo(eta, y []float64) (float64, error) {
	s, prod, err := bernoulliLogitRowsGo(eta, y, 0, 1)
	if err != nil {
		return 0, err
	}
	return s - math.Log(prod), nil
}

// bernoulliLogitRowsGo does the rows of bernoulliLogitBlockGo: it adds
// y_i η_i − max(η_i, 0) to s, multiplies prod by 1 + e^−|η_i| and replaces
// each η_i by y_i − σ(η_i).
func bernoulliLogitRowsGo(eta, y []float64, s, prod float64) (float64, float64, error) {
	y = y[:len(eta)]
	for i, e := range eta {
		yi := y[i]
		if yi*(1-yi) != 0 {
			return 0, 0, ErrDomain
		}
		// t = e^−|η|, fastExp inlined for arguments in [−700, 0]: below,
		// t < 1e-304 changes neither term. NaN passes through.
		a := math.Abs(e)
		nf := (min(a, 700)*-expInvL + expShift) - expShift
		n := int64(nf)
		r := (-min(a, 700) - nf*expL1) - nf*expL2
		r2 := r * r
		p := 1 + r + r2*(0.5+r*(1.0/6)) + r2*r2*(1.0/24+r*(1.0/120))
		t := expTable[n&63] * p * math.Float64frombits(uint64(n>>6+1023)<<52)
		u := 1 + t
		prod *= u
		s += yi*e - 0.5*(e+a)
		eta[i] = yi - (0.5 + math.Copysign(0.5, e)*(1-t)/u)
	}
	return s, prod, nil
}

// poissonLogBlockGo is poissonLogBlock in portable Go: it returns
// Σ y_i η_i − e^η_i and replaces each η_i by y_i − e^η_i. The outcomes
// were checked by poissonConstant.
func poissonLogBlockGo(eta, y []float64) float64 { return poissonLogRowsGo(eta, y, 0) }

// poissonLogRowsGo does the rows of poissonLogBlockGo, adding their terms
// to s in order.
func poissonLogRowsGo(eta, y []float64, s float64) float64 {
	y = y[:len(eta)]
	for i, e := range eta {
		var mu float64
		if e > -700 && e < 700 {
			// fastExp inlined; the rare arguments outside, and NaN,
			// take the call.
			nf := (e*expInvL + expShift) - expShift
			n := int64(nf)
			r := (e - nf*expL1) - nf*expL2
			r2 := r * r
			p := 1 + r + r2*(0.5+r*(1.0/6)) + r2*r2*(1.0/24+r*(1.0/120))
			mu = expTable[n&63] * p * math.Float64frombits(uint64(n>>6+1023)<<52)
		} else {
			mu = fastExp(e)
		}
		s += y[i]*e - mu
		eta[i] = y[i] - mu
	}
	return s
}

// normalIDBlock returns Σ (y_i − η_i)² and replaces each η_i by
// (y_i − η_i)·scale, with scale = 1/σ².
func normalIDBlock(eta, y []float64, scale float64) float64 {
	y = y[:len(eta)]
	var s float64
	for i, e := range eta {
		r := y[i] - e
		s += r * r
		eta[i] = r * scale
	}
	return s
}

// poissonConstant checks the counts y and sets k.yConst = −Σ log(y_i!),
// recomputing it only when y differs from the outcomes it was computed for.
func (k *glmKernel) poissonConstant(y []float64) error {
	if k.yValid {
		same := true
		for i, v := range y {
			if v != k.yCache[i] {
				same = false
				break
			}
		}
		if same {
			return nil
		}
	}
	k.yValid = false
	var c float64
	for _, v := range y {
		if !(v >= 0) || v != math.Trunc(v) || math.IsInf(v, 1) {
			return ErrDomain
		}
		lg, _ := math.Lgamma(v + 1)
		c -= lg
	}
	copy(k.yCache, y)
	k.yConst, k.yValid = c, true
	return nil
}
