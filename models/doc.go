// Package models is trj's model gallery: the reference posteriors from
// posteriordb and the three experiments of the transport reversible jump
// paper, each written with the public ppl API like any user's model.
//
// The registry (Lookup, Names, All) is what "trj sample -model NAME" finds
// models by: each Entry has a constructor taking the path of a data file
// ("" for the model's own data set, embedded in package models/datasets),
// the name of that data set, and a description.
// A model package joins the registry by adding a function returning its
// entries to the sources list in registry.go.
package models
