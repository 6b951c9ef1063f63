package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/trjgo/trj/internal/runs"
	"github.com/trjgo/trj/shard"
)

// partialFormat identifies the layout of partial result files.
const partialFormat = "trj-partial/1"

// partialFile is what a shard of a run writes: which part of which run it
// holds, and its part of the result (Payload, whose layout depends on
// Kind). trj merge combines the files of every shard of one run.
type partialFile struct {
	// Format is partialFormat.
	Format string `json:"format"`
	// Kind names the run: "study factor", "run sas", … It selects the
	// merger and the payload's layout.
	Kind string `json:"kind"`
	// Fingerprint is a digest of Kind and Settings: shards merge only
	// when their fingerprints agree.
	Fingerprint string `json:"fingerprint"`
	// Settings is everything that determines the run's result (seed,
	// sizes, model, a digest of the data).
	Settings map[string]any `json:"settings"`
	// Shard is the shard's "i/n"; Items the 1-based items (chains, pairs,
	// replicates) of the whole run it computed, out of Total.
	Shard string `json:"shard"`
	Items []int  `json:"items"`
	Total int    `json:"total"`
	// Build is the VCS revision of the binary that wrote the file, when
	// known; shards from different builds are merged with a warning.
	Build string `json:"build,omitempty"`
	// Seconds is the shard's wall time.
	Seconds float64 `json:"seconds"`
	// Payload is the shard's part of the result.
	Payload json.RawMessage `json:"payload"`
	// Incomplete marks the file of a shard stopped before its end (Stopped
	// says why): it keeps the stages that finished, for inspection, and
	// trj merge refuses it.
	Incomplete bool   `json:"incomplete,omitempty"`
	Stopped    string `json:"stopped,omitempty"`
}

// fingerprint digests kind and settings (as canonical JSON: object keys
// sorted) into 16 hexadecimal digits.
func fingerprint(kind string, settings map[string]any) (string, error) {
	b, err := json.Marshal(map[string]any{"kind": kind, "settings": settings})
	if err != nil {
		return "", fmt.Errorf("fingerprint: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}

// buildRevision returns the VCS revision the binary was built from
// (marked "+modified" for a dirty tree), or "".
func buildRevision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+modified"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}

// newPartial returns the partial file of shard sh, which computed items of
// total, with payload encoded as JSON.
func newPartial(kind string, settings map[string]any, sh shard.Shard, items []int, total int, seconds float64, payload any) (*partialFile, error) {
	// Round-trip the settings through JSON so that the file's fingerprint
	// is the one a reader recomputes.
	b, err := json.Marshal(settings)
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	var canon map[string]any
	if err := json.Unmarshal(b, &canon); err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	fp, err := fingerprint(kind, canon)
	if err != nil {
		return nil, err
	}
	pb, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("encoding the result: %w", err)
	}
	return &partialFile{
		Format: partialFormat, Kind: kind, Fingerprint: fp, Settings: canon,
		Shard: sh.String(), Items: items, Total: total, Build: buildRevision(),
		Seconds: seconds, Payload: pb,
	}, nil
}

// writePartial writes the partial file of shard sh (see newPartial) as
// indented JSON to path, creating its folder, and returns it.
func writePartial(path, kind string, settings map[string]any, sh shard.Shard, items []int, total int, seconds float64, payload any) (*partialFile, error) {
	p, err := newPartial(kind, settings, sh, items, total, seconds, payload)
	if err != nil {
		return nil, err
	}
	return p, savePartial(path, p)
}

// savePartial writes the partial file p as indented JSON to path,
// creating its folder.
func savePartial(path string, p *partialFile) error {
	b, err := json.MarshalIndent(p, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// readPartial reads a partial file and checks that it is one and that its
// fingerprint matches its settings.
func readPartial(path string) (*partialFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p partialFile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: not a partial result file: %w", path, err)
	}
	if p.Format != partialFormat {
		return nil, fmt.Errorf("%s: format %q, want %q (a file written by a trj shard)", path, p.Format, partialFormat)
	}
	fp, err := fingerprint(p.Kind, p.Settings)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if fp != p.Fingerprint {
		return nil, fmt.Errorf("%s: fingerprint %s does not match its settings (%s): the file was edited", path, p.Fingerprint, fp)
	}
	return &p, nil
}

// checkShards verifies that the partial files belong to one run (same
// kind, fingerprint and total) and that their items cover 1 … Total exactly
// once. It names the first differing setting of a mismatched file, and the
// missing or repeated items. It returns warnings that do not stop a merge
// (different builds).
func checkShards(paths []string, parts []*partialFile) (warnings []string, err error) {
	if len(parts) == 0 {
		return nil, errors.New("no partial result files given")
	}
	p0 := parts[0]
	owner := make([]int, p0.Total) // 1 + index into parts of the file holding each item
	for i, p := range parts {
		switch {
		case p.Incomplete:
			return nil, fmt.Errorf("%s is the partial file of shard %s, stopped before its end (%s); run that shard again", paths[i], p.Shard, p.Stopped)
		case p.Kind != p0.Kind:
			return nil, fmt.Errorf("%s is a shard of %q, %s of %q", paths[i], p.Kind, paths[0], p0.Kind)
		case p.Fingerprint != p0.Fingerprint:
			return nil, fmt.Errorf("%s and %s are shards of different runs (fingerprints %s, %s): %s",
				paths[0], paths[i], p0.Fingerprint, p.Fingerprint, settingsDiff(p0.Settings, p.Settings))
		case p.Total != p0.Total:
			return nil, fmt.Errorf("%s splits %d items, %s %d", paths[i], p.Total, paths[0], p0.Total)
		}
		if p.Build != p0.Build && len(warnings) == 0 {
			warnings = append(warnings, fmt.Sprintf("%s and %s were written by different builds (%s, %s); their results may differ in rounding",
				paths[0], paths[i], orUnknown(p0.Build), orUnknown(p.Build)))
		}
		for _, it := range p.Items {
			if it < 1 || it > p.Total {
				return nil, fmt.Errorf("%s holds item %d of %d", paths[i], it, p.Total)
			}
			if o := owner[it-1]; o != 0 {
				return nil, fmt.Errorf("item %d is in both %s and %s", it, paths[o-1], paths[i])
			}
			owner[it-1] = i + 1
		}
	}
	var missing []string
	for it, o := range owner {
		if o == 0 {
			missing = append(missing, fmt.Sprint(it+1))
		}
	}
	if len(missing) > 0 {
		return warnings, fmt.Errorf("items %s of %d are in none of the files: a shard is missing", strings.Join(missing, ", "), p0.Total)
	}
	return warnings, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// settingsDiff names the settings in which a and b differ.
func settingsDiff(a, b map[string]any) string {
	var diffs []string
	for _, k := range runs.KeysOfBoth(a, b) {
		va, oka := a[k]
		vb, okb := b[k]
		if oka && okb && reflect.DeepEqual(va, vb) {
			continue
		}
		diffs = append(diffs, fmt.Sprintf("%s %s vs %s", k, showSetting(va, oka), showSetting(vb, okb)))
	}
	if len(diffs) == 0 {
		return "their settings are equal but their kinds differ"
	}
	return "settings differ: " + strings.Join(diffs, "; ")
}

func showSetting(v any, ok bool) string {
	if !ok {
		return "(unset)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
