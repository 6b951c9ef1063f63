//go:build !amd64 || purego

package cpufeat

// AVX2FMA reports false: the assembly kernels exist only on amd64.
func AVX2FMA() bool { return false }
