// Command trj samples models of the gallery and runs the transport reversible
// jump experiments.
//
// Usage:
//
//	trj sample -model NAME [-data FILE] [-sampler nuts|rwm|smc] [-chains 4]
//	           [-warmup 1000] [-draws 1000] [-seed 1] [-o draws.csv] [-quiet]
//	           [-metric diag_e|dense_e|unit_e] [-adapt-delta 0.8]
//	           [-smc-move eigen-rwm|rwm|nuts] [-shard i/n|n]
//	trj run sas|factor|robustvs [-paper] [-seed 1] [-out DIR] [-json FILE]
//	           [-quiet] [-chains N -steps N (sas, factor)]
//	           [-data FILE (factor, robustvs)] [-shard i/n|n -o PARTIAL.json (sas)]
//	           [-stage pilot|fit|chains -stages DIR (sas)]
//	trj select -data FILE.csv -y COLUMN [-family gaussian|logistic|poisson]
//	           [-json FILE] [-o DIR] [-prior g|bric|hyper-g|hyper-g/n|zs|nig]
//	           [-g G] [-a A] [-b B] [-model-prior beta-binomial(1,1)|uniform|bernoulli(q)]
//	           [-prior-sd 2.5] [-intercept-sd 10] [-seed 1] [-chains 4] [-warmup 1000]
//	           [-steps 40000] [-top 20] [-proposal fullcond|laplace|...] [-quiet]
//	           [-shard i/n|n (needs -json or -o)] [-na refuse|drop]
//	           [-informed auto|true|false] [-predict NEW.csv -predictions OUT.csv]
//	trj select -merge [-json FILE] PART.json...
//	trj summary FILE...
//	trj study factor [-n 2000] [-pairs 10] [-reps 100] [-seed 1] [-data FILE]
//	           [-shard i/n|n] [-o PARTIAL.json] [-out DIR] [-json FILE] [-paper]
//	trj merge [-out DIR] [-json FILE] PARTIAL.json...
//	trj models
//
// sample runs the chains, writes them in CmdStan's CSV layout (one file per
// chain, draws_1.csv … for -o draws.csv, or the file itself for one chain)
// and prints a stansummary-style table; run runs one of the paper's
// experiments, prints its table, writes its figures into -out (default
// trj-out/NAME) and its result as JSON to -json; summary prints the
// stansummary table for CSV files already written; models lists the
// gallery with each model's dimension, data size and description. The
// gallery's and the experiments' data are built into trj (package
// models/datasets); -data FILE, or $TRJ_DATA naming a folder laid out like
// that package, replaces them, and the output names the data used. With
// -sampler smc, -draws is the number of particles, reported as one chain,
// and the log evidence is printed.
//
// Output paths (-o, -json, -out) are checked writable before any work,
// and their folders created when missing.
// sample writes each draw as it is made, as CmdStan does: every file is
// valid CSV at any moment, holds every draw but those of the last second,
// and carries CmdStan's adaptation block (step size, inverse metric) after
// the warm-up and its elapsed-time block at the end. On SIGINT or SIGTERM
// the chains finish their iteration, the files of chains cut short are
// completed and marked "# interrupted = interrupted", the summary of the
// draws kept so far is printed, and trj exits with status 130 after
// saying "interrupted"; a second signal ends it at once. run writes the
// JSON of what finished, marked "incomplete".
//
// select runs variable selection over the CSV's columns (selection.Run on a
// models/glmselect space): the response -y against every other column,
// centred, the intercept always in, with the documented default priors of
// package glmselect (gaussian: -prior g, Zellner's g-prior with g = n,
// which does not depend on the units of y or the predictors; -prior bric,
// hyper-g (-a, default 3), hyper-g/n, zs (Zellner–Siow) or nig (the
// normal-inverse-gamma prior, -g, -a, -b on the standardised predictors);
// logistic and poisson: N(0, prior-sd²) coefficients on the standardised
// predictors and an N(link(ȳ), intercept-sd²) intercept; -model-prior, by
// default a beta-binomial(1, 1) prior over model size). The table's first
// line names the prior and model prior that ran, and the JSON's "prior"
// holds its name, values and model prior. It prints the inclusion
// probability of every predictor ± MCSE with R̂, the model-averaged
// coefficients in the data's units (mean, sd, P(β > 0 | in), mean given
// in, ± MCSE), the expected model size and the most visited models, ends
// with a "run longer" warning naming the terms whose R̂ > 1.05 or ESS < 100,
// and writes them as JSON to -json and the kept steps as CmdStan CSV
// (each step's model, numbered per chain) into -o. -predict NEW.csv
// -predictions OUT.csv writes the model-averaged prediction (mean, 95 %
// interval, MCSE) at each new row. -informed chooses the term to add or
// drop by the neighbours' evidences; auto turns it on for the gaussian
// family when there are at least n − 1 candidate terms, where it mixes
// far better, and the g-prior's support (at most n − 2 terms, no whole
// exactly collinear set) is noted before the run.
// -data embedded:select/linear_p20.csv reads a data set built into trj.
// The data may be comma- or tab-separated (a .tsv name, or tabs in the
// header), with R's row names (an empty first header field). A text
// column is a factor: one 0/1 term column[level] per level but the
// reference (No or FALSE when present, else the first in order), each
// selected on its own; a Yes/No, TRUE/FALSE or Y/N response is a
// logistic one (Yes = 1). Rows with a missing value (NA, empty, NaN, nan,
// .) are refused, naming them, or dropped with -na drop. Before the run
// it notes the factors, the dropped rows and the exactly collinear
// columns (glmselect.CollinearSets), which are not an error.
// Interrupted, it prints and writes (-json, the figures) the partial
// result of every step the chains finished, none cut to the shortest (the
// JSON's "complete" false and "stopped" the reason), and marks the -o
// files "# interrupted = reason"; a partial shard merges, into a partial
// result.
//
// With -shard i/n, sample runs only the i-th of n contiguous blocks of the
// chains, each chain seeded as in the whole run, and writes their files
// under the whole run's names (draws_3.csv for chain 3), so that n shard
// processes on a batch scheduler and one "trj summary draws_*.csv" give the
// whole run's files and table. "-shard n" takes i from the scheduler:
// $JOB_COMPLETION_INDEX + 1 (Kubernetes Indexed Jobs) or
// $SLURM_ARRAY_TASK_ID counted from $SLURM_ARRAY_TASK_MIN (Slurm arrays;
// submit with --array=1-n). See docs/scale.md. select -shard i/n likewise
// runs its block of the chains and writes its result (-json) and draws
// (-o); "trj select -merge -json all.json part_*.json" combines the shards'
// results (selection.Merge) into the whole run's table and JSON, refusing
// shards of different runs (the data, compared by the SHA-256 of their
// bytes, the response, family, prior or a setting such as -seed or
// -warmup: the error names it) and missing or repeated shards. Each
// chain's CSV carries its run's fingerprint: select refuses an -o folder
// holding another run's select-N.csv (a 4-chain run's select-3.csv when
// the new run has 2 chains), naming the files, before any work, so that
// a folder never mixes two runs (shards of one run share a folder), and
// summary refuses files of different runs.
//
// study factor runs the paper's factor-analysis study of the bridge
// estimator: -pairs independent training/evaluation pilot pairs of -n draws
// per model, each with -reps bridge estimates per proposal type. Every run,
// split or not, writes a partial result file (-o); a run split with -shard
// writes only that, and merge combines the shards' files into the table,
// the violin figures and the JSON an unsplit run gives, refusing files of
// different runs (seed, settings, model or data: their fingerprints
// differ) and missing or repeated shards. "run sas -shard i/n" likewise
// runs the pilot, flows and bridge in full but only its block of the
// chains, and merge gives the whole run's table, figures and JSON (apart
// from wall times). "run sas -stage" splits it into stages that compute
// nothing twice, each reading the files of the one before from -stages:
// "-stage pilot -shard i/n" (a block of the models), "-stage fit" (once:
// the flows and bridge estimates), then "-stage chains -shard i/n" (a
// block of the chains, for merge). See docs/scale.md. -shard 1/1 is a
// shard too (a batch array of one task). A shard stopped by SIGINT or SIGTERM exits 130 after saying
// "interrupted" and keeps the proposal types that finished in its partial
// file, marked incomplete, which merge refuses.
//
// A standard error that cannot be computed (chains that never jumped, or
// too short) is printed "n/a" with a note under the table saying why, and
// is "NaN" in the JSON beside "stderr_note". Every JSON file trj writes
// has snake_case keys and writes a value that is not finite as the string
// "NaN", "+Inf" or "-Inf".
package main
