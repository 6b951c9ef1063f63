// Package cpufeat reports the processor features that the assembly kernels
// of ad/ops and internal/gemm need, detected once at package
// initialisation.
package cpufeat
