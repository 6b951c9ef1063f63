package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// runKeys are the CSV header settings of "trj sample" that identify its
// run: files of one run's shards agree on all of them.
var runKeys = []string{"model", "data_file", "method", "algorithm", "num_samples", "num_warmup", "num_chains",
	"seed", "metric", "delta", "smc_move"}

// csvHeader returns the "# key = value" settings at the top of a CSV file,
// before its column header.
func csvHeader(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") {
			break
		}
		if k, v, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), " = "); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out, sc.Err()
}

// checkShardFiles checks CSV files given to "trj summary" when any of them
// was written by a shard ("trj sample -shard"): they must come from one
// run (the same runKeys) and hold different chains. It returns a note
// naming the run's chains that are absent, which is allowed (a summary of
// some chains) but worth saying.
func checkShardFiles(paths []string) (note string, err error) {
	headers := make([]map[string]string, len(paths))
	sharded := false
	for i, p := range paths {
		if headers[i], err = csvHeader(p); err != nil {
			return "", err
		}
		_, ok := headers[i]["shard"]
		sharded = sharded || ok
	}
	if !sharded {
		return "", nil
	}
	owner := map[string]string{}
	for i, h := range headers {
		for _, k := range runKeys {
			if h[k] != headers[0][k] {
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
