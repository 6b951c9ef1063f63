package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/trjgo/trj"
	"github.com/trjgo/trj/flows"
	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/models/factor"
	"github.com/trjgo/trj/models/sas"

	"github.com/trjgo/trj/shard"
)

// runOptions are the flags of "trj run" that every experiment receives.
type runOptions struct {
	paper          bool
	seed           uint64
	chains, steps  int // 0: the experiment's default
	out, jsonPath  string
	data           string // data file of experiments that need one; "" means the experiment's default
	quiet          bool
	progress       *experiment.Progress
	stderr         io.Writer
	trainDraws     int // hidden test flags, 0: default
	evalDraws      int
	bridgeReps     int
	trainIters     int
	scatterSources int
	sh             shard.Shard // the part of a split run to compute
	sharded        bool        // -shard given (1/1 too): write a partial file
	partial        string      // the shard's partial result file
	stage          trj.Stage   // the stage of a staged run (0: the whole run)
	stageDir       string      // the folder of a staged run's files
}

// experimentFunc runs one experiment: it returns the Result and the files
// (figures) it wrote into o.out.
type experimentFunc func(ctx context.Context, o runOptions) (*experiment.Result, []string, error)

// experiments is what "trj run NAME" can run; each experiment is one line.
var experiments = map[string]experimentFunc{
	"sas":      runSAS,
	"factor":   runFactor,
	"robustvs": runRobustVS,
}

func experimentNames() []string {
	var names []string
	for n := range experiments {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// minSteps is the fewest steps per chain each experiment with chains runs.
var minSteps = map[string]int{"sas": sas.MinSteps, "factor": factor.MinSteps}

// hiddenRunFlags shrink experiments for tests; "trj run -h" does not list
// them.
var hiddenRunFlags = []string{"train-draws", "eval-draws", "bridge-reps", "train-iters", "scatter-sources"}

// parseRunFlags parses "trj run NAME [flags]"; errors are usage errors.
func parseRunFlags(args []string, stderr io.Writer) (string, *runOptions, error) {
	o := &runOptions{stderr: stderr}
	fs := flag.NewFlagSet("trj run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.paper, "paper", false, "use the paper's sizes (slower)")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed; every stream of the run derives from it")
	fs.IntVar(&o.chains, "chains", 0, "replicate chains per proposal type, sas and factor (default: the experiment's)")
	fs.IntVar(&o.steps, "steps", 0, "steps per chain, sas and factor (default: the experiment's)")
	fs.StringVar(&o.out, "out", "", "directory for the figures (default trj-out/NAME)")
	fs.StringVar(&o.data, "data", "", "data `file` for factor and robustvs (default: the paper's data set, from the folder $"+dataDirEnv+" when set, else the copy built into trj)")
	fs.StringVar(&o.jsonPath, "json", "", "write the result as JSON to `file`")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress bars on stderr")
	var shardArg string
	fs.StringVar(&shardArg, "shard", "", shardFlagHelp+"; sas only: a shard runs its block of the chains and writes a partial result (-o) for trj merge")
	stageArg := addStageFlags(fs, o)
	fs.StringVar(&o.partial, "o", "", "partial result `file` of a shard (default trj-out/NAME/shard_I_of_N.json)")
	fs.IntVar(&o.trainDraws, "train-draws", 0, "")
	fs.IntVar(&o.evalDraws, "eval-draws", 0, "")
	fs.IntVar(&o.bridgeReps, "bridge-reps", 0, "")
	fs.IntVar(&o.trainIters, "train-iters", 0, "")
	fs.IntVar(&o.scatterSources, "scatter-sources", 0, "")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: trj run EXPERIMENT [flags]\n\nexperiments: %s\n\nflags:\n", strings.Join(experimentNames(), ", "))
		fs.VisitAll(func(f *flag.Flag) {
			if slices.Contains(hiddenRunFlags, f.Name) {
				return
			}
			name, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(stderr, "  -%s %s\n    \t%s\n", f.Name, name, usage)
		})
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		// Let -h print the usage; anything else lacks the experiment.
		if err := fs.Parse(args); err != nil {
			return "", nil, err
		}
		return "", nil, fmt.Errorf("no experiment given (experiments: %s)", strings.Join(experimentNames(), ", "))
	}
	name := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return "", nil, err
	}
	switch {
	case fs.NArg() > 0:
		return "", nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case experiments[name] == nil:
		return "", nil, fmt.Errorf("unknown experiment %q (experiments: %s)", name, strings.Join(experimentNames(), ", "))
	case o.chains < 0:
		return "", nil, fmt.Errorf("-chains %d: need at least 1", o.chains)
	case o.steps < 0:
		return "", nil, fmt.Errorf("-steps %d: need at least 1", o.steps)
	case o.trainDraws < 0 || o.evalDraws < 0 || o.bridgeReps < 0 || o.trainIters < 0 || o.scatterSources < 0:
		return "", nil, errors.New("sizes must not be negative")
	}
	var err error
	if o.sh, err = shard.Parse(shardArg); err != nil {
		return "", nil, err
	}
	// A shard is what -shard asks for, 1/1 included (a batch array of one
	// task): it writes a partial file for trj merge.
	o.sharded = shardArg != ""
	if o.sharded {
		switch {
		case !slices.Contains(shardableRuns, name):
			return "", nil, fmt.Errorf("-shard applies to %s (for the factor study: trj study factor -shard)", strings.Join(shardableRuns, ", "))
		case o.jsonPath != "":
			return "", nil, errors.New("-json applies to a whole run; a shard writes its partial file (-o), and trj merge -json the result")
		}
		if o.partial == "" {
			o.partial = defaultPartial(name, o)
		}
	} else if o.partial != "" {
		return "", nil, errors.New("-o is the partial result file of a shard and needs -shard i/n; for a whole run give -json")
	}
	if err := o.checkStage(name, *stageArg); err != nil {
		return "", nil, err
	}
	setChains, setSteps, setData := false, false, false
	fs.Visit(func(f *flag.Flag) {
		setChains = setChains || f.Name == "chains"
		setSteps = setSteps || f.Name == "steps"
		setData = setData || f.Name == "data"
	})
	// One replicate chain has no standard error across chains and a chain
	// of one step makes no move: both would print NaN.
	switch {
	case setChains && o.chains < 2:
		return "", nil, fmt.Errorf("-chains %d: need at least 2 replicate chains for a standard error", o.chains)
	case setSteps && o.steps < minSteps[name]:
		return "", nil, fmt.Errorf("-steps %d: %s runs chains of at least %d steps", o.steps, name, minSteps[name])
	case o.bridgeReps == 1:
		return "", nil, errors.New("-bridge-reps 1: need at least 2 replicates for a standard deviation")
	}
	// Flags an experiment would silently ignore are usage errors.
	switch {
	case name == "robustvs" && (setChains || setSteps):
		return "", nil, errors.New("-chains and -steps do not apply to robustvs, which estimates by bridge replicates only")
	case name == "sas" && setData:
		return "", nil, errors.New("-data does not apply to sas, whose target is exact")
	}
	if o.out == "" {
		o.out = filepath.Join("trj-out", name)
	}
	if !o.quiet {
		o.progress = experiment.NewProgress(stderr)
	}
	return name, o, nil
}

// runRun is "trj run": it runs an experiment, prints its table on stdout,
// writes its figures into -out and its Result to -json.
func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runExperiment(ctx, args, stdout, stderr, experiments)
}

// runExperiment is runRun with the experiments to choose from. The outputs
// are checked writable first. When ctx is cancelled (SIGINT, SIGTERM), it
// writes the table and JSON of what the experiment returned as finished,
// the JSON marked "incomplete", says "interrupted" and returns
// exitInterrupted.
func runExperiment(ctx context.Context, args []string, stdout, stderr io.Writer, exps map[string]experimentFunc) int {
	name, o, err := parseRunFlags(args, stderr)
	if code, stop := flagsExit(stderr, "run", err); stop {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "trj run %s: %v\n", name, err)
		return exitFail
	}
	for _, p := range []struct{ flag, path string }{{"-json", o.jsonPath}, {"-o", o.partial}} {
		if p.path != "" {
			if err := checkWritable(p.path); err != nil {
				return fail(fmt.Errorf("%s: %w", p.flag, err))
			}
		}
	}
	if o.sharded || o.stage == trj.StagePilots || o.stage == trj.StageFit {
		if err := runSASShard(ctx, *o, stderr); errors.Is(err, errInterrupted) {
			fmt.Fprintf(stderr, "trj run %s: interrupted\n", name)
			return exitInterrupted
		} else if err != nil {
			return fail(err)
		}
		return exitOK
	}
	if err := checkWritableDir(o.out); err != nil {
		return fail(fmt.Errorf("-out: %w", err))
	}
	exp := exps[name]
	if exp == nil {
		return fail(errors.New("not available in this build"))
	}
	res, files, err := exp(ctx, *o)
	interrupted := err != nil && ctx.Err() != nil
	if err != nil && !interrupted {
		return fail(err)
	}
	if interrupted {
		if res == nil {
			res = experiment.NewResult(name, o.seed, nil)
		}
		fmt.Fprintln(stderr, "interrupted: the results below are of the stages that finished")
	}
	if d, ok := res.Settings["data"]; ok {
		fmt.Fprintf(stdout, "data: %v\n", d)
	}
	if len(res.Proposals) > 0 {
		if err := res.WriteTable(stdout); err != nil {
			return fail(err)
		}
	}
	if o.jsonPath != "" {
		if interrupted {
			err = writeIncompleteJSON(o.jsonPath, res, "interrupted")
		} else {
			err = res.WriteJSONFile(o.jsonPath)
		}
		if err != nil {
			return fail(err)
		}
		files = append(files, o.jsonPath)
	}
	if !o.quiet && len(files) > 0 {
		fmt.Fprintf(stderr, "wrote %s\n", strings.Join(files, ", "))
	}
	if interrupted {
		fmt.Fprintf(stderr, "trj run %s: interrupted\n", name)
		return exitInterrupted
	}
	return exitOK
}

// incompleteResult is the JSON of an experiment stopped before its end:
// the Result of the stages that finished, with "incomplete": true and why
// it stopped.
type incompleteResult struct {
	*experiment.Result
	Incomplete bool   `json:"incomplete"`
	Stopped    string `json:"stopped"`
}

// writeIncompleteJSON writes res to path marked incomplete.
func writeIncompleteJSON(path string, res *experiment.Result, why string) error {
	b, err := json.MarshalIndent(incompleteResult{Result: res, Incomplete: true, Stopped: why}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding result: %w", err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// finishedPart returns what an experiment that failed or was interrupted
// finished: its Result when it returned one (r, nil or not), without
// figures.
func finishedPart(r *experiment.Result, err error) (*experiment.Result, []string, error) {
	return r, nil, err
}

// withFigures ends an experiment's run: when it failed or was interrupted,
// the part it finished (r, nil or not) and err; else its result r and the
// figures write puts into dir.
func withFigures(r *experiment.Result, write func(dir string) ([]string, error), dir string, err error) (*experiment.Result, []string, error) {
	if err != nil {
		return finishedPart(r, err)
	}
	files, err := write(dir)
	return r, files, err
}

// runSAS is the sinh-arcsinh experiment of the paper's §4.2.
func runSAS(ctx context.Context, o runOptions) (*experiment.Result, []string, error) {
	res, err := sas.Paper().Run(ctx, sasConfig(o))
	if res == nil {
		return nil, nil, err
	}
	return withFigures(res.Result, res.WriteFigures, o.out, err)
}

// sasConfig is the SAS experiment's configuration for the flags o.
func sasConfig(o runOptions) sas.Config {
	cfg := sas.DefaultConfig()
	if o.paper {
		cfg = sas.PaperConfig()
	}
	o.override(configFields{
		seed: &cfg.Seed, progress: &cfg.Progress,
		chains: &cfg.Chains, steps: &cfg.Steps, trainDraws: &cfg.TrainDraws, evalDraws: &cfg.EvalDraws,
		bridgeReps: &cfg.BridgeReplicates, scatterSources: &cfg.ScatterSources,
		train: []*flows.TrainOptions{&cfg.Train},
	})
	cfg.Stage, cfg.StageDir = o.stage, o.stageDir
	return cfg
}

// configFields points at the fields of an experiment's configuration that
// the flags every experiment shares set; nil where it has no such field.
type configFields struct {
	seed                                                             *uint64
	progress                                                         **experiment.Progress
	chains, steps, trainDraws, evalDraws, bridgeReps, scatterSources *int
	train                                                            []*flows.TrainOptions
}

// override sets the fields f from the flags o: the seed and progress bars
// always, the sizes where a flag is given.
func (o runOptions) override(f configFields) {
	*f.seed = o.seed
	*f.progress = o.progress
	for _, s := range []struct {
		dst *int
		v   int
	}{
		{f.chains, o.chains}, {f.steps, o.steps}, {f.trainDraws, o.trainDraws}, {f.evalDraws, o.evalDraws},
		{f.bridgeReps, o.bridgeReps}, {f.scatterSources, o.scatterSources},
	} {
		if s.dst != nil {
			setPositive(s.dst, s.v)
		}
	}
	if o.trainIters > 0 {
		for _, t := range f.train {
			// Keep the batch doublings inside the shortened run.
			t.Iterations = o.trainIters
			t.DoubleAt = nil
		}
	}
}

// setPositive overrides *dst with v when v > 0.
func setPositive(dst *int, v int) {
	if v > 0 {
		*dst = v
	}
}
