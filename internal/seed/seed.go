// Package seed derives the seeds of a run's random streams from the run's
// seed: every stream is named by a stage and a part index, so streams are
// reproducible whatever order the parts run in.
package seed

import (
	"hash/fnv"
	"math/rand/v2"
)

// Key is the one way a stage name and a part index enter a stream's seed:
// the stage's FNV-1a hash mixed with the index times a large odd constant,
// so that consecutive parts land far apart.
func Key(stage string, i int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(stage))
	return h.Sum64() ^ (uint64(i)+1)*0x9e3779b97f4a7c15
}

// Derive returns the seed of part i of the named stage of a run with seed
// s: s xor Key, through the splitmix64 finaliser, so that nearby inputs
// give unrelated seeds.
func Derive(s uint64, stage string, i int) uint64 {
	x := s ^ Key(stage, i)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Stream returns the random stream of part i of the named stage:
// PCG(s, Derive(s, stage, i)).
func Stream(s uint64, stage string, i int) *rand.Rand {
	return rand.New(rand.NewPCG(s, Derive(s, stage, i)))
}
