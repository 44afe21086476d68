package integration

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	novav1alpha1 "github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/controller/nova/aggregate"
)

// TestIntegrationAggregateHosts keeps a Nova aggregate's hosts as the spec
// names them, against the local Nova's fake compute hosts: hosts added, a
// host removed by hand added back, and a host the spec no longer names kept
// (and said so) while it runs an instance of the aggregate's tenant, then
// removed once the instance is gone.
func TestIntegrationAggregateHosts(t *testing.T) {
	h := withOpenStack(t)
	ctx := context.Background()
	nova := h.clients(t).nova
	name, project := h.name("hosts"), h.name("tenant-project")
	mg := &novav1alpha1.Aggregate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: novav1alpha1.AggregateSpec{
		ClusterManagedResourceSpec: managedBy(pcLocal),
		ForProvider:                novav1alpha1.AggregateParameters{Name: name, Hosts: []string{"hv-1"}, FilterTenantIDs: []string{project}},
	}}
	h.create(t, mg)
	t.Cleanup(func() { _ = h.kube.Delete(ctx, mg) })
	hostsAre := func(want ...string) func() (bool, string) {
		return func() (bool, string) {
			_ = h.kube.Get(ctx, client.ObjectKeyFromObject(mg), mg)
			id := meta.GetExternalName(mg)
			if id == "" {
				return false, "not created yet"
			}
			a, err := nova.FindAggregate(ctx, name)
			if err != nil || a == nil {
				return false, fmt.Sprintf("aggregate %s: %v", name, err)
			}
			got := slices.Sorted(slices.Values(a.Hosts))
			return slices.Equal(got, want), fmt.Sprintf("Nova's hosts %v", got)
		}
	}
	eventually(t, "the aggregate holds hv-1", hostsAre("hv-1"))
	h.waitReady(t, mg)

	t.Run("hosts the spec adds are added", func(t *testing.T) {
		h.update(t, mg, func() { mg.Spec.ForProvider.Hosts = []string{"hv-1", "hv-2"} })
		eventually(t, "the aggregate holds hv-1 and hv-2", hostsAre("hv-1", "hv-2"))
	})

	t.Run("a host that is not a compute host yet waits, and the others are added", func(t *testing.T) {
		h.update(t, mg, func() { mg.Spec.ForProvider.Hosts = []string{"hv-1", "hv-2", name + "-not-registered"} })
		eventually(t, "HostsRegistered names the host Nova does not know", func() (bool, string) {
			_ = h.kube.Get(ctx, client.ObjectKeyFromObject(mg), mg)
			c := mg.GetCondition(aggregate.ConditionHostsRegistered)
			return c.Status == corev1.ConditionFalse && c.Reason == aggregate.ReasonNotRegistered && strings.Contains(c.Message, name+"-not-registered"),
				fmt.Sprintf("HostsRegistered %s %s: %s", c.Status, c.Reason, c.Message)
		})
		if ok, why := hostsAre("hv-1", "hv-2")(); !ok {
			t.Fatalf("the registered hosts: %s", why)
		}
		if c := mg.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
			t.Errorf("an aggregate waiting for a host to register is Ready %s: %s", c.Status, c.Message)
		}
		h.update(t, mg, func() { mg.Spec.ForProvider.Hosts = []string{"hv-1", "hv-2"} })
		eventually(t, "HostsRegistered True once every host is in", func() (bool, string) {
			_ = h.kube.Get(ctx, client.ObjectKeyFromObject(mg), mg)
			c := mg.GetCondition(aggregate.ConditionHostsRegistered)
			return c.Status == corev1.ConditionTrue, fmt.Sprintf("HostsRegistered %s %s: %s", c.Status, c.Reason, c.Message)
		})
	})

	t.Run("a host removed by hand comes back", func(t *testing.T) {
		a, err := nova.FindAggregate(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := nova.RemoveAggregateHost(ctx, a.ID, "hv-2"); err != nil {
			t.Fatal(err)
		}
		// The provider polls; a changed spec makes it look at once.
		h.update(t, mg, func() { mg.Spec.ForProvider.Metadata = map[string]string{"drift": "seen"} })
		eventually(t, "hv-2 back in the aggregate", hostsAre("hv-1", "hv-2"))
	})

	t.Run("a host that runs the tenant's instances stays until they are gone", func(t *testing.T) {
		vm := fakeInstance(t, "hv-1", project, name+"-vm")
		other := fakeInstance(t, "hv-2", h.name("another-project"), name+"-not-its")
		h.update(t, mg, func() { mg.Spec.ForProvider.Hosts = []string{"hv-2"} })
		eventually(t, "HostsReleased says hv-1 waits for its instance", func() (bool, string) {
			_ = h.kube.Get(ctx, client.ObjectKeyFromObject(mg), mg)
			c := mg.GetCondition(aggregate.ConditionHostsReleased)
			return c.Status == corev1.ConditionFalse && c.Reason == aggregate.ReasonInstancesRunning && strings.Contains(c.Message, "hv-1 (1 instance(s) of its tenants: "+name+"-vm"),
				fmt.Sprintf("HostsReleased %s %s: %s", c.Status, c.Reason, c.Message)
		})
		if ok, why := hostsAre("hv-1", "hv-2")(); !ok {
			t.Fatalf("a host running the tenant's instance left the aggregate: %s", why)
		}
		removeFakeInstance(t, vm)
		h.update(t, mg, func() { mg.Spec.ForProvider.Metadata = map[string]string{"drift": "instance gone"} })
		eventually(t, "hv-1 removed once its instance is gone", hostsAre("hv-2"))
		eventually(t, "HostsReleased is True", func() (bool, string) {
			_ = h.kube.Get(ctx, client.ObjectKeyFromObject(mg), mg)
			c := mg.GetCondition(aggregate.ConditionHostsReleased)
			return c.Status == corev1.ConditionTrue, fmt.Sprintf("HostsReleased %s: %s", c.Status, c.Message)
		})
		removeFakeInstance(t, other)
	})

	t.Run("deleting it removes its hosts and the aggregate", func(t *testing.T) {
		h.delete(t, mg)
		h.waitGone(t, mg)
		if a, err := nova.FindAggregate(ctx, name); err != nil || a != nil {
			t.Fatalf("the aggregate is left in Nova: %v, %v", a, err)
		}
	})
}

// fakeInstance adds an instance of project on a fake compute host of the
// local Nova (local/openstack/fake-instance.py) and returns its UUID.
func fakeInstance(t *testing.T, host, project, name string) string {
	t.Helper()
	out, err := exec.Command("/usr/bin/python3", "../../local/openstack/fake-instance.py", "add", host, project, name).CombinedOutput()
	if err != nil {
		t.Fatalf("fake instance on %s: %v: %s", host, err, out)
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		_ = exec.Command("/usr/bin/python3", "../../local/openstack/fake-instance.py", "remove", id).Run()
	})
	return id
}

func removeFakeInstance(t *testing.T, id string) {
	t.Helper()
	if out, err := exec.Command("/usr/bin/python3", "../../local/openstack/fake-instance.py", "remove", id).CombinedOutput(); err != nil {
		t.Fatalf("removing fake instance %s: %v: %s", id, err, out)
	}
}
