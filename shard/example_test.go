package shard_test

import (
	"fmt"
	"log"

	"github.com/trjgo/trj/shard"
)

// Task 3 of a Slurm array submitted with --array=1-4 is shard 3 of 4: of a
// ten-chain run (chains 0 … 9) it runs chains 5 and 6.
func ExampleParseEnv() {
	env := map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "4"}
	s, err := shard.ParseEnv("4", func(k string) string { return env[k] })
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s, s.Indices(10))
	// Output: 3/4 [5 6]
}
