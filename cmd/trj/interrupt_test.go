package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/ppl/draws"
)

// normalModel is a ppl.Model of n independent standard normals whose
// gradient calls are counted in evals (shared by clones); after limit
// calls (if > 0) it calls onLimit once and each later call waits for done
// to be closed, so that the interruption lands mid-run however fast the
// machine.
type normalModel struct {
	n       int
	evals   *atomic.Int64
	limit   int64
	onLimit func()
	done    <-chan struct{}
}

func (m *normalModel) Dim() int { return m.n }
func (m *normalModel) LogDensity(u []float64) (float64, error) {
	lp := -0.5 * float64(m.n) * math.Log(2*math.Pi)
	for _, v := range u {
		lp -= v * v / 2
	}
	return lp, nil
}
func (m *normalModel) LogDensityGrad(u, grad []float64) (float64, error) {
	if k := m.evals.Add(1); m.limit > 0 && k >= m.limit {
		if k == m.limit {
			m.onLimit()
		}
		<-m.done
	}
	for i, v := range u {
		grad[i] = -v
	}
	return m.LogDensity(u)
}
func (m *normalModel) ParamNames() []string {
	names := make([]string, m.n)
	for i := range names {
		names[i] = fmt.Sprintf("z.%d", i+1)
	}
	return names
}
func (m *normalModel) Constrain(u, dst []float64) error { copy(dst, u); return nil }
func (m *normalModel) Init(rng *rand.Rand, u []float64) error {
	for i := range u {
		u[i] = 4*rng.Float64() - 2
	}
	return nil
}
func (m *normalModel) Clone() ppl.Model { c := *m; return &c }

// normalRegistry serves one normalModel as "normal".
type normalRegistry struct{ m *normalModel }

func (normalRegistry) Names() []string { return []string{"normal"} }
func (r normalRegistry) Model(name, _ string) (Model, error) {
	if name != "normal" {
		return nil, fmt.Errorf("no model %q", name)
	}
	return r.m, nil
}

// interruptBackend is the real samplers on a normalModel.
func interruptBackend(m *normalModel) backend {
	b := defaultBackend()
	b.models = normalRegistry{m}
	return b
}

// readChains reads the CSV files of a run.
func readChains(t *testing.T, names []string) (*draws.Draws, [][]draws.Setting) {
	t.Helper()
	var sets []*draws.Draws
	var cfgs [][]draws.Setting
	for _, n := range names {
		d, cfg, err := draws.ReadFiles(n)
		if err != nil {
			t.Fatalf("%s is not a valid CSV file: %v", n, err)
		}
		sets = append(sets, d)
		cfgs = append(cfgs, cfg)
	}
	d, err := draws.Combine(sets...)
	if err != nil {
		t.Fatal(err)
	}
	return d, cfgs
}

// TestSampleInterruptKeepsDraws stops "trj sample -o" mid-run, once by a
// cancelled context and once by a real SIGINT, and checks that the files
// are valid CSV marked interrupted whose rows are bit-identical to the
// first rows of an uninterrupted run with the same seed, that the summary
// is printed, and that the exit code says "interrupted".
func TestSampleInterruptKeepsDraws(t *testing.T) {
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"sample", "-model", "normal", "-chains", "2", "-warmup", "60", "-draws", "400", "-seed", "7", "-o", filepath.Join(dir, out), "-quiet"}
	}
	full := &normalModel{n: 3, evals: new(atomic.Int64)}
	var out, errb bytes.Buffer
	if code := run(context.Background(), args("full.csv"), &out, &errb, interruptBackend(full)); code != exitOK {
		t.Fatalf("full run: code %d: %s", code, errb.String())
	}
	ref, _ := readChains(t, draws.ChainFileNames(filepath.Join(dir, "full.csv"), 2))
	total := full.evals.Load()

	for _, how := range []string{"cancel", "SIGINT"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			onLimit := cancel
			if how == "SIGINT" {
				var stop context.CancelFunc
				ctx, stop = signalContext()
				defer stop()
				onLimit = func() { syscall.Kill(os.Getpid(), syscall.SIGINT) }
			}
			// Stop about halfway through the gradient evaluations.
			m := &normalModel{n: 3, evals: new(atomic.Int64), limit: total / 2, onLimit: onLimit, done: ctx.Done()}
			var out, errb bytes.Buffer
			name := how + ".csv"
			code := run(ctx, args(name), &out, &errb, interruptBackend(m))
			if code != exitInterrupted || !strings.Contains(errb.String(), "interrupted") {
				t.Fatalf("code %d, stderr %q", code, errb.String())
			}
			got, cfgs := readChains(t, draws.ChainFileNames(filepath.Join(dir, name), 2))
			kept, short := 0, 0
			for c := range 2 {
				n := got.Len(c)
				marked := slices.ContainsFunc(cfgs[c], func(s draws.Setting) bool { return s.Key == draws.Interrupted })
				if marked != (n < ref.Len(c)) {
					t.Errorf("chain %d: %d of %d draws, marked interrupted: %v", c+1, n, ref.Len(c), marked)
				}
				if n < ref.Len(c) {
					short++
				}
				for i := range n {
					if !slices.Equal(got.Params(c, i), ref.Params(c, i)) || !slices.Equal(got.Diagnostics(c, i), ref.Diagnostics(c, i)) {
						t.Fatalf("chain %d draw %d differs from the uninterrupted run", c+1, i+1)
					}
				}
				kept += n
			}
			if kept == 0 || short == 0 {
				t.Fatalf("%d draws kept, %d chains cut short", kept, short)
			}
			if !strings.Contains(out.String(), "z.1") {
				t.Errorf("no summary of the kept draws:\n%s", out.String())
			}
			t.Logf("interrupted after %d and %d kept draws; stderr:\n%s", got.Len(0), got.Len(1), errb.String())
			// trj summary reads the files back and says they were cut short.
			var sout, serr bytes.Buffer
			files := draws.ChainFileNames(filepath.Join(dir, name), 2)
			if code := run(context.Background(), append([]string{"summary"}, files...), &sout, &serr, interruptBackend(m)); code != exitOK ||
				!strings.Contains(serr.String(), "interrupted before the end") || !strings.Contains(sout.String(), "z.1") {
				t.Errorf("trj summary of the interrupted files: exit %d, stderr %q", code, serr.String())
			}
		})
	}
}

// TestSampleChecksOutputFirst gives -o in a missing folder: the run must
// fail before any gradient is computed.
func TestSampleChecksOutputFirst(t *testing.T) {
	m := &normalModel{n: 2, evals: new(atomic.Int64)}
	// A folder under a file cannot be created.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"sample", "-model", "normal", "-o", filepath.Join(file, "x.csv")}, &out, &errb, interruptBackend(m))
	if code != exitFail || !strings.Contains(errb.String(), "cannot create the folder") || m.evals.Load() != 0 {
		t.Errorf("code %d, %d gradient evaluations, stderr %q", code, m.evals.Load(), errb.String())
	}
}
