// Package hypervisorinventory observes the Hypervisors of a pool cluster,
// which the pool's hypervisor agents keep up to date from libvirt.
//
// A HypervisorInventory writes nothing: Observe counts the watched
// Hypervisors and always reports the "external resource" as existing and up
// to date, so Create, Update and Delete are never asked to act. Each pool
// cluster's Hypervisors are watched once per ProviderConfig, and every
// change requests a reconcile of the inventories of that ProviderConfig.
package hypervisorinventory

import (
	"context"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	kresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/consumer-plane/apis/kvm/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/kvm"
	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// listed bounds the Hypervisors a status names.
const listed = 10

// Reasons a Hypervisor is not in service.
const (
	ReasonMaintenance  = "Maintenance"
	ReasonEvicted      = "Evicted"
	ReasonDisconnected = "LibvirtDisconnected"
	ReasonNotReporting = "NotReporting"
	ReasonNotReady     = "NotReady"
)

// Setup adds the HypervisorInventory controller. Every change of a watched
// Hypervisor requests an observation of the inventories of its
// ProviderConfig.
func Setup(mgr ctrl.Manager, o controller.Options, clusters *watch.Clusters) error {
	c := providerconfig.ClusterView(mgr, clusters, newProviderConfig, func(cl *watch.Cluster) managed.TypedExternalClient[*v1alpha1.HypervisorInventory] {
		return &external{cluster: cl}
	})
	changed := watch.Source(mgr.GetClient(), clusters, func() resource.ManagedList { return &v1alpha1.HypervisorInventoryList{} })
	return pcontroller.SetupManagedWatching(mgr, o, v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.HypervisorInventoryKind), &v1alpha1.HypervisorInventoryList{},
		changed, managed.WithTypedExternalConnector[*v1alpha1.HypervisorInventory](c))
}

func newProviderConfig() (*v1alpha1.ProviderConfig, resource.LegacyProviderConfigUsage) {
	return &v1alpha1.ProviderConfig{}, &v1alpha1.ProviderConfigUsage{}
}

// external observes the Hypervisors; the inventory is a view and writes
// nothing.
type external struct {
	pcontroller.View[*v1alpha1.HypervisorInventory]
	cluster *watch.Cluster
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.HypervisorInventory) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		// Nothing to delete: report the view gone so the finalizer goes.
		return managed.ExternalObservation{}, nil
	}
	hvs, err := kvm.Hypervisors(ctx, e.cluster, mg.Spec.ForProvider.HypervisorSelector)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	mg.Status.AtProvider = Count(hvs)
	mg.SetConditions(xpv2.Available())
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// Count sorts Hypervisors into in service, maintenance, disconnected and
// not ready, and sums what those in service offer and hold.
func Count(hvs []kvm.Hypervisor) v1alpha1.HypervisorInventoryObservation {
	o := v1alpha1.HypervisorInventoryObservation{Hypervisors: int32(len(hvs))} //nolint:gosec // a pool has far fewer than 2^31 nodes.
	for i := range hvs {
		h := &hvs[i]
		reason, msg := notInService(h)
		o.Nodes = append(o.Nodes, v1alpha1.HypervisorNode{Name: h.Name, Zone: h.Labels[v1alpha1.LabelZone], InService: reason == "",
			Instances: int32(h.Status.NumInstances)}) //nolint:gosec // a node holds far fewer than 2^31 domains.
		switch reason {
		case "":
			o.InService++
			o.Instances += int32(h.Status.NumInstances) //nolint:gosec // a node holds far fewer than 2^31 domains.
			capacity, effective, allocation := resources(h.Status.Capacity), resources(h.Status.EffectiveCapacity), resources(h.Status.Allocation)
			if len(h.Status.EffectiveCapacity) == 0 {
				// No overcommit published: the effective capacity is the capacity.
				effective = capacity
			}
			add(&o.Capacity, capacity)
			add(&o.EffectiveCapacity, effective)
			add(&o.Allocation, allocation)
			add(&o.Available, v1alpha1.Resources{VCPUs: max(0, effective.VCPUs-allocation.VCPUs), MemoryGiB: max(0, effective.MemoryGiB-allocation.MemoryGiB)})
			continue
		case ReasonMaintenance, ReasonEvicted:
			o.Maintenance++
		case ReasonDisconnected, ReasonNotReporting:
			o.Disconnected++
		default:
			o.NotReady++
		}
		if len(o.NotInService) < listed {
			o.NotInService = append(o.NotInService, v1alpha1.HypervisorNotInService{Name: h.Name, Reason: reason, Message: msg})
		}
	}
	slices.SortFunc(o.Nodes, func(a, b v1alpha1.HypervisorNode) int { return strings.Compare(a.Name, b.Name) })
	return o
}

// notInService says why a Hypervisor is not in service, or "" when it is.
// Maintenance comes first: a node drained on purpose is not a fault.
func notInService(h *kvm.Hypervisor) (reason, message string) {
	switch {
	case h.Spec.Maintenance != "":
		return ReasonMaintenance, h.Spec.Maintenance + " maintenance" + suffix(h.Spec.MaintenanceReason)
	case h.Status.Evicted:
		return ReasonEvicted, "its instances were evacuated"
	}
	switch c := apimeta.FindStatusCondition(h.Status.Conditions, kvm.ConditionLibvirt); {
	case c == nil:
		return ReasonNotReporting, "no hypervisor agent has reported this node yet"
	case c.Status != metav1.ConditionTrue:
		return ReasonDisconnected, c.Message
	}
	if len(h.Status.Capacity) == 0 {
		return ReasonNotReporting, "the hypervisor agent has not published the node's capacity yet"
	}
	if c := apimeta.FindStatusCondition(h.Status.Conditions, kvm.ConditionReady); c != nil && c.Status == metav1.ConditionFalse {
		return ReasonNotReady, c.Reason + suffix(c.Message)
	}
	return "", ""
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

// resources reads vCPUs and memory from a Hypervisor's resource map.
func resources(m map[string]kresource.Quantity) v1alpha1.Resources {
	r := v1alpha1.Resources{}
	if q, ok := m[kvm.ResourceCPU]; ok {
		r.VCPUs = q.Value()
	}
	if q, ok := m[kvm.ResourceMemory]; ok {
		r.MemoryGiB = q.Value() >> 30
	}
	return r
}

func add(sum *v1alpha1.Resources, r v1alpha1.Resources) {
	sum.VCPUs += r.VCPUs
	sum.MemoryGiB += r.MemoryGiB
}
