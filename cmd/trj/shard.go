package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Environment variables from which "-shard n" takes the shard's index.
const (
	// slurmTaskEnv is a Slurm job array task's id; slurmMinEnv and
	// slurmMaxEnv are the array's first and last ids.
	slurmTaskEnv = "SLURM_ARRAY_TASK_ID"
	slurmMinEnv  = "SLURM_ARRAY_TASK_MIN"
	slurmMaxEnv  = "SLURM_ARRAY_TASK_MAX"
	slurmStepEnv = "SLURM_ARRAY_TASK_STEP"
	// k8sIndexEnv is a Kubernetes Indexed Job pod's 0-based index.
	k8sIndexEnv = "JOB_COMPLETION_INDEX"
)

// shardFlagHelp documents -shard for every command that has it.
const shardFlagHelp = "run only shard `i/n` of an n-way split (1 ≤ i ≤ n) and write its part; " +
	"\"n\" alone takes i from $" + k8sIndexEnv + " (0-based) or from $" + slurmTaskEnv +
	" (counted from $" + slurmMinEnv + ", so --array=1-n and --array=0-(n-1) both work)"

// shard is part Index (1-based) of a split into Count parts. The zero value
// means no split.
type shard struct {
	Index, Count int
}

// sharded reports whether s names a real split rather than the whole run.
func (s shard) sharded() bool { return s.Count > 1 }

// String returns "i/n", the form -shard takes.
func (s shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// block returns the half-open range [lo, hi) of the items 0 … total−1 that
// belong to s: contiguous blocks whose sizes differ by at most one, in
// order, so that the shards together cover every item once. An unsplit
// shard owns everything.
func (s shard) block(total int) (lo, hi int) {
	if s.Count <= 1 {
		return 0, total
	}
	return (s.Index - 1) * total / s.Count, s.Index * total / s.Count
}

// check refuses splits of total items (named by what, e.g. "chains") into
// more shards than there are items, which would leave a shard nothing to do.
func (s shard) check(total int, what string) error {
	if s.Count > total {
		return fmt.Errorf("-shard %s: %d %s cannot be split %d ways; use at most %d shards", s, total, what, s.Count, total)
	}
	return nil
}

// parseShard reads a -shard value: "" (no split), "i/n", or "n" with i
// taken from the scheduler's environment through getenv.
func parseShard(arg string, getenv func(string) string) (shard, error) {
	if arg == "" {
		return shard{Index: 1, Count: 1}, nil
	}
	bad := func(format string, a ...any) (shard, error) {
		return shard{}, fmt.Errorf("-shard %q: "+format, append([]any{arg}, a...)...)
	}
	is, ns, split := strings.Cut(arg, "/")
	if !split {
		ns = is
	}
	n, err := strconv.Atoi(ns)
	if err != nil || n < 1 {
		return bad("want i/n or n with n a positive integer")
	}
	if split {
		i, err := strconv.Atoi(is)
		if err != nil || i < 1 || i > n {
			return bad("want i/n with 1 ≤ i ≤ n")
		}
		return shard{Index: i, Count: n}, nil
	}
	i, err := shardFromEnv(n, getenv)
	if err != nil {
		return bad("%v", err)
	}
	return shard{Index: i, Count: n}, nil
}

// shardFromEnv returns the 1-based shard index of n that the scheduler
// gave this process: JOB_COMPLETION_INDEX + 1 in a Kubernetes Indexed Job,
// or SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN + 1 in a Slurm job array
// (the task id itself when the minimum is unset). A Slurm array must have
// exactly n consecutive ids.
func shardFromEnv(n int, getenv func(string) string) (int, error) {
	k8s, slurm := getenv(k8sIndexEnv), getenv(slurmTaskEnv)
	envInt := func(name string) (int, error) {
		v, err := strconv.Atoi(strings.TrimSpace(getenv(name)))
		if err != nil {
			return 0, fmt.Errorf("$%s = %q is not an integer", name, getenv(name))
		}
		return v, nil
	}
	var i int
	switch {
	case k8s != "" && slurm != "":
		return 0, fmt.Errorf("both $%s and $%s are set; give the shard as i/n", k8sIndexEnv, slurmTaskEnv)
	case k8s != "":
		idx, err := envInt(k8sIndexEnv)
		if err != nil {
			return 0, err
		}
		i = idx + 1
	case slurm != "":
		id, err := envInt(slurmTaskEnv)
		if err != nil {
			return 0, err
		}
		i = id
		if st := strings.TrimSpace(getenv(slurmStepEnv)); st != "" && st != "1" {
			return 0, fmt.Errorf("the Slurm array steps by %s; shards need consecutive task ids (--array=1-%d)", st, n)
		}
		if getenv(slurmMinEnv) != "" {
			lo, err := envInt(slurmMinEnv)
			if err != nil {
				return 0, err
			}
			i = id - lo + 1
			if getenv(slurmMaxEnv) != "" {
				hi, err := envInt(slurmMaxEnv)
				if err != nil {
					return 0, err
				}
				if hi-lo+1 != n {
					return 0, fmt.Errorf("the Slurm array has ids %d-%d, %d tasks for %d shards; submit it with --array=1-%d", lo, hi, hi-lo+1, n, n)
				}
			}
		}
	default:
		return 0, errors.New("no shard index: neither $" + k8sIndexEnv + " nor $" + slurmTaskEnv + " is set; give the shard as i/n")
	}
	if i < 1 || i > n {
		return 0, fmt.Errorf("shard index %d from the environment is outside 1 … %d", i, n)
	}
	return i, nil
}
