package integration

import (
	"context"
	"strconv"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumetypes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/aggregates"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/domains"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cinderv1alpha1 "github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	novav1alpha1 "github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
)

// A kindCase is what the lifecycle test needs to know of one kind: how to
// declare it, and how to read, change and remove its object in the cloud
// directly. Each kind's test changes one field (its "value").
type kindCase struct {
	kind      string
	newMR     func(name, value string) resource.Managed
	setValue  func(mg resource.Managed, value string)
	observe   func(ctx context.Context, c clients, id string) (exists bool, value string, err error)
	drift     func(ctx context.Context, c clients, id, value string) error
	outOfBand func(ctx context.Context, c clients, name string) (id string, err error)
	remove    func(ctx context.Context, c clients, id string) error
	count     func(ctx context.Context, c clients, name string) (int, error)
}

// clients reach the cloud behind the provider's back.
type clients struct {
	keystone openstack.Identity
	nova     openstack.Compute
	cinder   openstack.BlockStorage
}

func (h *harness) clients(t *testing.T) clients {
	t.Helper()
	k, err := openstack.NewIdentity(h.cloud)
	if err != nil {
		t.Fatal(err)
	}
	n, err := openstack.NewCompute(h.cloud)
	if err != nil {
		t.Fatal(err)
	}
	c, err := openstack.NewBlockStorage(h.cloud)
	if err != nil {
		t.Fatal(err)
	}
	return clients{keystone: k, nova: n, cinder: c}
}

func ref(name string) *xpv2.Reference { return &xpv2.Reference{Name: name} }

func managedBy(pc string) xpv2.ClusterManagedResourceSpec {
	return xpv2.ClusterManagedResourceSpec{ProviderConfigReference: ref(pc)}
}

func notFoundIsAbsent(err error) (bool, string, error) {
	if openstack.IsNotFound(err) {
		return false, "", nil
	}
	return false, "", err
}

var kinds = []kindCase{
	{
		kind: "keystone/Project",
		newMR: func(name, value string) resource.Managed {
			return &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: keystonev1alpha1.ProjectSpec{
				ClusterManagedResourceSpec: managedBy(pcLocal),
				ForProvider:                keystonev1alpha1.ProjectParameters{Name: name, Description: value, Tags: []string{"cobaltcore-test"}},
			}}
		},
		setValue: func(mg resource.Managed, v string) { mg.(*keystonev1alpha1.Project).Spec.ForProvider.Description = v },
		observe: func(ctx context.Context, c clients, id string) (bool, string, error) {
			p, err := c.keystone.GetProject(ctx, id)
			if err != nil {
				return notFoundIsAbsent(err)
			}
			return true, p.Description, nil
		},
		drift: func(ctx context.Context, c clients, id, v string) error {
			_, err := c.keystone.UpdateProject(ctx, id, projects.UpdateOpts{Description: &v})
			return err
		},
		outOfBand: func(ctx context.Context, c clients, name string) (string, error) {
			p, err := c.keystone.CreateProject(ctx, projects.CreateOpts{Name: name, DomainID: "default", Description: "made by hand"})
			if err != nil {
				return "", err
			}
			return p.ID, nil
		},
		remove: func(ctx context.Context, c clients, id string) error { return c.keystone.DeleteProject(ctx, id) },
		count: func(ctx context.Context, c clients, name string) (int, error) {
			p, err := c.keystone.FindProject(ctx, "default", name)
			return boolCount(p != nil), err
		},
	},
	{
		kind: "keystone/Domain",
		newMR: func(name, value string) resource.Managed {
			return &keystonev1alpha1.Domain{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: keystonev1alpha1.DomainSpec{
				ClusterManagedResourceSpec: managedBy(pcLocal),
				ForProvider:                keystonev1alpha1.DomainParameters{Name: name, Description: value},
			}}
		},
		setValue: func(mg resource.Managed, v string) { mg.(*keystonev1alpha1.Domain).Spec.ForProvider.Description = v },
		observe: func(ctx context.Context, c clients, id string) (bool, string, error) {
			d, err := c.keystone.GetDomain(ctx, id)
			if err != nil {
				return notFoundIsAbsent(err)
			}
			return true, d.Description, nil
		},
		drift: func(ctx context.Context, c clients, id, v string) error {
			_, err := c.keystone.UpdateDomain(ctx, id, domains.UpdateOpts{Description: &v})
			return err
		},
		outOfBand: func(ctx context.Context, c clients, name string) (string, error) {
			d, err := c.keystone.CreateDomain(ctx, domains.CreateOpts{Name: name})
			if err != nil {
				return "", err
			}
			return d.ID, nil
		},
		remove: func(ctx context.Context, c clients, id string) error {
			disabled := false
			if _, err := c.keystone.UpdateDomain(ctx, id, domains.UpdateOpts{Enabled: &disabled}); err != nil {
				return err
			}
			return c.keystone.DeleteDomain(ctx, id)
		},
		count: func(ctx context.Context, c clients, name string) (int, error) {
			d, err := c.keystone.FindDomain(ctx, name)
			return boolCount(d != nil), err
		},
	},
	{
		kind: "keystone/User",
		newMR: func(name, value string) resource.Managed {
			return &keystonev1alpha1.User{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: keystonev1alpha1.UserSpec{
				ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{
					ProviderConfigReference:          ref(pcLocal),
					WriteConnectionSecretToReference: &xpv2.SecretReference{Namespace: "crossplane-system", Name: name + "-user"},
				},
				ForProvider: keystonev1alpha1.UserParameters{Name: name, Description: value},
			}}
		},
		setValue: func(mg resource.Managed, v string) { mg.(*keystonev1alpha1.User).Spec.ForProvider.Description = v },
		observe: func(ctx context.Context, c clients, id string) (bool, string, error) {
			u, err := c.keystone.GetUser(ctx, id)
			if err != nil {
				return notFoundIsAbsent(err)
			}
			return true, u.Description, nil
		},
		drift: func(ctx context.Context, c clients, id, v string) error {
			_, err := c.keystone.UpdateUser(ctx, id, users.UpdateOpts{Description: &v})
			return err
		},
		outOfBand: func(ctx context.Context, c clients, name string) (string, error) {
			u, err := c.keystone.CreateUser(ctx, users.CreateOpts{Name: name, DomainID: "default", Description: "made by hand"})
			if err != nil {
				return "", err
			}
			return u.ID, nil
		},
		remove: func(ctx context.Context, c clients, id string) error { return c.keystone.DeleteUser(ctx, id) },
		count: func(ctx context.Context, c clients, name string) (int, error) {
			u, err := c.keystone.FindUser(ctx, "default", name)
			return boolCount(u != nil), err
		},
	},
	{
		kind: "nova/Aggregate",
		newMR: func(name, value string) resource.Managed {
			return &novav1alpha1.Aggregate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: novav1alpha1.AggregateSpec{
				ClusterManagedResourceSpec: managedBy(pcLocal),
				ForProvider:                novav1alpha1.AggregateParameters{Name: name, AvailabilityZone: "az-" + name, Metadata: map[string]string{"pool": value}},
			}}
		},
		setValue: func(mg resource.Managed, v string) {
			mg.(*novav1alpha1.Aggregate).Spec.ForProvider.Metadata["pool"] = v
		},
		observe: func(ctx context.Context, c clients, id string) (bool, string, error) {
			n, _ := strconv.Atoi(id)
			a, err := c.nova.GetAggregate(ctx, n)
			if err != nil {
				return notFoundIsAbsent(err)
			}
			return true, a.Metadata["pool"], nil
		},
		drift: func(ctx context.Context, c clients, id, v string) error {
			n, _ := strconv.Atoi(id)
			return c.nova.SetAggregateMetadata(ctx, n, map[string]any{"pool": v, "added-by-hand": "x"})
		},
		outOfBand: func(ctx context.Context, c clients, name string) (string, error) {
			a, err := c.nova.CreateAggregate(ctx, aggregates.CreateOpts{Name: name})
			if err != nil {
				return "", err
			}
			return strconv.Itoa(a.ID), nil
		},
		remove: func(ctx context.Context, c clients, id string) error {
			n, _ := strconv.Atoi(id)
			return c.nova.DeleteAggregate(ctx, n)
		},
		count: func(ctx context.Context, c clients, name string) (int, error) {
			all, err := c.nova.ListAggregates(ctx)
			n := 0
			for _, a := range all {
				if a.Name == name {
					n++
				}
			}
			return n, err
		},
	},
	{
		kind: "cinder/VolumeType",
		newMR: func(name, value string) resource.Managed {
			return &cinderv1alpha1.VolumeType{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cinderv1alpha1.VolumeTypeSpec{
				ClusterManagedResourceSpec: managedBy(pcLocal),
				ForProvider: cinderv1alpha1.VolumeTypeParameters{Name: name, BackendName: "ceph-st-pool-a",
					ExtraSpecs: map[string]string{"tier": value}},
			}}
		},
		setValue: func(mg resource.Managed, v string) {
			mg.(*cinderv1alpha1.VolumeType).Spec.ForProvider.ExtraSpecs["tier"] = v
		},
		observe: func(ctx context.Context, c clients, id string) (bool, string, error) {
			v, err := c.cinder.GetVolumeType(ctx, id)
			if err != nil {
				return notFoundIsAbsent(err)
			}
			return true, v.ExtraSpecs["tier"], nil
		},
		drift: func(ctx context.Context, c clients, id, v string) error {
			return c.cinder.SetExtraSpecs(ctx, id, map[string]string{"tier": v, "volume_backend_name": "somewhere-else"})
		},
		outOfBand: func(ctx context.Context, c clients, name string) (string, error) {
			v, err := c.cinder.CreateVolumeType(ctx, volumetypes.CreateOpts{Name: name, ExtraSpecs: map[string]string{"volume_backend_name": "ceph-st-pool-b"}})
			if err != nil {
				return "", err
			}
			return v.ID, nil
		},
		remove: func(ctx context.Context, c clients, id string) error { return c.cinder.DeleteVolumeType(ctx, id) },
		count: func(ctx context.Context, c clients, name string) (int, error) {
			v, err := c.cinder.FindVolumeType(ctx, name)
			return boolCount(v != nil), err
		},
	},
}

func boolCount(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestIntegrationLifecycle takes every kind through create, observe,
// update, out-of-band drift, delete, Observe-only import, delete of an
// object already gone, and a crash between create and recording the ID.
func TestIntegrationLifecycle(t *testing.T) {
	h := withOpenStack(t)
	ctx := context.Background()
	c := h.clients(t)
	for _, k := range kinds {
		t.Run(k.kind, func(t *testing.T) {
			t.Parallel()
			base := map[string]string{"keystone/Project": "p", "keystone/Domain": "d", "keystone/User": "u", "nova/Aggregate": "a", "cinder/VolumeType": "v"}[k.kind]

			t.Run("create, update, drift, delete", func(t *testing.T) {
				mg := k.newMR(h.name(base+"-life"), "one")
				h.create(t, mg)
				h.waitReady(t, mg)
				id := meta.GetExternalName(mg)
				if id == "" {
					t.Fatal("no external name recorded")
				}
				h.eventuallyValue(t, k, c, id, "one")

				h.update(t, mg, func() { k.setValue(mg, "two") })
				h.eventuallyValue(t, k, c, id, "two")

				if err := k.drift(ctx, c, id, "changed-by-hand"); err != nil {
					t.Fatalf("drift: %v", err)
				}
				h.eventuallyValue(t, k, c, id, "two")
				h.waitReady(t, mg)

				h.delete(t, mg)
				h.waitGone(t, mg)
				if exists, _, err := k.observe(ctx, c, id); err != nil || exists {
					t.Fatalf("after delete: exists=%v err=%v", exists, err)
				}
			})

			t.Run("import with Observe only", func(t *testing.T) {
				name := h.name(base + "-import")
				id, err := k.outOfBand(ctx, c, name)
				if err != nil {
					t.Fatalf("create by hand: %v", err)
				}
				t.Cleanup(func() { _ = k.remove(ctx, c, id) })
				mg := k.newMR(name, "ignored")
				mg.SetManagementPolicies(xpv2.ManagementPolicies{xpv2.ManagementActionObserve})
				h.create(t, mg)
				h.waitReady(t, mg)
				if got := meta.GetExternalName(mg); got != id {
					t.Fatalf("external name = %q, want the imported object's ID %q", got, id)
				}
				h.delete(t, mg)
				h.waitGone(t, mg)
				if exists, _, err := k.observe(ctx, c, id); err != nil || !exists {
					t.Fatalf("an Observe-only resource must leave the object: exists=%v err=%v", exists, err)
				}
			})

			t.Run("delete of something already gone", func(t *testing.T) {
				mg := k.newMR(h.name(base+"-gone"), "one")
				h.create(t, mg)
				h.waitReady(t, mg)
				if err := k.remove(ctx, c, meta.GetExternalName(mg)); err != nil {
					t.Fatalf("remove by hand: %v", err)
				}
				h.delete(t, mg)
				h.waitGone(t, mg)
			})

			t.Run("a name taken by someone else is refused, not adopted", func(t *testing.T) {
				name := h.name(base + "-taken")
				id, err := k.outOfBand(ctx, c, name)
				if err != nil {
					t.Fatalf("create by hand: %v", err)
				}
				t.Cleanup(func() { _ = k.remove(ctx, c, id) })
				mg := k.newMR(name, "one")
				h.create(t, mg)
				h.waitSyncError(t, mg, "terminal", "already exists", "external-name")
				if meta.GetExternalName(mg) != "" {
					t.Fatalf("took over %s", meta.GetExternalName(mg))
				}
				h.delete(t, mg)
				h.waitGone(t, mg)
				if exists, _, err := k.observe(ctx, c, id); err != nil || !exists {
					t.Fatalf("deleting the refused resource must leave the other's object: exists=%v err=%v", exists, err)
				}
			})

			t.Run("crash between create and recording the ID", func(t *testing.T) {
				name := crashPrefix + h.name(base)
				mg := k.newMR(name, "one")
				h.create(t, mg)
				h.waitReady(t, mg)
				if _, ok := crashed.Load(name); !ok {
					t.Fatal("the reconcile was not interrupted after the create")
				}
				n, err := k.count(ctx, c, name)
				if err != nil || n != 1 {
					t.Fatalf("objects named %s: %d (err %v), want exactly 1", name, n, err)
				}
				h.delete(t, mg)
				h.waitGone(t, mg)
			})

			t.Run("an answer lost after the create: the object is found, not refused", func(t *testing.T) {
				name := lostPrefix + h.name(base)
				mg := k.newMR(name, "one")
				h.create(t, mg)
				h.waitReady(t, mg)
				if _, ok := lost.Load(name); !ok {
					t.Fatal("the create's answer was not lost")
				}
				n, err := k.count(ctx, c, name)
				if err != nil || n != 1 {
					t.Fatalf("objects named %s: %d (err %v), want exactly 1", name, n, err)
				}
				h.delete(t, mg)
				h.waitGone(t, mg)
			})
		})
	}
}

func (h *harness) eventuallyValue(t *testing.T, k kindCase, c clients, id, want string) {
	t.Helper()
	eventually(t, k.kind+" "+id+" value", func() (bool, string) {
		exists, got, err := k.observe(context.Background(), c, id)
		if err != nil {
			return false, err.Error()
		}
		return exists && got == want, "exists=" + strconv.FormatBool(exists) + " value=" + got + " want " + want
	})
}
