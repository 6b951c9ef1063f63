// Package shard splits a run's independent items — chains, pilot pairs,
// bridge replicates — into contiguous blocks, one per process of a batch
// scheduler, and finds which block a process is from the scheduler's
// environment (Slurm job arrays, Kubernetes Indexed Jobs).
//
// Every random stream of trj is derived from the seed and the item's index,
// so a shard that runs items lo … hi−1 of a run computes them exactly as
// the whole run would; merging the shards' outputs gives the whole run's
// result. With the trj package:
//
//	s, err := shard.Parse("10") // shard i of 10, i from the environment
//	settings.Chains.Shard = s.Indices(settings.Chains.Chains)
//
// and trj.Merge (or "trj merge") combines the shards' results.
package shard
