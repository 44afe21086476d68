// Package kvm watches the Hypervisors (kvm.cloud.sap/v1) of pool clusters:
// one per node, created by the openstack-hypervisor-operator and kept up to
// date by the pool's hypervisor agents. It only reads.
//
// Hypervisors are read as unstructured objects and decoded into the few
// fields the provider needs, rather than with the operator's Go module: that
// module's dependencies (cert-manager, gophercloud utilities) would join the
// provider's, and the fields read here are the operator's stable API.
package kvm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
)

// HypervisorGVK is the hypervisor operator's Hypervisor.
var HypervisorGVK = schema.GroupVersionKind{Group: "kvm.cloud.sap", Version: "v1", Kind: "Hypervisor"}

// Resource names of the Hypervisor's capacity and allocation maps.
const (
	ResourceCPU    = "cpu"
	ResourceMemory = "memory"
)

// Conditions a Hypervisor carries: the agent's, and the operator's.
const (
	// ConditionLibvirt is set by the hypervisor agent: True while it is
	// connected to the node's libvirt.
	ConditionLibvirt = "LibvirtConnected"
	// ConditionReady is set by the hypervisor operator: False while the
	// node is onboarding, being tested, evicted or in maintenance.
	ConditionReady = "Ready"
)

// Hypervisor holds the fields of a kvm.cloud.sap/v1 Hypervisor the provider
// reads.
type Hypervisor struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              HypervisorSpec   `json:"spec"`
	Status            HypervisorStatus `json:"status"`
}

// HypervisorSpec holds the spec fields read.
type HypervisorSpec struct {
	// Maintenance mode: "", manual, auto, ha or termination.
	Maintenance       string `json:"maintenance,omitempty"`
	MaintenanceReason string `json:"maintenanceReason,omitempty"`
}

// HypervisorStatus holds the status fields read.
type HypervisorStatus struct {
	Capacity          map[string]resource.Quantity `json:"capacity,omitempty"`
	EffectiveCapacity map[string]resource.Quantity `json:"effectiveCapacity,omitempty"`
	Allocation        map[string]resource.Quantity `json:"allocation,omitempty"`
	NumInstances      int                          `json:"numInstances,omitempty"`
	Evicted           bool                         `json:"evicted,omitempty"`
	Conditions        []metav1.Condition           `json:"conditions,omitempty"`
}

// NewClusters returns an empty set of at most size watched pool clusters.
// Watches unused for idle are stopped.
func NewClusters(size int, idle time.Duration) *watch.Clusters {
	return watch.NewClusters(watch.Kind{
		New:        watch.Unstructured(HypervisorGVK),
		Cluster:    "the pool cluster",
		Objects:    "Hypervisors (kvm.cloud.sap/v1)",
		Permission: "get, list and watch on hypervisors.kvm.cloud.sap",
	}, size, idle)
}

// Hypervisors lists the Hypervisors carrying every one of the labels, by
// name, from the watch cache: no request reaches the pool cluster.
func Hypervisors(ctx context.Context, c *watch.Cluster, labels map[string]string) ([]Hypervisor, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(HypervisorGVK.GroupVersion().WithKind(HypervisorGVK.Kind + "List"))
	if err := c.List(ctx, l, client.MatchingLabels(labels)); err != nil {
		return nil, fmt.Errorf("cannot list Hypervisors: %w", err)
	}
	hvs := make([]Hypervisor, 0, len(l.Items))
	for i := range l.Items {
		h := Hypervisor{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(l.Items[i].Object, &h); err != nil {
			return nil, fmt.Errorf("cannot read Hypervisor %s: %w", l.Items[i].GetName(), err)
		}
		hvs = append(hvs, h)
	}
	slices.SortFunc(hvs, func(a, b Hypervisor) int { return strings.Compare(a.Name, b.Name) })
	return hvs, nil
}
