package main

import (
	"fmt"
	"slices"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"
	"github.com/crossplane/function-sdk-go/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	ovnv1alpha1 "github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/pool"
	"github.com/c5c3/consumer-plane/internal/remote"
)

// Every ClusterUsage of the cloud is named with this prefix, so that the
// stages that look at what exists can leave them out (see observedStages).
const usagePrefix = "usage-"

// labelUsedPool lets an operator list the clouds that hold a pool, and a
// hypervisor pool reads the share records of its clouds by it:
// kubectl get clusterusages -l c5c3.io/used-pool=<pool>.
const labelUsedPool = pool.LabelUsedPool

// composeUsages protects what the cloud consumes — each admitted hypervisor
// and storage pool and its control-plane cluster — from deletion while the
// cloud exists, with one Crossplane ClusterUsage each (core's admission
// webhook refuses to delete a composite that has one; a claim's deletion is
// held until the last cloud is gone, then proceeds).
//
// spec.by is this cloud's composite: a usage composed by it is released
// only once the composite is gone, so a cloud's Ceph pools, Nova aggregates
// and the rest are deleted before the pools they live in may go. The
// reason names the cloud as its tenant knows it; it is what `kubectl get
// clusterusages` shows.
func composeUsages(c *cloud, plan *plan, desired map[resource.Name]*resource.DesiredComposed) error {
	if err := composeShareRecords(c, plan, desired); err != nil {
		return err
	}
	if plan.controlPlane != nil {
		return addUsage(c, desired, usedControlPlane, plan.controlPlaneName, plan.controlPlane.GetName(), nil)
	}
	return nil
}

// composeShareRecords desires the usages of the cloud's pools, which
// record what it asks of each (see allocationIn).
func composeShareRecords(c *cloud, plan *plan, desired map[resource.Name]*resource.DesiredComposed) error {
	who := claimOf(c.xr.GetLabels(), c.name)
	for _, h := range plan.hypervisor {
		if h.pool != nil {
			if err := addUsage(c, desired, usedHypervisorPool, h.name, h.pool.GetName(), h.record(who, pool.Nodes)); err != nil {
				return err
			}
		}
	}
	for _, s := range plan.storage {
		if s.pool != nil {
			if err := addUsage(c, desired, usedStoragePool, s.name, s.pool.GetName(), s.record(who, pool.Gigabytes)); err != nil {
				return err
			}
		}
	}
	return nil
}

// used is a kind of composite a cloud consumes, and what it shares out.
type used struct {
	kind, noun, short string
	unit              pool.Unit
}

var (
	usedHypervisorPool = used{v1alpha1.XHypervisorClusterKind, "hypervisor pool", "hypervisor", pool.Nodes}
	usedStoragePool    = used{v1alpha1.XStorageClusterKind, "storage pool", "storage", pool.Gigabytes}
	usedControlPlane   = used{v1alpha1.XControlPlaneClusterKind, "control-plane cluster", "control-plane", pool.Unit{}}
)

// usageName is the composed resource name of the usage of the pool the
// cloud calls name.
func usageName(u used, name string) resource.Name {
	return resource.Name(usagePrefix + u.short + "-" + name)
}

// addUsage desires the ClusterUsage of the composite that is the pool the
// cloud calls name, with annotations that record the cloud's share of it.
func addUsage(c *cloud, desired map[resource.Name]*resource.DesiredComposed, u used, name, composite string, record map[string]string) error {
	cu := &protectionv1beta1.ClusterUsage{
		TypeMeta:   metav1.TypeMeta{APIVersion: protectionv1beta1.SchemeGroupVersion.String(), Kind: protectionv1beta1.ClusterUsageKind},
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{labelUsedPool: name}, Annotations: record},
		Spec: protectionv1beta1.ClusterUsageSpec{
			Of:             protectionv1beta1.Resource{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: u.kind, ResourceRef: &protectionv1beta1.ResourceRef{Name: composite}},
			By:             &protectionv1beta1.Resource{APIVersion: c.xr.APIVersion, Kind: v1alpha1.XOpenStackClusterKind, ResourceRef: &protectionv1beta1.ResourceRef{Name: c.name}},
			Reason:         ptr.To(fmt.Sprintf("%s consumes %s %s", c.display(), u.noun, name)),
			ReplayDeletion: ptr.To(true),
		},
	}
	o, err := function.Composed(cu)
	if err != nil {
		return err
	}
	// A usage protects; it serves nothing the tenant waits on.
	desired[usageName(u, name)] = &resource.DesiredComposed{Resource: o, Ready: resource.ReadyTrue}
	return nil
}

// Usages that order the cloud's deletion. Everything a composite composed
// is deleted at once when it goes; the objects in the cloud (Keystone, Nova,
// Cinder, OVN) can only be deleted through its APIs, which its ControlPlane
// serves. So the ControlPlane is in use by each ProviderConfig through
// which those objects are managed — a ProviderConfig is held until its last
// managed resource is gone — and the cloud's namespace by the ControlPlane:
// core's webhook refuses their deletion until then, and replays it after.
const (
	usageOrderCloud     resource.Name = usagePrefix + "order-cloud"
	usageOrderNetwork   resource.Name = usagePrefix + "order-network"
	usageOrderNamespace resource.Name = usagePrefix + "order-namespace"
)

// composeDeletionOrder desires those usages once both ends of each exist
// (core's usage controller wants both to be there).
func composeDeletionOrder(c *cloud, observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed) error {
	has := func(n resource.Name) bool { _, ok := observed[n]; return ok }
	controlPlane := protectionv1beta1.Resource{APIVersion: remote.APIVersion, Kind: remote.Kind, ResourceRef: &protectionv1beta1.ResourceRef{Name: c.name + "-control-plane"}}
	order := []struct {
		name    resource.Name
		needs   []resource.Name
		of, by  protectionv1beta1.Resource
		because string
	}{
		{usageOrderCloud, []resource.Name{resourceControlPlane, resourceProviderConfig}, controlPlane,
			protectionv1beta1.Resource{APIVersion: openstackv1alpha1.SchemeGroupVersion.String(), Kind: "ProviderConfig", ResourceRef: &protectionv1beta1.ResourceRef{Name: c.name}},
			"its project, aggregates, volume types and quotas are deleted through its control plane"},
		{usageOrderNetwork, []resource.Name{resourceControlPlane, resourceOVNProviderConfig}, controlPlane,
			protectionv1beta1.Resource{APIVersion: ovnv1alpha1.SchemeGroupVersion.String(), Kind: "ProviderConfig", ResourceRef: &protectionv1beta1.ResourceRef{Name: c.name}},
			"its OVN gateways are deleted through its control plane's OVN databases"},
		{usageOrderNamespace, []resource.Name{resourceNamespace, resourceControlPlane},
			protectionv1beta1.Resource{APIVersion: remote.APIVersion, Kind: remote.Kind, ResourceRef: &protectionv1beta1.ResourceRef{Name: c.name + "-namespace"}},
			controlPlane, "its ControlPlane lives in its namespace"},
	}
	for _, o := range order {
		// Once composed it stays, whatever the stages do meanwhile.
		if has(o.name) || !slices.ContainsFunc(o.needs, func(n resource.Name) bool { return !has(n) }) {
			cu := &protectionv1beta1.ClusterUsage{
				TypeMeta:   metav1.TypeMeta{APIVersion: protectionv1beta1.SchemeGroupVersion.String(), Kind: protectionv1beta1.ClusterUsageKind},
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{labelCloud: c.name}},
				Spec: protectionv1beta1.ClusterUsageSpec{
					Of: o.of, By: &o.by,
					Reason:         ptr.To(fmt.Sprintf("%s: %s", c.display(), o.because)),
					ReplayDeletion: ptr.To(true),
				},
			}
			cd, err := function.Composed(cu)
			if err != nil {
				return err
			}
			desired[o.name] = &resource.DesiredComposed{Resource: cd, Ready: resource.ReadyTrue}
		}
	}
	return nil
}
