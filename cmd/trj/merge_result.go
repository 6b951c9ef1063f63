package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/trjgo/trj"
)

// isTRJResult reports whether the JSON document b is a trj.Result (as
// Result.WriteJSON writes it, e.g. a shard of a program calling trj.Run
// with Settings.Chains.Shard) rather than a partial file of a trj command.
func isTRJResult(b []byte) bool {
	var head map[string]json.RawMessage
	if json.Unmarshal(b, &head) != nil {
		return false
	}
	_, format := head["format"]
	_, fp := head["fingerprint"]
	_, labels := head["labels"]   // a selection result has names instead
	_, old := head["Fingerprint"] // written before trj's keys were snake_case
	return (fp && labels || old) && !format
}

// mergeTRJResults merges shards of one trj.Run (trj.Merge, which refuses
// parts of different runs, overlapping chains and incomplete parts), after
// checking that the chains, taken together, are 1 … C without gaps. It
// prints the merged table, writes the running-estimate figure into dir
// and, when jsonPath is not "", the merged result.
func mergeTRJResults(paths []string, docs [][]byte, dir, jsonPath string, stdout, stderr io.Writer, quiet bool) error {
	parts := make([]*trj.Result, len(paths))
	owner := map[int]string{}
	for i, b := range docs {
		r, err := trj.ReadResult(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%s: %w", paths[i], err)
		}
		if r.Chains != nil {
			for _, c := range r.Chains.Chains {
				if o, dup := owner[c.Chain]; dup {
					return fmt.Errorf("chain %d is in both %s and %s", c.Chain+1, o, paths[i])
				}
				owner[c.Chain] = paths[i]
			}
		}
		parts[i] = r
	}
	var ids []int
	for c := range owner {
		ids = append(ids, c)
	}
	sort.Ints(ids)
	var missing []string
	next := 0
	for _, c := range ids {
		for ; next < c; next++ {
			missing = append(missing, fmt.Sprint(next+1))
		}
		next = c + 1
	}
	if len(missing) > 0 {
		return fmt.Errorf("chains %s are in none of the files (the last chain given is %d): a shard is missing", strings.Join(missing, ", "), next)
	}
	merged, err := trj.Merge(parts...)
	if err != nil {
		return err
	}
	if err := merged.WriteTable(stdout); err != nil {
		return err
	}
	var files []string
	if dir == "" {
		dir = filepath.Join("trj-out", "merged")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fig := filepath.Join(dir, "running.png")
	if err := merged.WriteRunningFigure(fig); err != nil {
		return err
	}
	files = append(files, fig)
	if jsonPath != "" {
		f, err := os.Create(jsonPath)
		if err != nil {
			return err
		}
		err = merged.WriteJSON(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", jsonPath, err)
		}
		files = append(files, jsonPath)
	}
	if !quiet {
		fmt.Fprintf(stderr, "merged %d chains from %d files; wrote %s\n", len(ids), len(paths), strings.Join(files, ", "))
	}
	return nil
}
