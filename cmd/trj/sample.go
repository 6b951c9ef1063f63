package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/trjgo/trj/kernels"
	"github.com/trjgo/trj/ppl/draws"

	"github.com/trjgo/trj/shard"
)

// Model is what the CLI needs of a gallery model; the samplers receive it
// as the registry returned it. When wired, ppl.Model satisfies it.
type Model interface {
	ParamNames() []string
}

// Registry finds gallery models by name.
type Registry interface {
	// Names lists the models, for "trj models" and error messages.
	Names() []string
	// Model returns the model called name conditioned on the data in the
	// file dataPath, or on the model's own data when dataPath is "".
	Model(name, dataPath string) (Model, error)
}

// ModelInfo is what "trj models" prints about a model.
type ModelInfo struct {
	Dim         int    // dimension of the unconstrained parameter space
	DataFile    string // name of the model's own data set
	DataBytes   int64  // size of that data set
	Description string // one line on what the model is
}

// describer is a Registry that says more about its models than their
// names: what "trj models" prints, and which data a run reads.
type describer interface {
	Describe(name string) (ModelInfo, error)
	// DataName names the data the model called name is conditioned on
	// for the -data value dataPath ("" for the default).
	DataName(name, dataPath string) string
}

// SampleConfig is the part of the command line a sampler acts on.
type SampleConfig struct {
	Chains int
	// FirstChain numbers the chains: the sampler's chain k is chain
	// FirstChain+k of the whole run, seeded and reported as that chain
	// (a shard of the run; kernels.SampleSettings.Shard).
	FirstChain int
	Warmup     int // warm-up iterations per chain, not saved; 0 means none
	Draws      int // kept iterations per chain
	Seed       uint64
	// Progress is to be called after every iteration of every chain
	// (kernels.SampleSettings.Progress); it is safe for concurrent use by
	// all chains.
	Progress func(kernels.Progress)
	// Tempering, for tempering samplers (SMC), is to be called after each
	// temperature step (kernels.SMCSettings.Progress).
	Tempering func(kernels.Progress)
	// Metric is the kind of NUTS metric to adapt, by CmdStan's name
	// (diag_e, dense_e, unit_e); "" means diag_e.
	Metric string
	// AdaptDelta is NUTS's target acceptance statistic; 0 means 0.8.
	AdaptDelta float64
	// SMCMove is the SMC rejuvenation move by kernels.SMCMove's name;
	// "" means eigen-rwm.
	SMCMove string
	// Stream, when non-nil, gives the stream to which a sampler that
	// streams writes chain k's draws (k counts from 0 in this run) as it
	// makes them, with layout l, then the chain's adaptation block and
	// settings; the caller closes the streams. A sampler calls it at most
	// once per chain, from any goroutine; chains it does not stream are
	// written from the returned draws.
	Stream func(k int, l draws.Layout) (*draws.Stream, error)
}

// Sampler runs the chains of one algorithm. It returns the kept draws
// (constrained parameters with their sampler diagnostics) and any settings
// it adapted or chose (log evidence, …) to record in the CSV files. When
// ctx is cancelled it returns the draws kept so far, if any (chains may
// differ in length), with ctx's error.
type Sampler func(ctx context.Context, m Model, cfg SampleConfig) (*draws.Draws, []draws.Setting, error)

// backend is what sample and models run against: defaultBackend for the
// binary, fakes in tests.
type backend struct {
	models   Registry
	samplers map[string]Sampler // by -sampler name
}

// samplerNames returns the algorithms -sampler accepts.
func samplerNames() []string { return []string{"nuts", "rwm", "smc"} }

// defaultBackend is the gallery of package models with the kernels'
// samplers: NUTS and RWM through kernels.Sample, SMC through
// kernels.RunSMC (see smcSampler: its particles are one "chain").
func defaultBackend() backend {
	return backend{models: gallery{}, samplers: map[string]Sampler{
		"nuts": mcmcSampler(func(a kernels.NUTSAdaptConfig) kernels.Method { return kernels.NUTSMethod{Adapt: a} }),
		"rwm":  mcmcSampler(func(kernels.NUTSAdaptConfig) kernels.Method { return kernels.RWMMethod{} }),
		"smc":  smcSampler,
	}}
}

// oneChain reports whether the sampler returns a single "chain" whatever -chains says.
func oneChain(sampler string) bool { return sampler == "smc" }

// sampleFlags are the parsed flags of "trj sample".
type sampleFlags struct {
	model, data, sampler, out string
	chains, warmup, draws     int
	seed                      uint64
	quiet                     bool
	metric, smcMove           string
	adaptDelta                float64
	shardArg                  string
	sh                        shard.Shard
}

// smcMoveNames are the -smc-move values (kernels.SMCMove names).
func smcMoveNames() []string { return []string{"eigen-rwm", "rwm", "nuts"} }

// metricNames are the -metric values, CmdStan's names.
func metricNames() []string { return []string{"diag_e", "dense_e", "unit_e"} }

// parseSampleFlags parses and validates the flags of "trj sample"; errors
// are usage errors.
func parseSampleFlags(args []string, stderr io.Writer) (*sampleFlags, error) {
	var f sampleFlags
	fs := flag.NewFlagSet("trj sample", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.model, "model", "", "gallery model `name` (required; see \"trj models\")")
	fs.StringVar(&f.data, "data", "", "data `file` for the model (default: the model's own data set, from the folder $"+dataDirEnv+" when set, else the copy built into trj)")
	fs.StringVar(&f.sampler, "sampler", "nuts", "sampling algorithm: "+strings.Join(samplerNames(), ", "))
	fs.IntVar(&f.chains, "chains", 4, "number of chains")
	fs.IntVar(&f.warmup, "warmup", 1000, "warm-up iterations per chain")
	fs.IntVar(&f.draws, "draws", 1000, "kept draws per chain (for smc: the number of particles, reported as one chain)")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed; chains derive their streams from it")
	fs.StringVar(&f.out, "o", "", "CSV output `path`: path itself for one chain, path_1.csv … for several (default: none)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress messages on stderr")
	fs.StringVar(&f.metric, "metric", "diag_e", "NUTS metric adapted in warm-up: "+strings.Join(metricNames(), ", "))
	fs.Float64Var(&f.adaptDelta, "adapt-delta", 0.8, "NUTS target acceptance statistic in (0, 1); raise it to remove divergences")
	fs.StringVar(&f.smcMove, "smc-move", "eigen-rwm", "SMC rejuvenation move: "+strings.Join(smcMoveNames(), ", "))
	fs.StringVar(&f.shardArg, "shard", "", shardFlagHelp+"; the shard runs its block of the chains, seeded as in the whole run, and writes their files (needs -o)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if f.sh, err = shardAndArgs(fs, f.shardArg); err != nil {
		return nil, err
	}
	lengthsErr := checkLengths(f.chains, f.warmup, f.draws, "draws", "iterations")
	switch {
	case f.model == "":
		return nil, errors.New("-model is required")
	case !slices.Contains(samplerNames(), f.sampler):
		return nil, fmt.Errorf("-sampler %q: want one of %s", f.sampler, strings.Join(samplerNames(), ", "))
	case lengthsErr != nil:
		return nil, lengthsErr
	case !slices.Contains(metricNames(), f.metric):
		return nil, fmt.Errorf("-metric %q: want one of %s", f.metric, strings.Join(metricNames(), ", "))
	case !slices.Contains(smcMoveNames(), f.smcMove):
		return nil, fmt.Errorf("-smc-move %q: want one of %s", f.smcMove, strings.Join(smcMoveNames(), ", "))
	case !(f.adaptDelta > 0 && f.adaptDelta < 1):
		return nil, fmt.Errorf("-adapt-delta %v: want a number in (0, 1)", f.adaptDelta)
	}
	if f.sh.Split() {
		switch {
		case oneChain(f.sampler):
			return nil, fmt.Errorf("-shard: -sampler %s runs one population, which cannot be split", f.sampler)
		case f.out == "":
			return nil, errors.New("-shard needs -o: a shard's draws are kept only in its files")
		}
		if err := f.sh.Check(f.chains, "chains"); err != nil {
			return nil, err
		}
	}
	return &f, nil
}

func runSample(ctx context.Context, args []string, stdout, stderr io.Writer, b backend) int {
	f, err := parseSampleFlags(args, stderr)
	if code, stop := flagsExit(stderr, "sample", err); stop {
		return code
	}
	if err := sample(ctx, f, stdout, stderr, b); err != nil {
		fmt.Fprintf(stderr, "trj sample: %v\n", err)
		if errors.Is(err, errInterrupted) {
			return exitInterrupted
		}
		return exitFail
	}
	return exitOK
}

// errInterrupted reports a run stopped by a signal after it kept (and
// wrote) what it had.
var errInterrupted = errors.New("interrupted")

// sample runs the command described by f.
func sample(ctx context.Context, f *sampleFlags, stdout, stderr io.Writer, b backend) error {
	if oneChain(f.sampler) {
		f.chains, f.warmup = 1, 0
	}
	files := outputFiles(f)
	// Refuse an output that cannot be written before any work.
	for _, name := range files {
		if err := checkWritable(name); err != nil {
			return fmt.Errorf("-o: %w", err)
		}
	}
	m, err := b.models.Model(f.model, f.data)
	if err != nil {
		if names := b.models.Names(); len(names) > 0 && !slices.Contains(names, f.model) {
			return fmt.Errorf("%w (models: %s)", err, strings.Join(names, ", "))
		}
		return err
	}
	dataUsed := f.data
	if d, ok := b.models.(describer); ok {
		dataUsed = d.DataName(f.model, f.data)
	}
	sampler, ok := b.samplers[f.sampler]
	if !ok {
		return fmt.Errorf("sampler %q is not available in this build", f.sampler)
	}
	lo, hi := f.sh.Block(f.chains)
	cfg := SampleConfig{Chains: hi - lo, FirstChain: lo, Warmup: f.warmup, Draws: f.draws, Seed: f.seed, Metric: f.metric, AdaptDelta: f.adaptDelta, SMCMove: f.smcMove}
	// Refuse a run whose draws cannot fit in memory before allocating
	// anything per chain.
	size := kernels.SampleSettings{Chains: cfg.Chains, Warmup: -1, Draws: cfg.Draws}
	if err := size.CheckMemory(len(m.ParamNames())); err != nil {
		return err
	}
	if !f.quiet {
		cfg.Progress = newProgress(stderr, f.chains, cfg.Warmup, f.draws).report
		cfg.Tempering = temperingProgress(stderr)
	}
	out := &chainFiles{names: files, config: csvConfig(f, dataUsed), sh: f.sh, first: lo, streams: make([]*draws.Stream, cfg.Chains)}
	if files != nil {
		cfg.Stream = out.create
	}
	start := time.Now()
	d, adapted, err := sampler(ctx, m, cfg)
	elapsed := time.Since(start)
	interrupted := err != nil && ctx.Err() != nil
	if err != nil && !interrupted {
		out.abandon(err)
		return fmt.Errorf("%s on %s: %w", f.sampler, f.model, err)
	}
	if d != nil && d.Chains() != cfg.Chains {
		out.abandon(errors.New("wrong number of chains"))
		return fmt.Errorf("%s returned %d chains, want %d", f.sampler, d.Chains(), cfg.Chains)
	}
	var stopped error
	if interrupted {
		stopped = errInterrupted
	}
	if files != nil {
		names, werr := out.finish(d, adapted, stopped, cfg.Draws)
		if werr != nil {
			return werr
		}
		if !f.quiet && len(names) > 0 {
			fmt.Fprintf(stderr, "wrote %s\n", strings.Join(names, ", "))
		}
	}
	if interrupted {
		if d, err = keptSoFar(d, lo, stderr); err != nil {
			return err
		}
	}
	s, err := draws.Summarize(d)
	if err != nil {
		return err
	}
	if dataUsed != "" {
		if _, err := fmt.Fprintf(stdout, "model %s, data %s\n", f.model, dataUsed); err != nil {
			return err
		}
	}
	if err := s.WriteTable(stdout); err != nil {
		return err
	}
	if err := writeRunFacts(stdout, d, s, adapted); err != nil {
		return err
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "wall time: %.2f s\n", elapsed.Seconds())
	}
	if interrupted {
		return errInterrupted
	}
	return nil
}

// keptSoFar returns what an interrupted run can summarize: the first n
// draws of every chain that kept any, n the length of the shortest; it
// says on w what it leaves out. first is the run's number of chain 0.
func keptSoFar(d *draws.Draws, first int, w io.Writer) (*draws.Draws, error) {
	if d == nil {
		fmt.Fprintln(w, "no draw was kept before the interruption")
		return nil, errInterrupted
	}
	var some []int
	var none []string
	for c := range d.Chains() {
		if d.Len(c) > 0 {
			some = append(some, c)
		} else {
			none = append(none, strconv.Itoa(first+c+1))
		}
	}
	if len(some) == 0 {
		fmt.Fprintln(w, "no draw was kept before the interruption")
		return nil, errInterrupted
	}
	if len(none) > 0 {
		fmt.Fprintf(w, "chains %s kept no draw before the interruption\n", strings.Join(none, ", "))
	}
	sub, err := d.Subset(some...)
	if err != nil {
		return nil, err
	}
	n := sub.MinLen()
	fmt.Fprintf(w, "summary of the first %d kept draws of chains with draws:\n", n)
	return sub.Head(n)
}

// writeRunFacts prints, after the table, what a reader checks first: the
// worst R̂ and bulk ESS, the divergences and the log evidence of a
// tempering sampler (from the settings).
func writeRunFacts(w io.Writer, d *draws.Draws, s *draws.Summary, settings []draws.Setting) error {
	var b strings.Builder
	b.WriteByte('\n')
	worstR, minESS := -1, -1
	for i, st := range s.Stats {
		if st.Name == draws.LP {
			continue
		}
		if !math.IsNaN(st.Rhat) && (worstR < 0 || st.Rhat > s.Stats[worstR].Rhat) {
			worstR = i
		}
		if !math.IsNaN(st.ESSBulk) && (minESS < 0 || st.ESSBulk < s.Stats[minESS].ESSBulk) {
			minESS = i
		}
	}
	if worstR >= 0 {
		fmt.Fprintf(&b, "max R_hat %.3f (%s); ", s.Stats[worstR].Rhat, s.Stats[worstR].Name)
	}
	if minESS >= 0 {
		fmt.Fprintf(&b, "min ESS_bulk %.0f (%s)\n", s.Stats[minESS].ESSBulk, s.Stats[minESS].Name)
	} else if worstR >= 0 {
		b.WriteByte('\n')
	}
	if div, err := d.Column(draws.Divergent); err == nil {
		total, n := 0, 0
		per := make([]string, len(div))
		for c, col := range div {
			k := 0
			for _, v := range col {
				if v != 0 {
					k++
				}
			}
			per[c] = strconv.Itoa(k)
			total += k
			n += len(col)
		}
		fmt.Fprintf(&b, "divergences: %d of %d draws (per chain: %s)", total, n, strings.Join(per, ", "))
		if total > 0 {
			b.WriteString("; the posterior may be biased: reparameterize the model (e.g. non-centred)")
		}
		b.WriteByte('\n')
	}
	for _, a := range settings {
		if a.Key == "log_evidence" {
			fmt.Fprintf(&b, "log evidence: %s\n", a.Value)
			b.WriteString("(the draws are SMC's final particles, one resampled population rather than a chain:\n" +
				"R_hat and ESS describe duplicates, not mixing)\n")
			break
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// temperingProgress prints a tempering sampler's progress each time the
// inverse temperature passes a further tenth.
func temperingProgress(w io.Writer) func(kernels.Progress) {
	var mu sync.Mutex
	reported := -1
	return func(p kernels.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if tenth := int(math.Floor(10 * p.Beta)); tenth > reported {
			reported = tenth
			fmt.Fprintf(w, "temperature step %d: beta %.3f\n", p.Done, p.Beta)
		}
	}
}

// progress reports each chain's progress on stderr at every tenth of its
// iterations, so a run prints about ten lines per chain whatever its length.
type progress struct {
	mu             sync.Mutex
	w              io.Writer
	warmup, total  int
	step           int
	reported, done []int // per chain: iterations reported / completed
}

func newProgress(w io.Writer, chains, warmup, draws int) *progress {
	total := warmup + draws
	return &progress{
		w: w, warmup: warmup, total: total,
		step:     max(total/10, 1),
		reported: make([]int, chains),
		done:     make([]int, chains),
	}
}

// report records that a chain finished an iteration; chains call it
// concurrently.
func (p *progress) report(r kernels.Progress) {
	chain, it := r.Chain, r.Done
	if chain < 0 || chain >= len(p.done) {
		return
	}
	if it%p.step != 0 && it != p.total {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if it <= p.reported[chain] {
		return
	}
	p.reported[chain] = it
	phase := "sampling"
	if it <= p.warmup {
		phase = "warmup"
	}
	fmt.Fprintf(p.w, "chain %d: iteration %*d / %d (%d%%) [%s]\n", chain+1, len(strconv.Itoa(p.total)), it, p.total, 100*it/p.total, phase)
}

// runSummary prints the summary table of CSV files, one chain per file.
func runSummary(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("trj summary", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: trj summary FILE...\n\nPrints R̂, ESS and quantiles of CmdStan-style CSV files, one chain per file.")
	}
	if code, stop := parseFileArgs(fs, args, stderr, "summary", "CSV files"); stop {
		return code
	}
	note, err := checkShardFiles(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "trj summary: %v\n", err)
		return exitFail
	}
	if note != "" {
		fmt.Fprintln(stderr, note)
	}
	d, settings, err := readChainFiles(fs.Args(), stderr)
	if err == nil {
		var s *draws.Summary
		if s, err = draws.Summarize(d); err == nil {
			if err = s.WriteTable(stdout); err == nil {
				err = writeRunFacts(stdout, d, s, settings)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "trj summary: %v\n", err)
		return exitFail
	}
	return exitOK
}

// readChainFiles reads one chain per file, as draws.ReadFiles, and says on
// w which files are marked interrupted; chains of unequal length (an
// interrupted run) are cut to the shortest, which w is told too.
func readChainFiles(paths []string, w io.Writer) (*draws.Draws, []draws.Setting, error) {
	sets := make([]*draws.Draws, len(paths))
	var first []draws.Setting
	var cut []string
	for i, p := range paths {
		d, cfg, err := draws.ReadFiles(p)
		if err != nil {
			return nil, nil, err
		}
		if i == 0 {
			first = cfg
		}
		for _, s := range cfg {
			if s.Key == draws.Interrupted {
				cut = append(cut, p)
				break
			}
		}
		sets[i] = d
	}
	if len(cut) > 0 {
		fmt.Fprintf(w, "interrupted before the end: %s\n", strings.Join(cut, ", "))
	}
	var kept []*draws.Draws
	var empty []string
	for i, s := range sets {
		if s.Len(0) > 0 {
			kept = append(kept, s)
		} else {
			empty = append(empty, paths[i])
		}
	}
	if len(kept) > 0 && len(empty) > 0 {
		fmt.Fprintf(w, "left out, without draws: %s\n", strings.Join(empty, ", "))
		sets = kept
	}
	d, err := draws.Combine(sets...)
	if err != nil {
		return nil, nil, err
	}
	if n := d.MinLen(); n > 0 && slices.ContainsFunc(sets, func(s *draws.Draws) bool { return s.Len(0) != n }) {
		fmt.Fprintf(w, "chains of unequal length: the summary is of the first %d draws of each\n", n)
		if d, err = d.Head(n); err != nil {
			return nil, nil, err
		}
	}
	return d, first, nil
}

// runModels lists the gallery.
func runModels(args []string, stdout, stderr io.Writer, b backend) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "trj models: unexpected argument %q\n", args[0])
		return exitUsage
	}
	names := b.models.Names()
	if len(names) == 0 {
		fmt.Fprintln(stderr, "trj models: no models registered in this build")
		return exitFail
	}
	d, ok := b.models.(describer)
	if !ok {
		for _, n := range names {
			fmt.Fprintln(stdout, n)
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tdim\tdata\tdescription")
	for _, n := range names {
		info, err := d.Describe(n)
		if err != nil {
			fmt.Fprintf(stderr, "trj models: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", n, info.Dim, formatBytes(info.DataBytes), info.Description)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "trj models: %v\n", err)
		return exitFail
	}
	return exitOK
}

// formatBytes writes a size in B, kB or MB (powers of 1000).
func formatBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
