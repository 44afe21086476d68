package controller

import "slices"

// SetDiff returns what to add to observed and what to remove from it so it
// holds the same strings as desired (hosts, project grants).
func SetDiff(desired, observed []string) (add, remove []string) {
	for _, s := range desired {
		if !slices.Contains(observed, s) {
			add = append(add, s)
		}
	}
	for _, s := range observed {
		if !slices.Contains(desired, s) {
			remove = append(remove, s)
		}
	}
	return add, remove
}
