// Package hypervisor is the hypervisor node agent: it introspects the node's
// libvirt (host capabilities, NUMA cells, domains) and publishes what it finds
// into the node's Hypervisor resource (kvm.cloud.sap/v1) as the
// openstack-hypervisor-operator defines it, so the operator and the pool
// status read the same truth. It looks again when libvirt reports a domain
// lifecycle event and, as a safety net, on a resync interval.
package hypervisor

import (
	"math"
	"sort"

	kvmv1 "github.com/cobaltcore-dev/openstack-hypervisor-operator/api/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/consumer-plane/agents/internal/virt"
)

// ConditionLibvirt is the condition this agent owns on the Hypervisor: True
// while it reaches libvirt and has published a fresh introspection.
const ConditionLibvirt = "LibvirtConnected"

// Reasons of ConditionLibvirt.
const (
	ReasonIntrospected = "Introspected"
	ReasonUnreachable  = "LibvirtUnreachable"
)

// applySnapshot writes the fields the agent owns into st from one
// introspection. Everything else in st (the operator's conditions, IDs,
// traits, aggregates) is left as it is.
func applySnapshot(st *kvmv1.HypervisorStatus, spec kvmv1.HypervisorSpec, s virt.Snapshot, generation int64) {
	h := s.Host
	st.LibVirtVersion = h.LibvirtVersion
	st.HypervisorVersion = h.HypervisorVersion
	st.Capabilities = kvmv1.Capabilities{
		HostCpuArch: h.Arch,
		HostMemory:  *resource.NewQuantity(h.MemoryBytes, resource.BinarySI),
		HostCpus:    *resource.NewQuantity(h.CPUs, resource.DecimalSI),
	}
	st.DomainCapabilities = kvmv1.DomainCapabilities{
		Arch:              h.DomainArch,
		HypervisorType:    h.DomainVirtType,
		SupportedCpuModes: h.CPUModes,
		SupportedDevices:  h.Devices,
		SupportedFeatures: h.Features,
	}

	instances := make([]kvmv1.Instance, 0, len(s.Domains))
	for _, d := range s.Domains {
		instances = append(instances, kvmv1.Instance{ID: d.UUID, Name: d.Name, Active: d.State.Active()})
	}
	sort.Slice(instances, func(i, j int) bool { return instances[i].ID < instances[j].ID })
	st.Instances = instances
	st.NumInstances = len(instances)
	st.Capacity = resources(h.CPUs, h.MemoryBytes)
	st.Allocation = resources(s.Allocated())
	st.EffectiveCapacity = effective(st.Capacity, spec.Overcommit)

	cells := make([]kvmv1.Cell, 0, len(h.Cells))
	for _, c := range h.Cells {
		capacity := resources(c.CPUs, c.MemoryBytes)
		cells = append(cells, kvmv1.Cell{CellID: c.ID, Capacity: capacity, EffectiveCapacity: effective(capacity, spec.Overcommit)})
	}
	st.Cells = cells

	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: ConditionLibvirt, Status: metav1.ConditionTrue, Reason: ReasonIntrospected,
		Message: "libvirt " + h.LibvirtVersion + " (" + h.HypervisorType + ") introspected", ObservedGeneration: generation,
	})
}

// markUnreachable records that libvirt cannot be reached; the last published
// introspection stays, marked stale by the condition.
func markUnreachable(st *kvmv1.HypervisorStatus, err error, generation int64) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: ConditionLibvirt, Status: metav1.ConditionFalse, Reason: ReasonUnreachable,
		Message: err.Error(), ObservedGeneration: generation,
	})
}

func resources(cpus, memBytes int64) map[kvmv1.ResourceName]resource.Quantity {
	return map[kvmv1.ResourceName]resource.Quantity{
		kvmv1.ResourceCPU:    *resource.NewQuantity(cpus, resource.DecimalSI),
		kvmv1.ResourceMemory: *resource.NewQuantity(memBytes, resource.BinarySI),
	}
}

// effective applies the spec's overcommit ratios (1 where none is set),
// rounded down as the operator's API asks.
func effective(capacity map[kvmv1.ResourceName]resource.Quantity, overcommit map[kvmv1.ResourceName]float64) map[kvmv1.ResourceName]resource.Quantity {
	out := make(map[kvmv1.ResourceName]resource.Quantity, len(capacity))
	for name, q := range capacity {
		ratio, ok := overcommit[name]
		if !ok || ratio <= 0 {
			out[name] = q.DeepCopy()
			continue
		}
		v := int64(math.Floor(float64(q.Value()) * ratio))
		out[name] = *resource.NewQuantity(v, q.Format)
	}
	return out
}
