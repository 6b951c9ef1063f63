package ad

import "fmt"

// Parallel is optionally implemented by a Kernel that can split one
// evaluation over several goroutines, such as the fused GLM ops of ad/ops
// over blocks of data rows. Its result must not depend on the number of
// goroutines, so that a sampler's draws do not either.
type Parallel interface {
	// SetWorkers sets how many goroutines, the calling one included, one
	// Eval may use; the kernel may use fewer.
	SetWorkers(n int)
}

// SetWorkers lets each kernel of p that implements Parallel use up to n
// goroutines per evaluation, so that one chain can use several cores on a
// large data set. The default is 1. The value and gradient are the same for
// every n. Clones made afterwards inherit the setting; p's existing clones
// keep theirs. With n > 1 an evaluation allocates the goroutines it starts.
func (p *Program) SetWorkers(n int) error {
	if n < 1 {
		return fmt.Errorf("ad: SetWorkers(%d): want at least 1", n)
	}
	for _, k := range p.kernels {
		if pk, ok := k.(Parallel); ok {
			pk.SetWorkers(n)
		}
	}
	return nil
}
