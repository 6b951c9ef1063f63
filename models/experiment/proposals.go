package experiment

import (
	"fmt"
	"slices"
)

// CheckProposals reports a proposal type in list that is not in known, or
// one listed twice, with name (the experiment's package) prefixing the
// message. An empty list passes: the experiments report that case
// themselves, first.
func CheckProposals(name string, list, known []string) error {
	seen := map[string]bool{}
	for _, p := range list {
		if !slices.Contains(known, p) {
			return fmt.Errorf("%s: unknown proposal type %q (want one of %v)", name, p, known)
		}
		if seen[p] {
			return fmt.Errorf("%s: proposal type %q listed twice", name, p)
		}
		seen[p] = true
	}
	return nil
}
