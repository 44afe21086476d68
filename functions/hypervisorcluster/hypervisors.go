package main

import (
	"fmt"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	gardenerv1alpha1 "github.com/c5c3/consumer-plane/apis/gardener/v1alpha1"
	kvmv1alpha1 "github.com/c5c3/consumer-plane/apis/kvm/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/pool"
)

func init() {
	// composed.From looks up the GVKs of typed objects in this scheme.
	if err := kvmv1alpha1.AddToScheme(composed.Scheme); err != nil {
		panic(err)
	}
}

// Names of the composed resources that read the pool's Hypervisors.
const (
	resourceHypervisorsConfig resource.Name = "hypervisors-provider-config"
	resourceHypervisors       resource.Name = "hypervisors"
)

// conditionAgents says whether the pool's nodes and capacity come from its
// agents.
const conditionAgents = "AgentsReporting"

// Reasons of conditionAgents.
const (
	reasonReporting     = "Reporting"
	reasonWaiting       = "Waiting"
	reasonNoHypervisors = "NoHypervisors"
	reasonUnreachable   = "Unreachable"
)

// hypervisors is what the pool's agents report, or why they report nothing.
type hypervisors struct {
	// Observed is the HypervisorInventory's count; nil when the agents
	// report no Hypervisor (yet).
	Observed *kvmv1alpha1.HypervisorInventoryObservation
	// Reason and Message of conditionAgents.
	Reason, Message string
	// Unreachable says why the provider cannot read the pool's Hypervisors
	// now (the pool's cluster unreachable): Observed is then its last read,
	// which says nothing of now.
	Unreachable string
}

// composeHypervisors adds, once the pool's cluster can be reached, a
// ProviderConfig of our provider for it and a HypervisorInventory that
// reads its Hypervisors. Neither gates the pool's readiness: a pool without
// agents (or without the hypervisor operator's CRD) still works, and says so.
func composeHypervisors(observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed, a pool.Access) (*hypervisors, error) {
	pc := &kvmv1alpha1.ProviderConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: kvmv1alpha1.SchemeGroupVersion.String(), Kind: "ProviderConfig"},
		ObjectMeta: metav1.ObjectMeta{Name: a.ProviderConfigName()},
		Spec: kvmv1alpha1.ProviderConfigSpec{Credentials: kvmv1alpha1.ClusterCredentials{
			Source: xpv2.CredentialsSourceSecret,
			CommonCredentialSelectors: xpv2.CommonCredentialSelectors{SecretRef: &xpv2.SecretKeySelector{
				SecretReference: xpv2.SecretReference{Namespace: a.SecretNamespace, Name: a.SecretName()},
				Key:             gardenerv1alpha1.ConnectionSecretKeyKubeconfig,
			}},
		}},
	}
	inv := &kvmv1alpha1.HypervisorInventory{
		TypeMeta:   metav1.TypeMeta{APIVersion: kvmv1alpha1.SchemeGroupVersion.String(), Kind: kvmv1alpha1.HypervisorInventoryKind},
		ObjectMeta: metav1.ObjectMeta{Name: a.ProviderConfigName()},
		Spec: kvmv1alpha1.HypervisorInventorySpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: pc.Name}},
		},
	}
	pcd, err := function.Composed(pc)
	if err != nil {
		return nil, err
	}
	icd, err := function.Composed(inv)
	if err != nil {
		return nil, err
	}
	desired[resourceHypervisorsConfig] = &resource.DesiredComposed{Resource: pcd, Ready: resource.ReadyTrue}
	desired[resourceHypervisors] = &resource.DesiredComposed{Resource: icd, Ready: resource.ReadyTrue}

	o, ok := observed[resourceHypervisors]
	if !ok {
		return &hypervisors{Reason: reasonWaiting, Message: fmt.Sprintf("HypervisorInventory %s is being created to read the pool's Hypervisors", inv.Name)}, nil
	}
	obs := &kvmv1alpha1.HypervisorInventory{}
	if err := function.FromObject(o.Resource.UnstructuredContent(), "HypervisorInventory "+o.Resource.GetName(), obs); err != nil {
		return nil, err
	}
	if c := obs.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionTrue {
		msg := fmt.Sprintf("waiting for HypervisorInventory %s to read the pool's Hypervisors", inv.Name)
		if s := obs.GetCondition(xpv2.TypeSynced); s.Status == corev1.ConditionFalse && s.Message != "" {
			msg += ": " + s.Message
		}
		return &hypervisors{Reason: reasonWaiting, Message: msg}, nil
	}
	c := obs.Status.AtProvider
	// A read that fails keeps the last one: the pool's cluster cannot be
	// reached (or read) now, and the agents' figures are from before.
	if s := obs.GetCondition(xpv2.TypeSynced); s.Status == corev1.ConditionFalse && c.Hypervisors > 0 {
		why := fmt.Sprintf("HypervisorInventory %s cannot read the pool's Hypervisors now: %s", inv.Name, s.Message)
		return &hypervisors{Observed: &c, Reason: reasonUnreachable, Unreachable: why,
			Message: why + "; nodeCount, availableCapacity and hypervisors are the agents' last report, and every cloud keeps the nodes it holds until they report again"}, nil
	}
	if c.Hypervisors == 0 {
		return &hypervisors{Reason: reasonNoHypervisors,
			Message: "the pool's cluster has no Hypervisor yet: the hypervisor operator creates one per node, which the pool's hypervisor agents fill from libvirt"}, nil
	}
	msg := fmt.Sprintf("%d of %d Hypervisors in service (%d in maintenance, %d disconnected, %d not ready), %d instances; %d vCPUs and %d GiB free",
		c.InService, c.Hypervisors, c.Maintenance, c.Disconnected, c.NotReady, c.Instances, c.Available.VCPUs, c.Available.MemoryGiB)
	if len(c.NotInService) > 0 {
		out := make([]string, 0, len(c.NotInService))
		for _, h := range c.NotInService {
			out = append(out, fmt.Sprintf("%s (%s)", h.Name, h.Reason))
		}
		msg += "; not in service: " + strings.Join(out, ", ")
	}
	return &hypervisors{Observed: &c, Reason: reasonReporting, Message: msg}, nil
}

// Reporting says whether the agents report the pool's nodes (now, or, when
// unreachable, last).
func (h *hypervisors) Reporting() bool { return h != nil && h.Observed != nil }

// Current says whether the agents' report is of now: nodes are bound from
// it only then.
func (h *hypervisors) Current() bool { return h.Reporting() && h.Unreachable == "" }

// Status is the pool's status.hypervisors, nil until the agents report.
func (h *hypervisors) Status() *v1alpha1.PoolHypervisors {
	if !h.Reporting() {
		return nil
	}
	c := h.Observed
	return &v1alpha1.PoolHypervisors{
		Total: c.Hypervisors, InService: c.InService, Maintenance: c.Maintenance, Disconnected: c.Disconnected, NotReady: c.NotReady, Instances: c.Instances,
		Capacity:  v1alpha1.Capacity{VCPUs: c.EffectiveCapacity.VCPUs, MemoryGB: c.EffectiveCapacity.MemoryGiB},
		Allocated: v1alpha1.Capacity{VCPUs: c.Allocation.VCPUs, MemoryGB: c.Allocation.MemoryGiB},
	}
}

// Available is what the Hypervisors in service can still hold.
func (h *hypervisors) Available() *v1alpha1.Capacity {
	return &v1alpha1.Capacity{VCPUs: h.Observed.Available.VCPUs, MemoryGB: h.Observed.Available.MemoryGiB}
}

// SetCondition reports on the composite and its claim where the pool's
// nodes and capacity come from. Nothing before the pool can be reached.
func (h *hypervisors) SetCondition(rsp *fnv1.RunFunctionResponse) {
	if h == nil {
		return
	}
	switch {
	case h.Unreachable != "":
		response.ConditionFalse(rsp, conditionAgents, h.Reason).WithMessage(h.Message).TargetCompositeAndClaim()
		return
	case h.Reporting():
		response.ConditionTrue(rsp, conditionAgents, h.Reason).WithMessage(h.Message).TargetCompositeAndClaim()
		return
	}
	response.ConditionFalse(rsp, conditionAgents, h.Reason).
		WithMessage(h.Message + "; until then nodeCount and availableCapacity are spec.workers times the machine class of the CloudProfile").TargetCompositeAndClaim()
}
