// Package draws holds the output of Markov chain Monte Carlo runs, chains ×
// draws × parameters, with per-draw sampler diagnostics and, for
// transdimensional runs, the index of the model each draw belongs to.
//
// Draws are written and read in the CSV layout of CmdStan, one file per
// chain: comment lines starting with '#' carry the run's configuration as
// "key = value" pairs, a header row names the columns (sampler diagnostics
// such as lp__ first, then the model index model__ for transdimensional runs,
// then the parameters with Stan's flattened names such as theta.1), and each
// following row is one draw. Files in this layout can be read by CmdStan's
// own tools, by ArviZ's from_cmdstan and by the R package posterior.
// WriteFiles writes every chain of a Draws to its own file, WriteCSV one
// chain to an io.Writer, and CSVWriter streams a chain while it is sampled;
// ReadCSV and ReadFiles parse them back.
//
// Summarize computes, per parameter, the mean, standard deviation, 5%, 50%
// and 95% quantiles, the Monte Carlo standard error of the mean, bulk and
// tail effective sample sizes and R̂ (by package diag), and
// Summary.WriteTable prints them in the style of CmdStan's stansummary.
package draws
