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
	"strings"
	"time"

	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/experiment"
	"github.com/trjgo/trj/models/factor"

	"github.com/trjgo/trj/shard"
)

// studyKindFactor is the partial-file kind of "trj study factor".
const studyKindFactor = "study factor"

// studyFlags are the parsed flags of "trj study factor".
type studyFlags struct {
	n, pairs, reps int
	seed           uint64
	data           string
	sh             shard.Shard
	out, partial   string
	jsonPath       string
	paper, quiet   bool
	trainIters     int // hidden, for tests
	rejuvenate     int // hidden, for tests; -1: the default
}

// parseStudyFlags parses "trj study factor [flags]"; errors are usage
// errors.
func parseStudyFlags(args []string, stderr io.Writer) (*studyFlags, error) {
	f := &studyFlags{}
	fs := flag.NewFlagSet("trj study", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var shardArg string
	fs.IntVar(&f.n, "n", 2000, "pilot draws N per model, in the training and in the evaluation set (the paper: 2000 and 16000)")
	fs.IntVar(&f.pairs, "pairs", 10, "independent training/evaluation pilot pairs")
	fs.IntVar(&f.reps, "reps", 100, "bridge estimates per pair and proposal type")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed; pair p derives every stream from it and p")
	fs.StringVar(&f.data, "data", "", "exchange-rate data `file` (default: the paper's data set, from the folder $"+dataDirEnv+" when set, else the copy built into trj)")
	fs.StringVar(&shardArg, "shard", "", shardFlagHelp+"; a shard runs its block of the pairs")
	fs.StringVar(&f.partial, "o", "", "partial result `file` of the shard (default trj-out/factor-study/shard_I_of_N.json)")
	fs.StringVar(&f.out, "out", "", "directory for the figures when the run is not split (default trj-out/factor-study)")
	fs.StringVar(&f.jsonPath, "json", "", "when the run is not split, also write the merged result as JSON to `file`")
	fs.BoolVar(&f.paper, "paper", false, "the paper's flow settings (MADE width 32·d, its learning-rate decay) instead of trj's defaults")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bars on stderr")
	fs.IntVar(&f.trainIters, "train-iters", 0, "")
	fs.IntVar(&f.rejuvenate, "rejuvenate", -1, "")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: trj study factor [flags]\n\n"+
			"Runs the paper's factor-analysis study: independent training/evaluation pilot pairs, each with\n"+
			"bridge estimates of π(2 factors) per proposal type. With -shard, runs some of the pairs and\n"+
			"writes a partial result for \"trj merge\".\n\nflags:\n")
		fs.VisitAll(func(fl *flag.Flag) {
			if fl.Name == "train-iters" || fl.Name == "rejuvenate" {
				return
			}
			name, usage := flag.UnquoteUsage(fl)
			if fl.DefValue != "" && fl.DefValue != "0" && fl.DefValue != "false" {
				usage += fmt.Sprintf(" (default %s)", fl.DefValue)
			}
			fmt.Fprintf(stderr, "  -%s %s\n    \t%s\n", fl.Name, name, usage)
		})
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		return nil, errors.New("no study given (studies: factor)")
	}
	if args[0] != "factor" {
		return nil, fmt.Errorf("unknown study %q (studies: factor)", args[0])
	}
	if err := fs.Parse(args[1:]); err != nil {
		return nil, err
	}
	var err error
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case f.n < 50:
		return nil, fmt.Errorf("-n %d: need at least 50 pilot draws", f.n)
	case f.pairs < 1:
		return nil, fmt.Errorf("-pairs %d: need at least 1", f.pairs)
	case f.reps < 1:
		return nil, fmt.Errorf("-reps %d: need at least 1", f.reps)
	case f.trainIters < 0:
		return nil, errors.New("-train-iters must not be negative")
	}
	if f.sh, err = shard.Parse(shardArg); err != nil {
		return nil, err
	}
	if err := f.sh.Check(f.pairs, "pairs"); err != nil {
		return nil, err
	}
	if f.sh.Split() && (f.out != "" || f.jsonPath != "") {
		return nil, errors.New("-out and -json apply to a whole run; a shard writes only its partial file (-o), for trj merge")
	}
	if f.partial == "" {
		f.partial = filepath.Join("trj-out", "factor-study", fmt.Sprintf("shard_%d_of_%d.json", f.sh.Index, f.sh.Count))
	}
	if f.out == "" {
		f.out = filepath.Join("trj-out", "factor-study")
	}
	return f, nil
}

// config returns the study's configuration.
func (f *studyFlags) config() (factor.StudyConfig, error) {
	cfg := factor.DefaultStudyConfig(f.n)
	if f.paper {
		p := factor.PaperConfig()
		cfg.RQMA, cfg.Train = p.RQMA, p.Train
	}
	cfg.Pairs, cfg.BridgeReplicates, cfg.Seed = f.pairs, f.reps, f.seed
	p, err := resolveDataPath(f.data, datasets.ExchangeRates)
	if err != nil {
		return cfg, err
	}
	cfg.DataPath = p
	if f.trainIters > 0 {
		cfg.Train.Iterations = f.trainIters
		cfg.Train.DoubleAt = nil
	}
	if f.rejuvenate >= 0 {
		cfg.RejuvenateSteps = f.rejuvenate
	}
	return cfg, nil
}

// runStudy is "trj study": it runs the pairs of its shard and writes them
// as a partial result; an unsplit run also merges them at once, printing
// the table and writing the figures.
func runStudy(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, err := parseStudyFlags(args, stderr)
	if code, stop := flagsExit(stderr, "study", err); stop {
		return code
	}
	if err := study(ctx, f, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "trj study factor: %v\n", err)
		return exitFail
	}
	return exitOK
}

func study(ctx context.Context, f *studyFlags, stdout, stderr io.Writer) error {
	cfg, err := f.config()
	if err != nil {
		return err
	}
	if !f.quiet {
		cfg.Progress = experiment.NewProgress(stderr)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	settings, err := cfg.Settings()
	if err != nil {
		return err
	}
	y, err := factor.LoadData(cfg.DataPath)
	if err != nil {
		return err
	}
	start := time.Now()
	lo, hi := f.sh.Block(cfg.Pairs)
	var pairs []*factor.PairResult
	var items []int
	for p := lo + 1; p <= hi; p++ {
		r, err := factor.RunPair(ctx, cfg, y, p)
		if err != nil {
			return err
		}
		pairs = append(pairs, r)
		items = append(items, p)
		if !f.quiet {
			fmt.Fprintf(stderr, "pair %d done in %.1f s\n", p, float64(r.Seconds["total"]))
		}
	}
	part, err := writePartial(f.partial, studyKindFactor, settings, f.sh, items, cfg.Pairs, time.Since(start).Seconds(), pairs)
	if err != nil {
		return err
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "shard %s: pairs %d-%d of %d in %.1f s; wrote %s\n", f.sh, lo+1, hi, cfg.Pairs, part.Seconds, f.partial)
	}
	if f.sh.Split() {
		return nil
	}
	return mergeParts([]string{f.partial}, []*partialFile{part}, f.out, f.jsonPath, stdout, stderr, f.quiet)
}

// merger combines the payloads of a run's checked partial files, prints
// the result's table on stdout, writes its figures into dir and, when
// jsonPath is not "", the merged result as JSON; it returns the files
// written. dir is the default figure directory.
type merger struct {
	merge func(parts []*partialFile, dir, jsonPath string, stdout io.Writer) ([]string, error)
	dir   string
}

// mergers are the mergers by partial-file kind.
var mergers = map[string]merger{
	studyKindFactor: {mergeFactorStudy, filepath.Join("trj-out", "factor-study")},
	runKindSAS:      {mergeSAS, filepath.Join("trj-out", "sas")},
}

// mergeFactorStudy merges the pairs of a factor study.
func mergeFactorStudy(parts []*partialFile, dir, jsonPath string, stdout io.Writer) ([]string, error) {
	var pairs []*factor.PairResult
	for _, p := range parts {
		var ps []*factor.PairResult
		if err := json.Unmarshal(p.Payload, &ps); err != nil {
			return nil, fmt.Errorf("shard %s: %w", p.Shard, err)
		}
		pairs = append(pairs, ps...)
	}
	res, err := factor.MergeStudy(pairs, parts[0].Total)
	if err != nil {
		return nil, err
	}
	return writeMerged(res, dir, jsonPath, stdout, func(path string) error {
		b, err := json.MarshalIndent(struct {
			Settings map[string]any `json:"settings"`
			*factor.StudyResult
		}{parts[0].Settings, res}, "", " ")
		if err != nil {
			return err
		}
		return os.WriteFile(path, append(b, '\n'), 0o644)
	})
}

// mergedResult is a merged run's result as a merger writes it.
type mergedResult interface {
	WriteTable(w io.Writer) error
	WriteFigures(dir string) ([]string, error)
}

// writeMerged prints res's table on stdout, writes its figures into dir
// and, when jsonPath is not "", the JSON file writeJSON writes there; it
// returns the files written.
func writeMerged(res mergedResult, dir, jsonPath string, stdout io.Writer, writeJSON func(path string) error) ([]string, error) {
	if err := res.WriteTable(stdout); err != nil {
		return nil, err
	}
	files, err := res.WriteFigures(dir)
	if err != nil {
		return files, err
	}
	if jsonPath != "" {
		if err := writeJSON(jsonPath); err != nil {
			return files, err
		}
		files = append(files, jsonPath)
	}
	return files, nil
}

// mergeParts checks that the partial files are the shards of one run and
// merges them.
func mergeParts(paths []string, parts []*partialFile, dir, jsonPath string, stdout, stderr io.Writer, quiet bool) error {
	warnings, err := checkShards(paths, parts)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	m, ok := mergers[parts[0].Kind]
	if !ok {
		return fmt.Errorf("%s: no merger for results of kind %q in this build", paths[0], parts[0].Kind)
	}
	if dir == "" {
		dir = m.dir
	}
	files, err := m.merge(parts, dir, jsonPath, stdout)
	if err != nil {
		return err
	}
	if !quiet && len(files) > 0 {
		fmt.Fprintf(stderr, "wrote %s\n", strings.Join(files, ", "))
	}
	return nil
}

// runMerge is "trj merge": it combines the partial result files of the
// shards of one run into the result an unsplit run gives.
func runMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("trj merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "directory for the figures (default trj-out/factor-study for the factor study)")
	jsonPath := fs.String("json", "", "write the merged result as JSON to `file`")
	quiet := fs.Bool("quiet", false, "no messages on stderr")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: trj merge [-out DIR] [-json FILE] PARTIAL.json...\n\n"+
			"Merges the partial result files written by the shards of one run (trj study factor -shard i/n,\n"+
			"trj run sas -shard i/n, or trj.Run results of Settings.Chains.Shard written by Result.WriteJSON),\n"+
			"refusing files of different runs (seed, settings, model or data) and missing or repeated shards.\n\nflags:")
		fs.PrintDefaults()
	}
	if code, stop := parseFileArgs(fs, args, stderr, "merge", "partial result files"); stop {
		return code
	}
	paths := fs.Args()
	docs := make([][]byte, len(paths))
	results := 0
	for i, p := range paths {
		var err error
		if docs[i], err = os.ReadFile(p); err != nil {
			fmt.Fprintf(stderr, "trj merge: %v\n", err)
			return exitFail
		}
		if isTRJResult(docs[i]) {
			results++
		}
	}
	switch results {
	case len(paths):
		if err := mergeTRJResults(paths, docs, *out, *jsonPath, stdout, stderr, *quiet); err != nil {
			fmt.Fprintf(stderr, "trj merge: %v\n", err)
			return exitFail
		}
		return exitOK
	case 0:
	default:
		fmt.Fprintln(stderr, "trj merge: some files are trj.Run results and some partial files of trj commands; merge the shards of one run")
		return exitFail
	}
	parts := make([]*partialFile, len(paths))
	for i, p := range paths {
		var err error
		if parts[i], err = readPartial(p); err != nil {
			fmt.Fprintf(stderr, "trj merge: %v\n", err)
			return exitFail
		}
	}
	if err := mergeParts(paths, parts, *out, *jsonPath, stdout, stderr, *quiet); err != nil {
		fmt.Fprintf(stderr, "trj merge: %v\n", err)
		return exitFail
	}
	return exitOK
}
