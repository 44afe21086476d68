// Package pace says how soon a controller looks again at something that is
// not yet what it should be.
//
// Crossplane core requeues a composite after its pipeline's TTL and a
// managed resource after its poll interval. Both are minutes, right for a
// steady landscape and wrong for one converging: a stage that no watch wakes
// (a Shoot becoming ready in the garden, a kubeconfig Gardener issues, an
// agent's report in a pool cluster) would wait a whole interval, and a cloud
// has several such stages in a row. So while something is not ready, it is
// looked at soon after its state last changed, less often the longer nothing
// changes (a quarter of that time), and never less often than the steady
// interval: a composite refused or waiting for days costs what a ready one
// does, and one that just moved is looked at again within seconds.
package pace

import "time"

// Soonest is the shortest wait between two looks.
const Soonest = 2 * time.Second

// Next is how long to wait before looking again at something not ready
// whose state last changed since ago: a quarter of that time, at least
// Soonest, at most steady.
func Next(since, steady time.Duration) time.Duration {
	return max(min(since/4, steady), min(Soonest, steady))
}

// LastChange is the latest of created and the times given (conditions'
// lastTransitionTime); zero times are ignored.
func LastChange(created time.Time, transitions ...time.Time) time.Time {
	last := created
	for _, t := range transitions {
		if t.After(last) {
			last = t
		}
	}
	return last
}
