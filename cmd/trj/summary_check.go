package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/trjgo/trj/internal/runs"
)

// runKeys are the CSV header settings of "trj sample" that identify its
// run: files of one run's shards agree on all of them.
var runKeys = []string{"model", "data_file", "method", "algorithm", "num_samples", "num_warmup", "num_chains",
	"seed", "metric", "delta", "smc_move"}

// checkShardFiles checks CSV files given to "trj summary" when any of them
// was written by a shard ("trj sample -shard") or carries a run's
// fingerprint (trj select, trj.Run's output folder): they must come from
// one run (the same fingerprint, and the same runKeys for shards) and hold
// different chains. It returns a note naming the run's chains that are
// absent, which is allowed (a summary of some chains) but worth saying.
func checkShardFiles(paths []string) (note string, err error) {
	headers := make([]map[string]string, len(paths))
	sharded, printed := false, false
	for i, p := range paths {
		if headers[i], err = runs.CSVSettings(p); err != nil {
			return "", err
		}
		_, ok := headers[i]["shard"]
		sharded = sharded || ok
		_, ok = headers[i][runs.FingerprintKey]
		printed = printed || ok
	}
	if !sharded && !printed {
		return "", nil
	}
	if printed {
		if err := sameFingerprint(paths, headers); err != nil {
			return "", err
		}
	}
	owner := map[string]string{}
	for i, h := range headers {
		for _, k := range runKeys {
			if sharded && h[k] != headers[0][k] {
				return "", fmt.Errorf("%s and %s are from different runs: %s %q vs %q", paths[0], paths[i], k, headers[0][k], h[k])
			}
		}
		id := h["chain_id"]
		if o, dup := owner[id]; dup && id != "" {
			return "", fmt.Errorf("chain %s is in both %s and %s", id, o, paths[i])
		}
		owner[id] = paths[i]
	}
	n, err := strconv.Atoi(headers[0]["num_chains"])
	if err != nil || n <= len(paths) {
		return "", nil
	}
	var missing []string
	for c := 1; c <= n; c++ {
		if _, ok := owner[strconv.Itoa(c)]; !ok {
			missing = append(missing, strconv.Itoa(c))
		}
	}
	return fmt.Sprintf("note: %d of the run's %d chains (missing: %s)", len(paths), n, strings.Join(missing, ", ")), nil
}

// sameFingerprint refuses files of different runs: every file must carry
// the first's fingerprint. The error names the files of each run.
func sameFingerprint(paths []string, headers []map[string]string) error {
	fp0 := headers[0][runs.FingerprintKey]
	var same, other []string
	otherFP := ""
	for i, h := range headers {
		if fp := h[runs.FingerprintKey]; fp == fp0 {
			same = append(same, paths[i])
		} else {
			other = append(other, paths[i])
			if otherFP == "" {
				otherFP = fp
			}
		}
	}
	if len(other) == 0 {
		return nil
	}
	name := func(fp string) string {
		if fp == "" {
			return "no fingerprint"
		}
		return "fingerprint " + fp
	}
	return fmt.Errorf("the files are of different runs: %s (%s) and %s (%s): summarise one run's files at a time",
		strings.Join(same, ", "), name(fp0), strings.Join(other, ", "), name(otherFP))
}
