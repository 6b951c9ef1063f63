// Package ppl is trj's model-building API: named parameters with constraints
// and their log-Jacobians, distributions as gorgonia graph builders, the Model
// interface that samplers consume, and transdimensional model spaces.
package ppl
