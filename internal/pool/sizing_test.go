package pool

import (
	"testing"

	ironcorev1alpha1 "github.com/c5c3/consumer-plane/apis/ironcore/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/gardener"
)

func TestSize(t *testing.T) {
	const ti = 1 << 10 // GiB
	servers := func(usable int32, smallestTi int64) ironcorev1alpha1.ServerInventoryObservation {
		return ironcorev1alpha1.ServerInventoryObservation{Servers: usable, Usable: usable, SmallestDiskGiB: smallestTi * ti}
	}
	cases := map[string]struct {
		reason                  string
		askedTi                 int64
		count                   ironcorev1alpha1.ServerInventoryObservation
		minimum, maximum        int32
		wantReason              string
		wantNeeded, wantMinimum int32
		wantMessage             string
	}{
		"HeldBySpecWorkers": {
			reason:  "Five servers of 100Ti hold 500Ti: spec.workers stays the minimum.",
			askedTi: 500, count: servers(32, 100), minimum: 5, maximum: 30,
			wantReason: ReasonSized, wantNeeded: 5, wantMinimum: 5,
			wantMessage: "500Ti of raw capacity takes 5 nodes of 100Ti of drives (the smallest of the 32 usable servers): spec.workers 5 hold it",
		},
		"Raised": {
			reason:  "700Ti takes 59 nodes of 12Ti (rounded up): the Shoot's minimum rises from spec.workers to them.",
			askedTi: 700, count: servers(64, 12), minimum: 20, maximum: 60,
			wantReason: ReasonSized, wantNeeded: 59, wantMinimum: 59,
			wantMessage: "700Ti of raw capacity takes 59 nodes of 12Ti of drives (the smallest of the 64 usable servers): the pool's Shoot keeps at least 59 workers (spec.workers 20)",
		},
		"MaxWorkersTooLow": {
			reason:  "The pool grows to spec.maxWorkers and says how far that reaches.",
			askedTi: 700, count: servers(64, 12), minimum: 20, maximum: 40,
			wantReason: ReasonMaxWorkersTooLow, wantNeeded: 59, wantMinimum: 40,
			wantMessage: "700Ti of raw capacity takes 59 nodes of 12Ti of drives (the smallest of the 64 usable servers), more than spec.maxWorkers 40: the pool holds at least 480Ti; raise spec.maxWorkers or lower spec.capacity",
		},
		"ServersTooFew": {
			reason:  "The inventory is the limit: the pool takes every usable server and says what is missing.",
			askedTi: 700, count: servers(32, 12), minimum: 20, maximum: 60,
			wantReason: ReasonServersTooFew, wantNeeded: 59, wantMinimum: 32,
			wantMessage: "700Ti of raw capacity takes 59 nodes of 12Ti of drives (the smallest of the 32 usable servers), and the IronCore inventory has 32 usable servers: the pool holds at least 384Ti on them; add servers with the pool's labels or lower spec.capacity",
		},
		"NeverBelowSpecWorkers": {
			reason:  "spec.workers above what the inventory has stays: the inventory's own verdict says it is short.",
			askedTi: 700, count: servers(10, 12), minimum: 20, maximum: 60,
			wantReason: ReasonServersTooFew, wantNeeded: 59, wantMinimum: 20,
			wantMessage: "700Ti of raw capacity takes 59 nodes of 12Ti of drives (the smallest of the 10 usable servers), and the IronCore inventory has 10 usable servers: the pool holds at least 120Ti on them; add servers with the pool's labels or lower spec.capacity",
		},
		"DrivesUnknown": {
			reason:  "A usable server without drives reported: nothing is sized, the minimum stays.",
			askedTi: 700, count: servers(32, 0), minimum: 20, maximum: 60,
			wantReason: ReasonDrivesUnknown, wantMinimum: 20,
			wantMessage: "700Ti of raw capacity cannot be sized yet: a usable server of the pool reports no drives (the metal-operator discovers them); the pool keeps spec.workers 20",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := &gardener.Worker{Minimum: tc.minimum, Maximum: tc.maximum}
			s := size(tc.askedTi*ti, tc.count, w)
			if s.Reason != tc.wantReason || s.Needed != tc.wantNeeded || s.Minimum != tc.wantMinimum || w.Minimum != tc.wantMinimum {
				t.Errorf("%s\nsize(...) = reason %s, needed %d, minimum %d (worker %d); want %s, %d, %d", tc.reason, s.Reason, s.Needed, s.Minimum, w.Minimum, tc.wantReason, tc.wantNeeded, tc.wantMinimum)
			}
			if s.Message != tc.wantMessage {
				t.Errorf("%s\nmessage:\n got %q\nwant %q", tc.reason, s.Message, tc.wantMessage)
			}
			if w.Maximum != tc.maximum {
				t.Errorf("size changed the worker's maximum to %d", w.Maximum)
			}
		})
	}
}
