package gardener

import (
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"

	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
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

// TestNewShootName: Gardener admits a Shoot only when its name and its
// project's name have at most 21 characters together, and deletes it only
// with the confirmation annotation; NewShoot refuses the first before
// Gardener does and sets the second.
func TestNewShootName(t *testing.T) {
	s := &input.ShootSettings{ProjectNamespace: "garden-c5c3"}
	s.Default()
	cases := map[string]struct {
		name    string
		wantErr string
	}{
		"17 characters beside project c5c3": {name: "hv-pool-seventeen"},
		"18 characters": {name: "hv-pool-eighteen-x",
			wantErr: `the name "hv-pool-eighteen-x" (the claim's metadata.name) names a Shoot of Gardener project "c5c3", and Gardener allows project and Shoot names of at most 21 characters together: use a name of at most 17 characters`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			shoot, err := NewShoot(s, Cluster{Name: tc.name, Region: "eu-de-1"})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("NewShoot(%q) error = %v, want %q", tc.name, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := shoot.Annotations[AnnotationConfirmDeletion]; got != "true" {
				t.Errorf("annotation %s = %q, want \"true\"", AnnotationConfirmDeletion, got)
			}
		})
	}
}
