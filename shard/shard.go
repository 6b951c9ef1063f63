package shard

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Environment variables from which Parse takes a shard's index when only
// the count is given.
const (
	// SlurmTaskEnv is a Slurm job array task's id; the array's lowest and
	// highest ids, its number of tasks and its step are in SlurmMinEnv,
	// SlurmMaxEnv, SlurmCountEnv and SlurmStepEnv.
	SlurmTaskEnv  = "SLURM_ARRAY_TASK_ID"
	SlurmMinEnv   = "SLURM_ARRAY_TASK_MIN"
	SlurmMaxEnv   = "SLURM_ARRAY_TASK_MAX"
	SlurmCountEnv = "SLURM_ARRAY_TASK_COUNT"
	SlurmStepEnv  = "SLURM_ARRAY_TASK_STEP"
	// IndexedJobEnv is a Kubernetes Indexed Job pod's 0-based index.
	IndexedJobEnv = "JOB_COMPLETION_INDEX"
)

// Shard is part Index (1-based) of a split into Count parts. Count 1 (or
// the zero value) is the whole run.
type Shard struct {
	Index, Count int
}

// Whole is the unsplit run.
var Whole = Shard{Index: 1, Count: 1}

// Split reports whether s is a real part of a split rather than the whole
// run.
func (s Shard) Split() bool { return s.Count > 1 }

// String returns "i/n", the form Parse reads.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Block returns the half-open range [lo, hi) of the items 0 … total−1 that
// belong to s: contiguous blocks in order, whose sizes differ by at most
// one, so that the Count shards cover every item exactly once. An unsplit
// shard owns everything.
func (s Shard) Block(total int) (lo, hi int) {
	if s.Count <= 1 {
		return 0, total
	}
	return (s.Index - 1) * total / s.Count, s.Index * total / s.Count
}

// Indices returns the 0-based indices of s's block of total items.
func (s Shard) Indices(total int) []int {
	lo, hi := s.Block(total)
	out := make([]int, 0, max(hi-lo, 0))
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// Check refuses a split of total items (named by what, e.g. "chains") into
// more shards than there are items, which would leave a shard nothing to
// do.
func (s Shard) Check(total int, what string) error {
	if s.Count > total {
		return fmt.Errorf("shard %s: %d %s cannot be split %d ways; use at most %d shards", s, total, what, s.Count, total)
	}
	return nil
}

// Parse reads a shard: "" (the whole run), "i/n" (1 ≤ i ≤ n), or "n" with
// i taken from the scheduler's environment: JOB_COMPLETION_INDEX + 1 in a
// Kubernetes Indexed Job, or SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN + 1
// in a Slurm job array (the task id itself when the minimum is unset),
// which must be n tasks with consecutive ids (--array=1-n or
// --array=0-(n-1)). Any other array is refused, as its tasks could not
// say which shards they are: an array of one task rerunning shard i, or
// of the ids 1,2,3,5, gives the shard as "i/n", which ignores the
// environment.
func Parse(arg string) (Shard, error) { return ParseEnv(arg, os.Getenv) }

// ParseEnv is Parse with the environment read through getenv.
func ParseEnv(arg string, getenv func(string) string) (Shard, error) {
	if arg == "" {
		return Whole, nil
	}
	bad := func(format string, a ...any) (Shard, error) {
		return Shard{}, fmt.Errorf("shard %q: "+format, append([]any{arg}, a...)...)
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
		return Shard{Index: i, Count: n}, nil
	}
	i, err := fromEnv(n, getenv)
	if err != nil {
		return bad("%v", err)
	}
	return Shard{Index: i, Count: n}, nil
}

// fromEnv returns the 1-based index of the shard of n that the scheduler
// gave this process.
func fromEnv(n int, getenv func(string) string) (int, error) {
	k8s, slurm := getenv(IndexedJobEnv), getenv(SlurmTaskEnv)
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
		return 0, fmt.Errorf("both $%s and $%s are set; give the shard as i/n", IndexedJobEnv, SlurmTaskEnv)
	case k8s != "":
		idx, err := envInt(IndexedJobEnv)
		if err != nil {
			return 0, err
		}
		i = idx + 1
	case slurm != "":
		id, err := envInt(SlurmTaskEnv)
		if err != nil {
			return 0, err
		}
		i = id
		if st := strings.TrimSpace(getenv(SlurmStepEnv)); st != "" && st != "1" {
			return 0, fmt.Errorf("the Slurm array steps by %s; shards need consecutive task ids (--array=1-%d)", st, n)
		}
		if getenv(SlurmMinEnv) != "" {
			lo, err := envInt(SlurmMinEnv)
			if err != nil {
				return 0, err
			}
			i = id - lo + 1
			if getenv(SlurmMaxEnv) != "" {
				hi, err := envInt(SlurmMaxEnv)
				if err != nil {
					return 0, err
				}
				tasks := hi - lo + 1
				if getenv(SlurmCountEnv) != "" {
					if tasks, err = envInt(SlurmCountEnv); err != nil {
						return 0, err
					}
				}
				if tasks != n || hi-lo+1 != n {
					return 0, fmt.Errorf("the Slurm array has %s for %d shards; submit the shards as --array=1-%d, or run one shard alone (a rerun) with --array=i and the shard given as i/%d",
						describeArray(lo, hi, tasks), n, n, n)
				}
			}
		}
	default:
		return 0, errors.New("no shard index: neither $" + IndexedJobEnv + " nor $" + SlurmTaskEnv + " is set; give the shard as i/n")
	}
	if i < 1 || i > n {
		return 0, fmt.Errorf("shard index %d from the environment is outside 1 … %d", i, n)
	}
	return i, nil
}

// describeArray describes a Slurm array of tasks with ids lo … hi.
func describeArray(lo, hi, tasks int) string {
	switch {
	case tasks == 1 && lo == hi:
		return fmt.Sprintf("1 task (id %d)", lo)
	case tasks == hi-lo+1:
		return fmt.Sprintf("%d tasks (ids %d-%d)", tasks, lo, hi)
	}
	return fmt.Sprintf("%d tasks (ids from %d to %d, with gaps)", tasks, lo, hi)
}
