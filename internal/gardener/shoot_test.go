package gardener

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

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
// with the confirmation annotation. A name is the user's: NewShoot derives a
// Shoot name that fits from any longer one, stable and distinct, and sets the
// annotation.
func TestNewShootName(t *testing.T) {
	s := &input.ShootSettings{ProjectNamespace: "garden-c5c3"}
	s.Default()
	cases := map[string]struct {
		reason    string
		name      string
		shootName string
		want      string
	}{
		"FitsAsItIs": {
			reason: "17 characters beside project c5c3 name the Shoot themselves",
			name:   "hv-pool-seventeen", want: "hv-pool-seventeen"},
		"DocsPool": {
			reason: "the C5C3 docs' 18-character pool gets a name that fits, ending in its hash",
			name:   "hv-pool-compliance", want: "hv-pool-com-" + hash5("hv-pool-compliance")},
		"DocsControlPlane": {
			reason: "the docs' 21-character control-plane cluster likewise; a cut that ends in a hyphen drops it",
			name:   "eu-de-1-control-plane", want: "eu-de-1-con-" + hash5("eu-de-1-control-plane")},
		"CutEndsInHyphen": {
			reason: "no Shoot name has two hyphens in a row where the cut fell on one",
			name:   "hv-pool-aa-bbbbbbbbb", want: "hv-pool-aa-" + hash5("hv-pool-aa-bbbbbbbbb")},
		"Longest": {
			reason: "the longest name the XRD admits fits too",
			name:   strings.Repeat("a", 40), want: "aaaaaaaaaaa-" + hash5(strings.Repeat("a", 40))},
		"ExistingShootKept": {
			reason: "a Shoot that exists keeps its name",
			name:   "hv-pool-compliance", shootName: "hv-pool-c-12345", want: "hv-pool-c-12345"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			shoot, err := NewShoot(s, Cluster{Name: tc.name, ShootName: tc.shootName, Region: "eu-de-1"})
			if err != nil {
				t.Fatal(err)
			}
			if shoot.Name != tc.want {
				t.Errorf("%s\nNewShoot(%q).Name = %q, want %q", tc.reason, tc.name, shoot.Name, tc.want)
			}
			if n := len("c5c3") + len(shoot.Name); n > maxProjectAndShootName {
				t.Errorf("%s\nproject and Shoot name have %d characters, Gardener allows %d", tc.reason, n, maxProjectAndShootName)
			}
			if errs := validation.IsDNS1123Label(shoot.Name); len(errs) > 0 {
				t.Errorf("%s\nShoot name %q: %v", tc.reason, shoot.Name, errs)
			}
			if got := shoot.Annotations[AnnotationConfirmDeletion]; got != "true" {
				t.Errorf("annotation %s = %q, want \"true\"", AnnotationConfirmDeletion, got)
			}
		})
	}
}

// TestShootNameDistinct: long names that share their beginning name
// different Shoots, and a name always names the same one.
func TestShootNameDistinct(t *testing.T) {
	seen := map[string]string{}
	for i := range 1000 {
		name := fmt.Sprintf("hv-pool-compliance-%03d", i)
		got := ShootName("garden-c5c3", name)
		if other, ok := seen[got]; ok {
			t.Fatalf("%q and %q both name Shoot %q", other, name, got)
		}
		seen[got] = name
		if again := ShootName("garden-c5c3", name); again != got {
			t.Fatalf("ShootName(%q) = %q, then %q", name, got, again)
		}
	}
}

func hash5(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])[:5]
}
