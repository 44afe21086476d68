package gardener

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
)

func healthy() []gardencorev1beta1.Condition {
	cs := []gardencorev1beta1.Condition{}
	for _, t := range readyConditions {
		cs = append(cs, gardencorev1beta1.Condition{Type: t, Status: gardencorev1beta1.ConditionTrue})
	}
	return cs
}

func TestReadinessOf(t *testing.T) {
	op := func(s gardencorev1beta1.LastOperationState, progress int32) *gardencorev1beta1.LastOperation {
		return &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeReconcile, State: s, Progress: progress, Description: "flow failed"}
	}
	cases := map[string]struct {
		reason string
		status gardencorev1beta1.ShootStatus
		want   Readiness
	}{
		"NotStarted": {
			reason: "A Shoot Gardener has not touched yet waits.",
			want:   Readiness{Message: "Gardener has not started to reconcile the Shoot"},
		},
		"Processing": {
			reason: "A running operation reports its progress.",
			status: gardencorev1beta1.ShootStatus{LastOperation: op(gardencorev1beta1.LastOperationStateProcessing, 42)},
			want:   Readiness{Message: "Shoot reconcile processing (42%)"},
		},
		"SucceededButUnhealthy": {
			reason: "A finished operation is not enough: every health condition must be True.",
			status: gardencorev1beta1.ShootStatus{
				LastOperation: op(gardencorev1beta1.LastOperationStateSucceeded, 100),
				Conditions:    append(healthy()[:2], gardencorev1beta1.Condition{Type: gardencorev1beta1.ShootEveryNodeReady, Status: gardencorev1beta1.ConditionFalse}),
			},
			want: Readiness{Message: "Shoot condition EveryNodeReady is not True"},
		},
		"Ready": {
			reason: "A succeeded operation with every condition True is ready.",
			status: gardencorev1beta1.ShootStatus{LastOperation: op(gardencorev1beta1.LastOperationStateSucceeded, 100), Conditions: healthy()},
			want:   Readiness{Ready: true, Message: "Shoot is ready"},
		},
		"Failed": {
			reason: "A failed operation is reported with Gardener's errors.",
			status: gardencorev1beta1.ShootStatus{
				LastOperation: op(gardencorev1beta1.LastOperationStateFailed, 10),
				LastErrors:    []gardencorev1beta1.LastError{{Description: "quota exceeded"}},
			},
			want: Readiness{Failed: true, Message: "Shoot reconcile failed: flow failed; quota exceeded"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ReadinessOf(&gardencorev1beta1.Shoot{Status: tc.status})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nReadinessOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
