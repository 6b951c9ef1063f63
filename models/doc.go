// Package models is trj's model gallery: the reference posteriors from
// posteriordb and the three experiments of the transport reversible jump
// paper, each written with the public ppl API like any user's model.
package models
