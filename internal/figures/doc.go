// Package figures draws the paper's figures with gonum.org/v1/plot.
//
// Three kinds of figure are provided, matching the figures of the TRJ paper:
//
//   - RunningEstimates: running estimates of a model probability, several
//     chains per proposal type, with a horizontal line at the true value.
//   - Violins and ViolinPanels: violin plots (Gaussian kernel density
//     estimates with Silverman's bandwidth, mirrored, with median and
//     interquartile markers) of repeated model-probability estimates, one
//     violin per proposal type, with a horizontal truth line.
//   - Scatter: bivariate marginals of source points and of proposed points,
//     one panel per proposal type on a grid, optionally over light background
//     points from the exact target and with contour lines of their kernel
//     density estimate.
//
// Every function writes a single file whose extension selects the format:
// ".png" or ".svg" (case-insensitive); any other extension is an error.
// Output is deterministic: the same input gives byte-identical files.
//
// Non-finite values (NaN, ±Inf) in the data are skipped, never drawn, and every
// function returns how many it skipped so that callers can report them. A
// group, chain or panel left with nothing to draw is an error.
//
// Sizes, resolution, panel columns and a few labels are set with Options.
package figures
