package runs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// FingerprintKey is the CSV header setting ("# fingerprint = …") that
// carries the fingerprint of the run that wrote a chain file.
const FingerprintKey = "fingerprint"

// ClaimDir is the output-folder rule of both workflows: a run never mixes
// its files with another run's. It makes dir and checks it writable
// (CheckDir), then refuses, before any work, when dir holds chain files
// (names matching chainFile) of another run: files whose fingerprint is
// not fp, or that carry none. Such files are finished work of another run,
// so they are neither removed nor overwritten; the error names them.
// Files of the same run (the other shards of a run writing into one
// folder, or this shard's own from an earlier try, which it rewrites) are
// allowed.
func ClaimDir(dir string, chainFile *regexp.Regexp, fp string) error {
	if err := CheckDir(dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	var others []string
	other := ""
	for _, e := range entries {
		if e.IsDir() || !chainFile.MatchString(e.Name()) {
			continue
		}
		h, err := CSVSettings(filepath.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("output folder %s: %w", dir, err)
		}
		if got := h[FingerprintKey]; got != fp {
			others = append(others, e.Name())
			if other == "" {
				other = got
			}
		}
	}
	if len(others) == 0 {
		return nil
	}
	of := "without a fingerprint"
	if other != "" {
		of = "fingerprint " + other
	}
	return fmt.Errorf("output folder %s holds chain files of another run (%s; %s, this run's %s): move or remove them, or write to another folder",
		dir, strings.Join(others, ", "), of, fp)
}

// CSVSettings returns the "# key = value" settings at the top of a CSV
// file, before its column header.
func CSVSettings(path string) (map[string]string, error) {
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
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
