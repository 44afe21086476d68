// Package viewtest waits on the provider's views (pcontroller.View): the
// managed resources that only observe another cluster (the inventories, the
// storage report), as their integration tests do against a real API server.
package viewtest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/test/kubetest"
)

// Conditioned is a managed resource: an object with Crossplane's
// conditions.
type Conditioned interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
}

// UntilObserved waits until the cluster-scoped managed resource name
// (read into newM's object) is Ready and at (its status.atProvider) equals
// want, failing the test with what differs after timeout: the inventories
// and reports that only observe another cluster.
func UntilObserved[M Conditioned, O any](ctx context.Context, t testing.TB, kube client.Client, name string, timeout time.Duration, newM func() M, at func(M) O, want O) {
	t.Helper()
	kubetest.Until(t, name+" to observe what is wanted", timeout, func() error {
		got := newM()
		if err := kube.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			return err
		}
		if c := got.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
			return fmt.Errorf("not Ready: %s; Synced: %s", c.Message, got.GetCondition(xpv2.TypeSynced).Message)
		}
		if diff := cmp.Diff(want, at(got)); diff != "" {
			return errors.New("observation (-want +got):\n" + diff)
		}
		return nil
	})
}
