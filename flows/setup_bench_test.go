package flows

import (
	"fmt"
	"testing"
)

// BenchmarkTrainSetup times what an uncached fit does before its first
// Adam step, per batch size: building and compiling the minibatch loss of
// an RQMA flow in the paper's configuration, then cloning it for a second
// worker.
func BenchmarkTrainSetup(b *testing.B) {
	for _, n := range []int{2, 6, 21} {
		shift, scale := make([]float64, n), make([]float64, n)
		for i := range scale {
			scale[i] = 1
		}
		f, err := NewRQMA(shift, scale, PaperRQMAConfig(), 1)
		if err != nil {
			b.Fatal(err)
		}
		rb := &rqmaBatch{f: f}
		b.Run(fmt.Sprintf("compile/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := compileLoss(rb, 64); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("clone/n=%d", n), func(b *testing.B) {
			lp, err := compileLoss(rb, 64)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				lp.clone()
			}
		})
	}
}
