package runs

import (
	"fmt"
	"strconv"
	"strings"
)

// Part is one part of a merge as the merge rule sees it: the result of a
// shard of a run.
type Part struct {
	// Name names the part in errors ("part 2", a file name).
	Name string
	// Fingerprint is the run's fingerprint and Settings its settings as
	// Describe lists them (nil when unknown: the error then cannot name
	// the setting).
	Fingerprint string
	Settings    map[string]string
	// Chains are the indices of the run's chains the part holds.
	Chains []int
}

// CheckParts is the merge rule of both workflows: the parts must be
// shards of one run (one fingerprint; on a mismatch the error names the
// setting that differs, or the data when no setting does) holding every
// one of the run's numChains chains exactly once (numChains ≤ 0: the
// number is unknown and only repeats are refused). Chains are named from
// 1 in errors, as in the CSV files' chain_id.
func CheckParts(parts []Part, numChains int) error {
	if len(parts) == 0 {
		return fmt.Errorf("nothing to merge")
	}
	first := parts[0]
	owner := map[int]string{}
	for _, p := range parts {
		if p.Fingerprint == "" {
			return fmt.Errorf("%s has no fingerprint (written by an older version, or not a result): run that shard again", p.Name)
		}
		if p.Fingerprint != first.Fingerprint {
			return fmt.Errorf("%s is from a different run than %s: %s", p.Name, first.Name, differs(first, p))
		}
		for _, c := range p.Chains {
			if c < 0 || numChains > 0 && c >= numChains {
				return fmt.Errorf("%s holds chain %d, outside the run's %d chains", p.Name, c+1, numChains)
			}
			if o, dup := owner[c]; dup {
				return fmt.Errorf("chain %d is in both %s and %s: merge each shard once", c+1, o, p.Name)
			}
			owner[c] = p.Name
		}
	}
	var missing []string
	for c := range max(numChains, 0) {
		if _, ok := owner[c]; !ok {
			missing = append(missing, strconv.Itoa(c+1))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the run has %d chains; missing chain(s) %s: merge every shard", numChains, strings.Join(missing, ", "))
	}
	return nil
}

// differs names what differs between the runs of parts a and b, whose
// fingerprints differ.
func differs(a, b Part) string {
	if a.Settings == nil || b.Settings == nil {
		return fmt.Sprintf("models, data or settings differ (fingerprints %s and %s)", a.Fingerprint, b.Fingerprint)
	}
	if d := Differ(a.Settings, b.Settings); d != "" {
		return "the setting " + d
	}
	return fmt.Sprintf("the data (or the models) differ: every setting agrees, but not the models' values at fixed points (fingerprints %s and %s)", a.Fingerprint, b.Fingerprint)
}
