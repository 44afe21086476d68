package providerconfig

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
)

// observing is a kind's external client whose Observe answers as told.
type observing struct {
	managed.TypedExternalClient[*keystonev1alpha1.Project]
	exists bool
	err    error
}

func (o observing) Observe(context.Context, *keystonev1alpha1.Project) (managed.ExternalObservation, error) {
	return managed.ExternalObservation{ResourceExists: o.exists}, o.err
}

// Every kind a Connector connects finishes a deletion on the pass that
// finds its object gone once its Delete succeeded; an object found, or an
// Observe that failed, keeps the record of the create.
func TestConnectorConfirmsADeletion(t *testing.T) {
	cases := map[string]struct {
		observed  observing
		confirmed bool
	}{
		"the object is gone":  {observed: observing{}, confirmed: true},
		"the object is there": {observed: observing{exists: true}},
		"Observe failed":      {observed: observing{err: errors.New("no answer")}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := Connector[*keystonev1alpha1.Project, struct{}]{
				Client:   func(context.Context, resource.LegacyManaged) (struct{}, error) { return struct{}{}, nil },
				External: func(struct{}) managed.TypedExternalClient[*keystonev1alpha1.Project] { return tc.observed },
			}
			p := &keystonev1alpha1.Project{}
			meta.SetExternalName(p, "5")
			meta.SetExternalCreateSucceeded(p, time.Now())
			now := metav1.Now()
			p.SetDeletionTimestamp(&now)
			p.SetConditions(xpv2.Deleting(), xpv2.ReconcileSuccess())
			e, err := c.Connect(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = e.Observe(context.Background(), p)
			if waits := meta.ExternalCreateSucceededDuring(p, time.Minute); waits == tc.confirmed {
				t.Errorf("the create's record kept: %v, want %v", waits, !tc.confirmed)
			}
		})
	}
}
