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

// The resources that deliver a cluster's layer (PlaceLayer).
const (
	ResourceLayer       resource.Name = "layer"
	ResourceLayerAccess resource.Name = "layer-access"
)

// ConditionLayerApplied says on a pool or control-plane cluster whether Flux
// applied its cluster's layer: its Kustomization's Ready.
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

// PlaceLayer has Flux deliver the layer of a's kind of cluster into it, once
// the cluster can be reached: the CRDs of what the functions compose there
// (Rook's in a storage pool, the hypervisor operator's in a hypervisor pool,
// the c5c3 ControlPlane in a control-plane cluster), the namespaces they
// compose it in, and a pool's node agents and their admission policy
// (agentbundle's set). The platform's GitOps tree has each kind's layer at
// clusters/pools/<kind> and clusters/control-plane, where a landscape adds
// the operators themselves. Two resources do it, whatever the layer holds:
//
//   - a Flux Kustomization beside the cluster's kubeconfig Secret, which
//     applies the layer's path of the platform's source (input.clusterLayers)
//     into the cluster with that kubeconfig, a pool's agents' images pulled
//     as the input's agentImages say (the function's own version by
//     default);
//   - a provider-kubernetes Object binding, in the cluster, the identity
//     Flux applies the layer as (the ServiceAccount the Kustomization names,
//     which kustomize-controller impersonates there) to cluster-admin: the
//     layer installs CRDs, namespaces, an admission policy and the agents'
//     RBAC.
//
// Core applied one Object per object of the layer before (20 for a
// hypervisor pool), one after another on every reconcile of the pool, and the
// API server converted each write for provider-kubernetes' older served
// version (docs/benchmarks.md). A control-plane or storage cluster is Ready
// only once its layer is applied: without the ControlPlane CRD it runs no
// cloud, without Rook's no Ceph (a storage pool composes its Rook objects
// once LayerApplied). A hypervisor pool's readiness does not wait on it: a
// DaemonSet's rollout follows the nodes, not the pool's phase. The Kustomization orphans what it applied when
// it is deleted: the layer leaves a cluster with the cluster, never because
// a Composition stopped composing it (its CRDs hold the agents' reports,
// the Ceph clusters and the clouds' ControlPlanes).
func PlaceLayer(desired map[resource.Name]*resource.DesiredComposed, observed map[resource.Name]resource.ObservedComposed, a Access, s *input.ShootSettings) error {
	var set agentbundle.Set
	var path string
	switch a.Kind {
	case KindHypervisor:
		set, path = agentbundle.Hypervisor, s.ClusterLayers.HypervisorPath
	case KindStorage:
		set, path = agentbundle.Storage, s.ClusterLayers.StoragePath
	case KindControlPlane:
		set, path = agentbundle.ControlPlane, s.ClusterLayers.ControlPlanePath
	default:
		return fmt.Errorf("no layer for clusters of kind %q", a.Kind)
	}
	images, err := agentbundle.Overrides(set, AgentImages(s))
	if err != nil {
		return err
	}

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

	k := composed.New()
	k.SetAPIVersion(KustomizationAPIVersion)
	k.SetKind(KustomizationKind)
	k.SetName(LayerName(a))
	k.SetNamespace(a.SecretNamespace)
	spec := map[string]any{
		"sourceRef": map[string]any{"kind": s.ClusterLayers.SourceKind, "name": s.ClusterLayers.SourceName},
		"path":      path,
		"kubeConfig": map[string]any{"secretRef": map[string]any{
			"name": a.SecretName(), "key": gardenerv1alpha1.ConnectionSecretKeyKubeconfig,
		}},
		"serviceAccountName": s.ClusterLayers.ServiceAccountName,
		"prune":              true,
		"deletionPolicy":     "Orphan",
		// The layer is checked every ten minutes and on every commit of its
		// source; a run that fails is retried after retryInterval. The
		// first often fails: the binding below is created beside it, by
		// another controller, and a storage pool's Ceph waits on the layer
		// (LayerApplied came 22-34 s after access with 15 s here). A layer
		// that keeps failing (a bad commit, a path the source lacks, the
		// cluster's API down) is built and tried every 5 s meanwhile.
		"interval":      "10m",
		"retryInterval": "5s",
		"timeout":       "2m",
	}
	if len(images) > 0 {
		overrides := make([]any, 0, len(images))
		for _, i := range images {
			overrides = append(overrides, map[string]any{"name": i.Name, "newName": i.NewName, "newTag": i.NewTag})
		}
		spec["images"] = overrides
	}
	k.Object["spec"] = spec
	ready := resource.ReadyTrue
	if a.Kind != KindHypervisor && !LayerApplied(observed) {
		ready = resource.ReadyFalse
	}
	desired[ResourceLayer] = &resource.DesiredComposed{Resource: k, Ready: ready}
	return nil
}

// LayerApplied says whether Flux applied the layer PlaceLayer composed, at
// any revision: its CRDs and namespaces are in the cluster (the layer never
// prunes them), whatever its last run said.
func LayerApplied(observed map[resource.Name]resource.ObservedComposed) bool {
	o, ok := observed[ResourceLayer]
	if !ok {
		return false
	}
	rev, _ := o.Resource.GetString("status.lastAppliedRevision")
	return rev != ""
}

// SetLayerCondition says on the cluster and its claim whether Flux applied
// the layer that PlaceLayer composed, as the observed Kustomization says:
// LayerApplied True once Flux applied it (at which revision), False with
// Flux's reason and message when its last try failed (the source not
// fetched, the cluster refusing an object), False Pending before its first
// apply. kustomize-controller marks Ready Unknown at the start of every run
// (every interval, every new revision): a layer applied before stays True
// through it, so the conditions do not flap every ten minutes. Nothing while
// the layer is not composed: AccessReady says why.
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
