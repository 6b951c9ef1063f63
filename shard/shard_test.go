package shard

import (
	"slices"
	"strings"
	"testing"
)

func TestParseEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		arg  string
		env  func(string) string
		want Shard
	}{
		{"", env(), Shard{1, 1}},
		{"2/4", env(), Shard{2, 4}},
		{"4/4", env(SlurmTaskEnv, "1"), Shard{4, 4}},
		{"3", env(IndexedJobEnv, "0"), Shard{1, 3}},
		{"3", env(IndexedJobEnv, "2"), Shard{3, 3}},
		{"3", env(SlurmTaskEnv, "3"), Shard{3, 3}},
		{"3", env(SlurmTaskEnv, "0", SlurmMinEnv, "0", SlurmMaxEnv, "2"), Shard{1, 3}},
		{"3", env(SlurmTaskEnv, "7", SlurmMinEnv, "5", SlurmMaxEnv, "7"), Shard{3, 3}},
		{"3", env(SlurmTaskEnv, "2", SlurmStepEnv, "1"), Shard{2, 3}},
		{"3", env(SlurmTaskEnv, "2", SlurmMinEnv, "1", SlurmMaxEnv, "3", SlurmCountEnv, "3"), Shard{2, 3}},
		// A rerun of shard 3 alone (sbatch --array=3 … -shard 3/4): i/n
		// wins over the one-task array.
		{"3/4", env(SlurmTaskEnv, "3", SlurmMinEnv, "3", SlurmMaxEnv, "3", SlurmCountEnv, "1"), Shard{3, 4}},
	} {
		got, err := ParseEnv(c.arg, c.env)
		if err != nil || got != c.want {
			t.Errorf("ParseEnv(%q) = %v, %v; want %v", c.arg, got, err, c.want)
		}
	}
	for _, c := range []struct {
		arg  string
		env  func(string) string
		want string
	}{
		{"0/4", env(), "1 ≤ i ≤ n"},
		{"5/4", env(), "1 ≤ i ≤ n"},
		{"a/4", env(), "1 ≤ i ≤ n"},
		{"2/0", env(), "positive integer"},
		{"x", env(), "positive integer"},
		{"4", env(), "neither"},
		{"4", env(IndexedJobEnv, "4"), "outside 1 … 4"},
		{"4", env(SlurmTaskEnv, "0"), "outside 1 … 4"},
		{"4", env(SlurmTaskEnv, "one"), "not an integer"},
		{"4", env(SlurmTaskEnv, "1", SlurmMinEnv, "1", SlurmMaxEnv, "3"), "has 3 tasks (ids 1-3) for 4 shards; submit the shards as --array=1-4"},
		// sbatch --array=3 with the array's own -shard 4: one task.
		{"4", env(SlurmTaskEnv, "3", SlurmMinEnv, "3", SlurmMaxEnv, "3", SlurmCountEnv, "1"), "has 1 task (id 3) for 4 shards"},
		{"4", env(SlurmTaskEnv, "3", SlurmMinEnv, "3", SlurmMaxEnv, "3", SlurmCountEnv, "1"), "--array=i and the shard given as i/4"},
		// --array=1,2,3,5: four tasks, ids from 1 to 5.
		{"4", env(SlurmTaskEnv, "5", SlurmMinEnv, "1", SlurmMaxEnv, "5", SlurmCountEnv, "4"), "has 4 tasks (ids from 1 to 5, with gaps) for"},
		{"5", env(SlurmTaskEnv, "5", SlurmMinEnv, "1", SlurmMaxEnv, "5", SlurmCountEnv, "4"), "has 4 tasks (ids from 1 to 5, with gaps) for"},
		{"4", env(SlurmTaskEnv, "1", SlurmMinEnv, "1", SlurmMaxEnv, "4", SlurmCountEnv, "four"), "not an integer"},
		{"4", env(SlurmTaskEnv, "1", IndexedJobEnv, "0"), "both"},
		{"4", env(SlurmTaskEnv, "1", SlurmStepEnv, "2"), "steps by 2"},
	} {
		if _, err := ParseEnv(c.arg, c.env); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseEnv(%q): error %v, want one mentioning %q", c.arg, err, c.want)
		}
	}
}

func TestBlocks(t *testing.T) {
	for _, total := range []int{1, 4, 7, 10} {
		for n := 1; n <= total; n++ {
			next := 0
			for i := 1; i <= n; i++ {
				lo, hi := Shard{i, n}.Block(total)
				if lo != next || hi <= lo {
					t.Fatalf("%d items, shard %d/%d: block [%d, %d) after %d", total, i, n, lo, hi, next)
				}
				next = hi
			}
			if next != total {
				t.Errorf("%d items in %d shards cover %d", total, n, next)
			}
		}
	}
	if err := (Shard{1, 5}).Check(4, "chains"); err == nil {
		t.Error("5 shards of 4 chains accepted")
	}
}

func TestIndices(t *testing.T) {
	if got := (Shard{2, 3}).Indices(10); !slices.Equal(got, []int{3, 4, 5}) {
		t.Errorf("shard 2/3 of 10: %v", got)
	}
	if got := Whole.Indices(3); !slices.Equal(got, []int{0, 1, 2}) || Whole.Split() {
		t.Errorf("whole run of 3: %v", got)
	}
	if s, err := ParseEnv("", nil); err != nil || s != Whole {
		t.Errorf(`ParseEnv(""): %v, %v`, s, err)
	}
}
