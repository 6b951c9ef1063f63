package main

import "github.com/trjgo/trj/shard"

// shardFlagHelp documents -shard for every command that has it.
const shardFlagHelp = "run only shard `i/n` of an n-way split (1 ≤ i ≤ n) and write its part; " +
	"\"n\" alone takes i from $" + shard.IndexedJobEnv + " (0-based) or from $" + shard.SlurmTaskEnv +
	" (counted from $" + shard.SlurmMinEnv + ", so --array=1-n and --array=0-(n-1) both work); " +
	"a rerun of one shard gives it as i/n"
