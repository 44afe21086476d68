package pool

import (
	"fmt"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"

	gardenerv1alpha1 "github.com/c5c3/consumer-plane/apis/gardener/v1alpha1"
	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/agentbundle"
	"github.com/c5c3/consumer-plane/internal/remote"
)

// The resources that deliver a pool cluster's layer (PlaceAgents).
const (
	ResourceLayer       resource.Name = "layer"
	ResourceLayerAccess resource.Name = "layer-access"
)

// ConditionLayerApplied says on a pool whether Flux applied its cluster's
// layer: its Kustomization's Ready, which does not gate the pool's.
const ConditionLayerApplied = "LayerApplied"

// Flux's Kustomization API (kustomize-controller v1.x).
const (
	KustomizationAPIVersion = "kustomize.toolkit.fluxcd.io/v1"
	KustomizationKind       = "Kustomization"
)

// AgentImages is where the Composition's input says the agents' images are
// pulled from (input.agentImages; the defaults: agentbundle's registry and
// the function's own version).
func AgentImages(s *input.ShootSettings) agentbundle.Images {
	return agentbundle.Images{Registry: s.AgentImages.Registry, Tag: s.AgentImages.Tag}
}

// LayerName is the name of the Flux Kustomization that delivers the layer
// of the cluster a reaches.
func LayerName(a Access) string { return a.ProviderConfigName() + "-layer" }

// PlaceAgents has Flux deliver a pool's layer (its node agents, their CRDs
// and admission policy: agentbundle's set, examples/clusters/pools/<set> in
// the platform's GitOps tree) into its cluster, once the cluster can be
// reached. Two resources do it, whatever the layer holds:
//
//   - a Flux Kustomization beside the pool's kubeconfig Secret, which applies
//     the layer's path of the platform's source (input.clusterLayers) into
//     the pool's cluster with that kubeconfig, its agents' images pulled as
//     the input's agentImages say (the function's own version by default);
//   - a provider-kubernetes Object binding, in the pool's cluster, the
//     identity Flux applies the layer as (the ServiceAccount the
//     Kustomization names, which kustomize-controller impersonates there) to
//     cluster-admin: the layer installs CRDs, an admission policy and the
//     agents' RBAC.
//
// Core applied one Object per object of the layer before (20 for a
// hypervisor pool), one after another on every reconcile of the pool, and the
// API server converted each write for provider-kubernetes' older served
// version (docs/benchmarks.md). Neither gates the pool's readiness: a
// DaemonSet's rollout follows the nodes, not the pool's phase. The
// Kustomization orphans what it applied when it is deleted: the layer leaves
// a pool's cluster with the cluster, never because a Composition stopped
// composing it (its CRDs hold the agents' reports).
func PlaceAgents(desired map[resource.Name]*resource.DesiredComposed, a Access, set agentbundle.Set, s *input.ShootSettings) error {
	images, err := agentbundle.Overrides(set, AgentImages(s))
	if err != nil {
		return err
	}
	path := s.ClusterLayers.HypervisorPath
	if set == agentbundle.Storage {
		path = s.ClusterLayers.StoragePath
	}
	overrides := make([]any, 0, len(images))
	for _, i := range images {
		overrides = append(overrides, map[string]any{"name": i.Name, "newName": i.NewName, "newTag": i.NewTag})
	}
	k := composed.New()
	k.SetAPIVersion(KustomizationAPIVersion)
	k.SetKind(KustomizationKind)
	k.SetName(LayerName(a))
	k.SetNamespace(a.SecretNamespace)
	k.Object["spec"] = map[string]any{
		"sourceRef": map[string]any{"kind": s.ClusterLayers.SourceKind, "name": s.ClusterLayers.SourceName},
		"path":      path,
		"kubeConfig": map[string]any{"secretRef": map[string]any{
			"name": a.SecretName(), "key": gardenerv1alpha1.ConnectionSecretKeyKubeconfig,
		}},
		"serviceAccountName": s.ClusterLayers.ServiceAccountName,
		"images":             overrides,
		"prune":              true,
		"deletionPolicy":     "Orphan",
		// The layer is checked every ten minutes and on every commit of its
		// source; a first apply that fails (the binding below not there
		// yet, the cluster's API server starting) is retried within seconds.
		"interval":      "10m",
		"retryInterval": "15s",
		"timeout":       "2m",
	}
	desired[ResourceLayer] = &resource.DesiredComposed{Resource: k, Ready: resource.ReadyTrue}

	pc := a.ProviderConfigName()
	binding := map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "ClusterRoleBinding",
		"metadata":   map[string]any{"name": "cobaltcore:cluster-layer"},
		"roleRef":    map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects": []any{map[string]any{
			"kind": "ServiceAccount", "name": s.ClusterLayers.ServiceAccountName, "namespace": a.SecretNamespace,
		}},
	}
	desired[ResourceLayerAccess] = &resource.DesiredComposed{Resource: remote.Created(pc+"-layer-access", pc, binding), Ready: resource.ReadyTrue}
	return nil
}

// SetLayerCondition says on the pool and its claim whether Flux applied the
// layer that PlaceAgents composed, as the observed Kustomization says:
// LayerApplied True once Flux applied it (at which revision), False with
// Flux's reason and message when its last try failed (the source not
// fetched, the cluster refusing an object), False Pending before its first
// apply. kustomize-controller marks Ready Unknown at the start of every run
// (every interval, every new revision): a layer applied before stays True
// through it, so the pool's conditions do not flap every ten minutes.
// Nothing while the layer is not composed: AccessReady says why.
func SetLayerCondition(rsp *fnv1.RunFunctionResponse, desired map[resource.Name]*resource.DesiredComposed, observed map[resource.Name]resource.ObservedComposed) {
	d, placed := desired[ResourceLayer]
	if !placed {
		return
	}
	what := fmt.Sprintf("Kustomization %s/%s", d.Resource.GetNamespace(), d.Resource.GetName())
	o, ok := observed[ResourceLayer]
	if !ok {
		response.ConditionFalse(rsp, ConditionLayerApplied, "Pending").WithMessage(what + " is being created").TargetCompositeAndClaim()
		return
	}
	c := o.Resource.GetCondition(xpv2.TypeReady)
	rev, _ := o.Resource.GetString("status.lastAppliedRevision")
	switch {
	case c.Status == "False" && c.Reason != "":
		response.ConditionFalse(rsp, ConditionLayerApplied, string(c.Reason)).WithMessage(fmt.Sprintf("%s: %s", what, c.Message)).TargetCompositeAndClaim()
	case rev != "":
		msg := fmt.Sprintf("%s applied the layer at %s", what, rev)
		if c.Status != "True" {
			msg += "; Flux is applying it again"
		}
		response.ConditionTrue(rsp, ConditionLayerApplied, "Applied").WithMessage(msg).TargetCompositeAndClaim()
	default:
		msg := what + " has not applied the layer yet"
		if c.Message != "" {
			msg += ": " + c.Message
		}
		response.ConditionFalse(rsp, ConditionLayerApplied, "Pending").WithMessage(msg).TargetCompositeAndClaim()
	}
}
