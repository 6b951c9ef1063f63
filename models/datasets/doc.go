// Package datasets holds the data sets the gallery and the paper's
// experiments are conditioned on, embedded in every program that imports
// it, so that a binary built from this module runs its examples wherever it
// is installed.
//
// A data set is named by its path inside this folder with forward slashes:
// ExchangeRates and RobustRegression for the experiments,
// "posteriordb/DATA-MODEL.json" for the posteriordb reference posteriors,
// and SelectLinear and SelectLogistic ("select/...") for variable selection.
// README.md in this folder gives each set's source, size and licence.
//
// The models' own loaders read any file from a path (factor.LoadData,
// robustvs.LoadData, the posteriordb constructors); an empty path makes
// them use the copy embedded here. They read every file, embedded or not,
// through one path: ReadCSV (which reads tab-separated files too, and R's
// row names) and ParseDatum for CSV, ReadJSONObject for JSON. It accepts a UTF-8 byte-order mark, names UTF-16 and semicolon
// separators, refuses JSON with text after the object, a second object or
// a key given twice, and refuses numbers beyond MaxDatum, whose squares
// would make the likelihood non-finite far from the datum's name.
package datasets
