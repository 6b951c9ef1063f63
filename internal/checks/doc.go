// Package checks holds the steps that trj's tests take alike in several
// packages: evaluating a log-density and its gradient where an error ends
// the test, central-difference gradients of functions that can fail, and
// the forward-then-inverse round trip of a bijection, synthetic
// variable-selection data, and the snake_case check of the keys of the JSON
// trj writes. Only tests import it.
package checks
