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
	opOf := func(t gardencorev1beta1.LastOperationType, s gardencorev1beta1.LastOperationState, progress int32) *gardencorev1beta1.LastOperation {
		return &gardencorev1beta1.LastOperation{Type: t, State: s, Progress: progress, Description: "flow failed"}
	}
	op := func(s gardencorev1beta1.LastOperationState, progress int32) *gardencorev1beta1.LastOperation {
		return opOf(gardencorev1beta1.LastOperationTypeReconcile, s, progress)
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
		"Creating": {
			reason: "A Shoot being created is not ready, whatever its conditions say; it reports its progress.",
			status: gardencorev1beta1.ShootStatus{LastOperation: opOf(gardencorev1beta1.LastOperationTypeCreate, gardencorev1beta1.LastOperationStateProcessing, 42), Conditions: healthy()},
			want:   Readiness{Message: "Shoot create processing (42%)"},
		},
		"Deleting": {
			reason: "A Shoot being deleted is not ready.",
			status: gardencorev1beta1.ShootStatus{LastOperation: opOf(gardencorev1beta1.LastOperationTypeDelete, gardencorev1beta1.LastOperationStateProcessing, 10), Conditions: healthy()},
			want:   Readiness{Message: "Shoot delete processing (10%)"},
		},
		"ReconcilingHealthy": {
			reason: "A healthy Shoot that Gardener reconciles (maintenance, a new worker count) stays ready, and is changing.",
			status: gardencorev1beta1.ShootStatus{LastOperation: op(gardencorev1beta1.LastOperationStateProcessing, 42), Conditions: healthy()},
			want:   Readiness{Ready: true, Changing: true, Message: "Shoot is ready; Gardener is applying a change: Shoot reconcile processing (42%)"},
		},
		"ReconcilingUnhealthy": {
			reason: "A reconcile of an unhealthy Shoot reports its progress.",
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
