package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/models/datasets"
	"github.com/trjgo/trj/models/glmselect"
	"github.com/trjgo/trj/pipeline"
	"github.com/trjgo/trj/ppl"
	"github.com/trjgo/trj/selection"
	"github.com/trjgo/trj/shard"
)

// selectFamilies are the -family values of "trj select".
func selectFamilies() []string { return []string{"gaussian", "logistic", "poisson"} }

// selectProposalNames lists the -proposal values of "trj select".
func selectProposalNames() string {
	var names []string
	for _, p := range selection.Proposals() {
		names = append(names, p.String())
	}
	return strings.Join(names, ", ")
}

// selectFlags are the parsed flags of "trj select".
type selectFlags struct {
	data, y, family, jsonPath, out string
	na, informed                   string
	proposal, prior, modelPrior    string
	g, a, b, priorSD, interceptSD  float64
	seed                           uint64
	chains, warmup, steps, top     int
	quiet                          bool
	shardArg                       string
	sh                             shard.Shard
	merge                          bool
	parts                          []string
	predict, predictions           string
	newRows                        *mat.Dense // -predict's rows, read before the run
}

// parseSelectFlags parses and validates the flags of "trj select"; errors
// are usage errors.
func parseSelectFlags(args []string, stderr io.Writer) (*selectFlags, error) {
	var f selectFlags
	fs := flag.NewFlagSet("trj select", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.data, "data", "", "CSV `file` with a header row: the response column and the candidate predictors (required; embedded:NAME reads a data set built into trj, e.g. embedded:select/linear_p20.csv)")
	fs.StringVar(&f.y, "y", "", "the response `column`; every other column is a candidate predictor (required)")
	fs.StringVar(&f.na, "na", "refuse", "rows with a missing value (NA, empty, NaN, nan or .): refuse (an error naming them) or drop")
	fs.StringVar(&f.family, "family", "gaussian", "the regression: "+strings.Join(selectFamilies(), ", "))
	fs.StringVar(&f.jsonPath, "json", "", "write the result as JSON to `file`")
	fs.StringVar(&f.out, "o", "", "`folder` for the kept steps as CmdStan CSV, one file per chain (select-<chain>.csv: lp__, accept_stat__, size__, chain_model__ numbering the chain's models, each defined by a '# model N: terms' line, the intercept and shared coordinates), and the figures pips.png (every PIP ± 2 MCSE), manhattan.png (every PIP by the term's position, the credible sets coloured) and running_pips.png (running PIPs of the least certain predictors)")
	fs.StringVar(&f.informed, "informed", "auto", "informed jumps: choose the term to add or drop by the neighbours' evidences (true, false, or auto: true for -family gaussian, whose evidences are closed forms, when there are at least n − 1 candidate terms, where they mix far better; false otherwise; the exact proposals' moves are always informed)")
	fs.StringVar(&f.proposal, "proposal", "", "the jumps' proposal family: "+selectProposalNames()+" (default: "+selection.Exact{}.String()+" for -family gaussian under a fixed-g prior, whose chains move on the models alone, their evidences and posteriors being closed forms; else "+selection.FullConditional{}.String()+"; see selection.Proposals)")
	fs.StringVar(&f.prior, "prior", "g", "gaussian: the coefficients' prior, "+strings.Join(selectPriors(), ", ")+" (g: Zellner's g-prior, g = -g or n; bric: g = max(n, p²); hyper-g and hyper-g/n: Liang et al.'s, parameter -a; zs: Zellner–Siow; nig: normal-inverse-gamma -g, -a, -b on the standardised predictors, which depends on y's units)")
	fs.Float64Var(&f.g, "g", 0, "gaussian -prior g: the fixed g (default n, unit information); -prior nig: every coefficient, intercept included, ~ N(0, σ² g) on the standardised predictors (default 1)")
	fs.Float64Var(&f.a, "a", 0, "gaussian -prior hyper-g, hyper-g/n: a, 2 < a ≤ 4 (default 3); -prior nig: σ² ~ InverseGamma(a, b), shape (default 0.01)")
	fs.Float64Var(&f.b, "b", 0, "gaussian -prior nig: σ² ~ InverseGamma(a, b), scale (default 0.01)")
	fs.StringVar(&f.modelPrior, "model-prior", "beta-binomial(1,1)", "the prior over models: beta-binomial(a,b) (model size beta-binomial; (1,1): every size equally likely), uniform (every model equally likely) or bernoulli(q) (each term in with probability q)")
	fs.Float64Var(&f.priorSD, "prior-sd", glmselect.DefaultPriorSD, "logistic, poisson: each coefficient ~ N(0, prior-sd²) on the standardised predictors")
	fs.Float64Var(&f.interceptSD, "intercept-sd", glmselect.DefaultInterceptSD, "logistic, poisson: the intercept ~ N(link(ȳ), intercept-sd²), centred at the data's mean on the link scale")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed; chains derive their streams from it")
	fs.IntVar(&f.chains, "chains", selection.DefaultChains, "number of chains")
	fs.IntVar(&f.warmup, "warmup", selection.DefaultWarmup, "warm-up steps per chain, not kept (0: none)")
	fs.IntVar(&f.steps, "steps", selection.DefaultSteps, "kept steps per chain")
	fs.IntVar(&f.top, "top", selection.DefaultTop, "number of most visited models reported")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress messages on stderr")
	fs.StringVar(&f.shardArg, "shard", "", shardFlagHelp+"; the shard runs its block of the chains, seeded as in the whole run, and writes its result (-json) and files (-o); \"trj select -merge -json all.json PART.json...\" combines the shards' results")
	fs.StringVar(&f.predict, "predict", "", "CSV `file` of new rows (a header naming the predictors; other columns, such as the response, are ignored) at which to predict the mean response, averaged over the models")
	fs.StringVar(&f.predictions, "predictions", "", "write the -predict rows' predictions to `file` (CSV: row, mean, lower, upper, mean_mcse; lower and upper bound the central 95% interval)")
	fs.BoolVar(&f.merge, "merge", false, "combine the -json results of the shards of one run, given as arguments, into one table and -json")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.merge {
		f.parts = fs.Args()
		if len(f.parts) == 0 {
			return nil, errors.New("-merge needs the shards' result files as arguments")
		}
		return &f, nil
	}
	if f.predictions != "" && f.predict == "" {
		return nil, errors.New("-predictions needs -predict: the new rows to predict at (with -merge, the parts' predictions are merged)")
	}
	var err error
	if f.sh, err = shardAndArgs(fs, f.shardArg); err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	positive := func(name string, v float64) error {
		if !(v > 0) || math.IsInf(v, 1) {
			return fmt.Errorf("-%s %v: want a positive finite number", name, v)
		}
		return nil
	}
	switch {
	case f.data == "":
		return nil, errors.New("-data is required: a CSV file with a header row")
	case f.y == "":
		return nil, errors.New("-y is required: the name of the response column")
	case !slices.Contains(naPolicies(), f.na):
		return nil, fmt.Errorf("-na %q: want one of %s", f.na, strings.Join(naPolicies(), ", "))
	case !slices.Contains(selectFamilies(), f.family):
		return nil, fmt.Errorf("-family %q: want one of %s", f.family, strings.Join(selectFamilies(), ", "))
	case f.chains == 0:
		// Zero is the library's default; a flag of 0 asks for none.
		return nil, errors.New("-chains 0: need at least 1 chain")
	case f.steps == 0:
		return nil, errors.New("-steps 0: need at least 1 kept step per chain")
	case f.top == 0:
		return nil, errors.New("-top 0: need at least 1 model")
	case f.warmup < 0:
		return nil, fmt.Errorf("-warmup %d: need 0 or more warm-up steps (0: none)", f.warmup)
	case f.family != "gaussian" && (set["prior"] || set["g"] || set["a"] || set["b"]):
		return nil, fmt.Errorf("-prior, -g, -a and -b are the gaussian family's prior; -family %s takes -prior-sd and -intercept-sd", f.family)
	case f.family == "gaussian" && (set["prior-sd"] || set["intercept-sd"]):
		return nil, errors.New("-prior-sd and -intercept-sd apply to -family logistic and poisson; the gaussian family's prior is -prior with -g, -a, -b")
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"g", f.g}, {"a", f.a}, {"b", f.b}, {"prior-sd", f.priorSD}, {"intercept-sd", f.interceptSD}} {
		if !set[p.name] {
			continue
		}
		if err := positive(p.name, p.v); err != nil {
			return nil, err
		}
	}
	if f.family == "gaussian" {
		if _, err := f.gaussianPrior(set); err != nil {
			return nil, err
		}
	}
	if _, err := parseModelPrior(f.modelPrior); err != nil {
		return nil, err
	}
	// The library's bounds (counts, shard, -top, memory), before the data
	// are read.
	if err := f.settings().Validate(); err != nil {
		return nil, flagError(err)
	}
	if f.informed != "auto" {
		if _, err := strconv.ParseBool(f.informed); err != nil {
			return nil, fmt.Errorf("-informed %q: want true, false or auto", f.informed)
		}
	}
	if f.proposal != "" {
		if _, err := selection.ParseProposal(f.proposal); err != nil {
			return nil, fmt.Errorf("-proposal: %w", err)
		}
	}
	if f.sh.Split() {
		if f.out == "" && f.jsonPath == "" {
			return nil, errors.New("-shard needs -json or -o: a shard's result is kept only in its files")
		}
		if err := f.sh.Check(f.chains, "chains"); err != nil {
			return nil, err
		}
	}
	return &f, nil
}

// selectFlagNames maps selection.Settings' fields to the flags that set
// them, for the library's errors.
var selectFlagNames = map[string]string{"Chains": "chains", "Warmup": "warmup", "Steps": "steps", "Top": "top", "Shard": "shard"}

// flagError names a setting out of bounds in err by its flag.
func flagError(err error) error {
	var se *runs.SettingError
	if errors.As(err, &se) {
		return se.WithFlags(selectFlagNames)
	}
	return err
}

// settings are the run's selection.Settings of the flags. A shard's
// chains are listed only once they can be (-chains within bounds and the
// shard within -chains): otherwise Validate refuses -chains, or
// parseSelectFlags the shard.
func (f *selectFlags) settings() *selection.Settings {
	warmup := f.warmup
	if warmup == 0 {
		warmup = -1 // no warm-up: the library reads 0 as its default
	}
	s := &selection.Settings{Seed: f.seed, Chains: f.chains, Warmup: warmup, Steps: f.steps, Top: f.top, DrawsDir: f.out}
	if f.sh.Split() && f.chains >= 1 && f.chains <= runs.MaxChains && f.sh.Check(f.chains, "chains") == nil {
		s.Shard = f.sh.Indices(f.chains)
	}
	return s
}

// embeddedPrefix names a data set built into trj in -data, as output
// labels it (datasets.Label): embedded:select/linear_p20.csv.
const embeddedPrefix = "embedded:"

// readSelectCSV reads the CSV or TSV at path (or the embedded data set
// embedded:NAME) with the response column yName and the missing-value
// policy na; every other column is a predictor. Errors name the file,
// row and column.
func readSelectCSV(path, yName, family, na string) (*selectData, error) {
	b, err := readDataFile(path)
	if err != nil {
		return nil, err
	}
	return parseSelectCSV(path, b, yName, family, na)
}

// readDataFile returns the bytes of the file at path, or of the embedded
// data set embedded:NAME.
func readDataFile(path string) ([]byte, error) {
	if name, ok := strings.CutPrefix(path, embeddedPrefix); ok {
		return datasets.ReadFile(name)
	}
	return os.ReadFile(path)
}

// selectPriors are the -prior values of "trj select".
func selectPriors() []string { return []string{"g", "bric", "hyper-g", "hyper-g/n", "zs", "nig"} }

// gaussianPrior is the glmselect prior of -prior, -g, -a and -b; set holds
// the flags given, so that one given to a prior that has no such value is
// refused rather than ignored.
func (f *selectFlags) gaussianPrior(set map[string]bool) (glmselect.GaussianPrior, error) {
	takes := map[string]string{"g": "g", "bric": "", "hyper-g": "a", "hyper-g/n": "a", "zs": "", "nig": "g a b"}
	name := strings.ToLower(strings.TrimSpace(f.prior))
	values, ok := takes[name]
	if !ok {
		return nil, fmt.Errorf("-prior %q: want one of %s", f.prior, strings.Join(selectPriors(), ", "))
	}
	for _, v := range []string{"g", "a", "b"} {
		if set[v] && !strings.Contains(" "+values+" ", " "+v+" ") {
			return nil, fmt.Errorf("-%s does not apply to -prior %s", v, name)
		}
	}
	var q glmselect.GaussianPrior
	switch name {
	case "g":
		q = glmselect.GPrior{G: f.g}
	case "bric":
		q = glmselect.BRIC{}
	case "hyper-g", "hyper-g/n":
		if set["a"] && !(f.a > 2) {
			return nil, fmt.Errorf("-a %v: -prior %s needs a > 2 (a proper prior on g)", f.a, name)
		}
		q = glmselect.HyperG{A: f.a}
		if name == "hyper-g/n" {
			q = glmselect.HyperGN{A: f.a}
		}
	case "zs":
		q = glmselect.ZellnerSiow{}
	case "nig":
		q = glmselect.NormalInverseGamma{G: f.g, A: f.a, B: f.b}
	}
	return q, nil
}

// parseModelPrior reads -model-prior: beta-binomial(a,b), uniform or
// bernoulli(q), in any case and with any spaces.
func parseModelPrior(s string) (ppl.ModelPrior, error) {
	v := strings.ToLower(strings.Join(strings.Fields(s), ""))
	bad := func(why string) error {
		return fmt.Errorf("-model-prior %q: %s (want beta-binomial(a,b), uniform or bernoulli(q))", s, why)
	}
	args := func(prefix string, n int) ([]float64, bool) {
		if !strings.HasPrefix(v, prefix+"(") || !strings.HasSuffix(v, ")") {
			return nil, false
		}
		f := strings.Split(strings.TrimSuffix(strings.TrimPrefix(v, prefix+"("), ")"), ",")
		if len(f) != n {
			return nil, false
		}
		out := make([]float64, n)
		for i, x := range f {
			var err error
			if out[i], err = strconv.ParseFloat(x, 64); err != nil {
				return nil, false
			}
		}
		return out, true
	}
	var q ppl.ModelPrior
	switch {
	case v == "uniform":
		q = ppl.UniformModels{}
	case strings.HasPrefix(v, "beta-binomial"):
		x, ok := args("beta-binomial", 2)
		if !ok {
			return nil, bad("beta-binomial needs two numbers")
		}
		q = ppl.BetaBinomial{A: x[0], B: x[1]}
	case strings.HasPrefix(v, "bernoulli"):
		x, ok := args("bernoulli", 1)
		if !ok {
			return nil, bad("bernoulli needs one number")
		}
		q = ppl.Bernoulli{Q: x[0]}
	default:
		return nil, bad("unknown prior")
	}
	// The library's checks of the values (A, B > 0; 0 < q < 1).
	if err := ppl.WithModelPrior(q)(new(ppl.SelectionSpace)); err != nil {
		return nil, bad(err.Error())
	}
	return q, nil
}

// selectSpace builds the selection space of the flags' family and prior.
func selectSpace(f *selectFlags, d *selectData) (*ppl.SelectionSpace, error) {
	s, err := f.glmSettings(d)
	if err != nil {
		return nil, err
	}
	if f.newRows != nil {
		s.Predict = f.newRows
	}
	switch f.family {
	case "logistic":
		return glmselect.Logistic(d.X, d.Y, s)
	case "poisson":
		return glmselect.Poisson(d.X, d.Y, s)
	}
	return glmselect.Gaussian(d.X, d.Y, s)
}

// informedFor resolves -informed for data d: auto is informed jumps
// where they were measured to pay (bench/widesel, p = 100, n = 47: CPU ×
// PIP error² 2.7× smaller than uniform jumps), a Gaussian family with at
// least n − 1 candidate terms, whose closed-form neighbour evidences cost
// one factorisation per model.
func (f *selectFlags) informedFor(d *selectData) bool {
	if v, err := strconv.ParseBool(f.informed); err == nil {
		return v
	}
	n, p := d.X.Dims()
	return f.family == "gaussian" && p >= n-1
}

// glmSettings are the glmselect settings of the flags.
func (f *selectFlags) glmSettings(d *selectData) (*glmselect.Settings, error) {
	mp, err := parseModelPrior(f.modelPrior)
	if err != nil {
		return nil, err
	}
	s := &glmselect.Settings{Names: d.Names, ModelPrior: mp, PriorSD: f.priorSD, InterceptSD: f.interceptSD}
	if f.family == "gaussian" {
		set := map[string]bool{"g": f.g != 0, "a": f.a != 0, "b": f.b != 0}
		if s.Prior, err = f.gaussianPrior(set); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// selectJSON is the JSON "trj select" writes: the run's data, family and
// prior, then the result; an interrupted run's is partial (the result's
// "complete" false, "stopped" saying why).
type selectJSON struct {
	Data string `json:"data"`
	// DataSHA256 is the SHA-256 of the data file's bytes: what merges
	// compare, not the path.
	DataSHA256 string      `json:"data_sha256"`
	Response   string      `json:"response"`
	Family     string      `json:"family"`
	Prior      selectPrior `json:"prior"`
	Shard      string      `json:"shard,omitempty"`
	*selection.Result
}

// selectPrior is the JSON's "prior": the parameters' prior by name (its
// String, as the table's header prints it), its values with the
// defaults for these data applied, and the prior over models.
type selectPrior struct {
	Name       string             `json:"name"`
	Values     map[string]float64 `json:"values"`
	ModelPrior string             `json:"model_prior"`
	// Support says which models the prior gives mass to where that is
	// not every model (a g-prior's: at most n − 2 terms, no whole exactly
	// collinear set).
	Support string `json:"support,omitempty"`
}

// priorOf describes the prior of the run on d.
func (f *selectFlags) priorOf(d *selectData) (selectPrior, error) {
	s, err := f.glmSettings(d)
	if err != nil {
		return selectPrior{}, err
	}
	out := selectPrior{ModelPrior: s.ModelPrior.String()}
	if f.family != "gaussian" {
		out.Name = "normal"
		out.Values = map[string]float64{"prior_sd": f.priorSD, "intercept_sd": f.interceptSD}
		return out, nil
	}
	n, p := d.X.Dims()
	out.Name = s.Prior.String()
	if out.Values, err = glmselect.Values(s.Prior, n, p); err != nil {
		return out, err
	}
	ev, err := glmselect.NewEvidence(d.X, d.Y, s)
	if err != nil {
		return out, err
	}
	if sup := ev.Support(); sup.Limited() {
		out.Support = sup.String()
	}
	return out, nil
}

// runSelect is "trj select": variable selection over the CSV's columns.
// The outputs are checked writable first; when ctx is cancelled (SIGINT,
// SIGTERM) it prints and writes the partial result of every step the
// chains finished (the JSON's "complete" false), and the figures, and
// returns exitInterrupted.
func runSelect(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, err := parseSelectFlags(args, stderr)
	if code, stop := flagsExit(stderr, "select", err); stop {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "trj select: %v\n", err)
		return exitFail
	}
	if f.merge {
		if err := mergeSelect(f, stdout); err != nil {
			return fail(err)
		}
		return exitOK
	}
	if f.jsonPath != "" {
		if err := checkWritable(f.jsonPath); err != nil {
			return fail(fmt.Errorf("-json: %w", err))
		}
	}
	if f.out != "" {
		if err := checkWritableDir(f.out); err != nil {
			return fail(fmt.Errorf("-o: %w", err))
		}
	}
	if f.predictions != "" {
		if err := checkWritable(f.predictions); err != nil {
			return fail(fmt.Errorf("-predictions: %w", err))
		}
	}
	d, err := readSelectCSV(f.data, f.y, f.family, f.na)
	if err != nil {
		return fail(err)
	}
	for _, note := range d.Notes {
		fmt.Fprintf(stderr, "trj select: note: %s\n", note)
	}
	if f.predict != "" {
		if f.newRows, err = readPredictRows(f.predict, d); err != nil {
			return fail(err)
		}
	}
	dataSum, err := dataSHA256(f.data)
	if err != nil {
		return fail(err)
	}
	sp, err := selectSpace(f, d)
	if err != nil {
		return fail(err)
	}
	prior, err := f.priorOf(d)
	if err != nil {
		return fail(err)
	}
	if prior.Support != "" {
		fmt.Fprintf(stderr, "trj select: note: the %s gives prior mass only to %s; the other models have prior probability 0\n", prior.Name, prior.Support)
	}
	settings := f.settings()
	if f.proposal != "" {
		// Checked in parseSelectFlags.
		settings.Proposal, _ = selection.ParseProposal(f.proposal)
	}
	settings.Informed = f.informedFor(d)
	if !f.quiet {
		fmt.Fprintf(stderr, "trj select: %s regression of %q on %d candidate predictors (%d observations): %d chain(s) × (%d warm-up + %d kept) steps\n",
			f.family, f.y, len(d.Names), len(d.Y), len(chainsOf(settings)), f.warmup, f.steps)
		settings.Progress = selectProgress(stderr, len(chainsOf(settings)))
	}
	fmt.Fprintf(stdout, "%s regression of %q: prior %s, model prior %s\n", f.family, f.y, priorLabel(prior), prior.ModelPrior)
	res, err := selection.Run(ctx, sp, settings)
	interrupted := err != nil && ctx.Err() != nil
	var bad *runs.SettingError
	if errors.As(err, &bad) {
		// A flag out of bounds for these data (the memory of their
		// models): a usage error, as in parseSelectFlags.
		fmt.Fprintf(stderr, "trj select: %v\n", flagError(err))
		return exitUsage
	}
	if err != nil && !interrupted {
		return fail(err)
	}
	if interrupted {
		if res == nil {
			fmt.Fprintln(stderr, "trj select: interrupted before any kept step; nothing to report")
			return exitInterrupted
		}
		fmt.Fprintln(stderr, "interrupted: the partial result below counts every step the chains finished")
	}
	if err := res.WriteTable(stdout); err != nil {
		return fail(err)
	}
	var files []string
	if f.jsonPath != "" {
		out := selectJSON{Data: f.data, DataSHA256: dataSum, Response: f.y, Family: f.family, Prior: prior, Result: res}
		if f.sh.Split() {
			out.Shard = f.sh.String()
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return fail(fmt.Errorf("encoding result: %w", err))
		}
		if err := os.WriteFile(f.jsonPath, append(b, '\n'), 0o644); err != nil {
			return fail(err)
		}
		files = append(files, f.jsonPath)
	}
	if f.predictions != "" {
		if err := writePredictions(f.predictions, res); err != nil {
			return fail(err)
		}
		files = append(files, f.predictions)
	}
	if f.out != "" {
		files = append(files, filepath.Join(f.out, "select-*.csv"))
		pips, running := filepath.Join(f.out, "pips.png"), filepath.Join(f.out, "running_pips.png")
		manhattan := filepath.Join(f.out, "manhattan.png")
		if err := res.WriteManhattan(manhattan); err != nil {
			return fail(err)
		}
		if err := res.WriteFigure(pips); err != nil {
			return fail(err)
		}
		if err := res.WriteRunningFigure(running); err != nil {
			return fail(err)
		}
		files = append(files, pips, manhattan, running)
	}
	if !f.quiet && len(files) > 0 {
		fmt.Fprintf(stderr, "wrote %s\n", strings.Join(files, ", "))
	}
	if interrupted {
		fmt.Fprintln(stderr, "trj select: interrupted")
		return exitInterrupted
	}
	return exitOK
}

func chainsOf(s *selection.Settings) []int {
	if s.Shard != nil {
		return s.Shard
	}
	c := make([]int, s.Chains)
	for i := range c {
		c[i] = i
	}
	return c
}

// selectProgress prints a line on stderr each time the chains together
// pass another tenth of their steps.
func selectProgress(stderr io.Writer, chains int) func(pipeline.Progress) {
	var mu sync.Mutex
	done := map[int]int{}
	last := 0
	return func(p pipeline.Progress) {
		mu.Lock()
		defer mu.Unlock()
		done[p.Chain] = p.Done
		sum := 0
		for _, v := range done {
			sum += v
		}
		tenth := 10 * sum / (p.Total * chains)
		if tenth > last {
			last = tenth
			fmt.Fprintf(stderr, "  %3d%% of the steps, %.0f s\n", 10*tenth, p.Elapsed.Seconds())
		}
	}
}

// dataSHA256 returns the hex SHA-256 of the bytes of the data file path
// (or of the embedded data set embedded:NAME).
func dataSHA256(path string) (string, error) {
	b, err := readDataFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// sameSelectRun returns nil when the results a and b (read from the files
// pa and pb) are of the same data, response, family and prior, or an
// error naming the first that differs. The data are compared by their
// bytes' SHA-256, not by path.
func sameSelectRun(pa string, a *selectJSON, pb string, b *selectJSON) error {
	differ := func(what string, va, vb any) error {
		return fmt.Errorf("%s is of another run than %s: %s %v vs %v", pb, pa, what, va, vb)
	}
	switch {
	case a.DataSHA256 == "" || b.DataSHA256 == "":
		p := pa
		if b.DataSHA256 == "" {
			p = pb
		}
		return fmt.Errorf("%s has no data_sha256 (written by an older trj select): run that shard again", p)
	case a.DataSHA256 != b.DataSHA256:
		return fmt.Errorf("%s is of another run than %s: the data differ (SHA-256 of %s's bytes %s vs %s's %s)", pb, pa, a.Data, a.DataSHA256, b.Data, b.DataSHA256)
	case a.Response != b.Response:
		return differ("response", strconv.Quote(a.Response), strconv.Quote(b.Response))
	case a.Family != b.Family:
		return differ("family", a.Family, b.Family)
	}
	if a.Prior.Name != b.Prior.Name {
		return differ("prior", a.Prior.Name, b.Prior.Name)
	}
	if a.Prior.ModelPrior != b.Prior.ModelPrior {
		return differ("model prior", a.Prior.ModelPrior, b.Prior.ModelPrior)
	}
	keys := slices.Sorted(maps.Keys(a.Prior.Values))
	for k := range b.Prior.Values {
		if _, ok := a.Prior.Values[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		va, oka := a.Prior.Values[k]
		vb, okb := b.Prior.Values[k]
		if va != vb || oka != okb {
			return differ("prior "+k, va, vb)
		}
	}
	return nil
}

// mergeSelect combines the -json results of a run's shards (selection.Merge)
// and prints and writes the whole run's result. The shards must be of one
// run (the same data bytes, response, family and prior, and the same
// fingerprint: runs.CheckParts names the setting that differs) and hold
// every chain once.
func mergeSelect(f *selectFlags, stdout io.Writer) error {
	if f.jsonPath != "" {
		if err := checkWritable(f.jsonPath); err != nil {
			return fmt.Errorf("-json: %w", err)
		}
	}
	if f.predictions != "" {
		if err := checkWritable(f.predictions); err != nil {
			return fmt.Errorf("-predictions: %w", err)
		}
	}
	var parts []*selection.Result
	var rp []runs.Part
	var head selectJSON
	for i, path := range f.parts {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var h selectJSON
		if err := json.Unmarshal(b, &h); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if i == 0 {
			head = h
		} else if err := sameSelectRun(f.parts[0], &head, path, &h); err != nil {
			return err
		}
		r, err := selection.ReadResult(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		parts = append(parts, r)
		rp = append(rp, runs.Part{Name: path, Fingerprint: r.Fingerprint, Settings: r.Settings, Chains: r.Chains})
	}
	if err := runs.CheckParts(rp, parts[0].NumChains); err != nil {
		return err
	}
	res, err := selection.Merge(parts...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s regression of %q: prior %s, model prior %s\n", head.Family, head.Response, priorLabel(head.Prior), head.Prior.ModelPrior)
	if err := res.WriteTable(stdout); err != nil {
		return err
	}
	if f.predictions != "" {
		if err := writePredictions(f.predictions, res); err != nil {
			return err
		}
	}
	if f.jsonPath == "" {
		return nil
	}
	out := selectJSON{Data: head.Data, DataSHA256: head.DataSHA256, Response: head.Response, Family: head.Family, Prior: head.Prior, Result: res}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(f.jsonPath, append(b, '\n'), 0o644)
}

// priorLabel names a prior with its values for the table's header:
// "g-prior(g=n) (g = 47)".
func priorLabel(p selectPrior) string {
	if len(p.Values) == 0 {
		return p.Name
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p.Values)) {
		parts = append(parts, k+" = "+strconv.FormatFloat(p.Values[k], 'g', 6, 64))
	}
	return p.Name + " (" + strings.Join(parts, ", ") + ")"
}
