// Package remote builds provider-kubernetes Objects: the way every function
// of this project places objects in another cluster (a pool's, or the
// control-plane cluster) through a ProviderConfig that reaches it.
package remote

import (
	"github.com/crossplane/function-sdk-go/resource/composed"
)

// Object's API of provider-kubernetes v1.0 (cluster scoped, so legacy
// composites on Crossplane 1.x and 2.x can compose it).
const (
	APIVersion = "kubernetes.crossplane.io/v1alpha2"
	Kind       = "Object"
)

// Object wraps a manifest in an Object that applies it in the cluster the
// ProviderConfig reaches, and is Ready when the manifest's own Ready
// condition is (for kinds without one, see Created).
//
// Every Object asks to be watched: provider-kubernetes started with
// --enable-watches then sees a change of the remote object (a CephCluster
// becoming Ready, an agent's report) at once and can poll rarely; without
// the flag the field is ignored and the Object is polled.
func Object(name, providerConfig string, manifest map[string]any) *composed.Unstructured {
	o := composed.New()
	o.SetAPIVersion(APIVersion)
	o.SetKind(Kind)
	o.SetName(name)
	o.Object["spec"] = map[string]any{
		"providerConfigRef": map[string]any{"name": providerConfig},
		"forProvider":       map[string]any{"manifest": manifest},
		"readiness":         map[string]any{"policy": "DeriveFromObject"},
		"watch":             true,
	}
	return o
}

// Created wraps a manifest of a kind that reports no Ready condition (a
// Namespace, a Secret) in an Object that is Ready once the object exists:
// with DeriveFromObject such an Object would never be Ready.
func Created(name, providerConfig string, manifest map[string]any) *composed.Unstructured {
	o := Object(name, providerConfig, manifest)
	spec := o.Object["spec"].(map[string]any) //nolint:forcetypeassert // set by Object
	spec["readiness"] = map[string]any{"policy": "SuccessfulCreate"}
	return o
}

// ReadyWhen wraps a manifest in an Object that is Ready when a CEL query
// over the applied object holds, for kinds whose status has no Ready
// condition (for example "object.status.state == 'Ready'").
func ReadyWhen(name, providerConfig string, manifest map[string]any, celQuery string) *composed.Unstructured {
	o := Object(name, providerConfig, manifest)
	spec := o.Object["spec"].(map[string]any) //nolint:forcetypeassert // set by Object
	spec["readiness"] = map[string]any{"policy": "DeriveFromCelQuery", "celQuery": celQuery}
	return o
}

// Observed wraps a manifest in an Object that only reads it: it is Ready as
// soon as the object exists, and never changes or deletes it.
func Observed(name, providerConfig string, manifest map[string]any) *composed.Unstructured {
	o := Object(name, providerConfig, manifest)
	spec := o.Object["spec"].(map[string]any) //nolint:forcetypeassert // set just above
	spec["managementPolicies"] = []any{"Observe"}
	spec["readiness"] = map[string]any{"policy": "SuccessfulCreate"}
	return o
}

// Detail is a value an Object publishes from the remote cluster into its
// connection secret in the management cluster. Secret data is decoded by
// provider-kubernetes, so the connection secret holds the plain value.
type Detail struct {
	APIVersion, Kind, Namespace, Name string
	// FieldPath in the remote object, such as data[clouds.yaml].
	FieldPath string
	// Key of the connection secret.
	Key string
}

// Publish makes the Object write details of remote objects into a Secret
// of the management cluster. The values never appear in the Object's
// status when provider-kubernetes runs with --sanitize-secrets (see the
// README's installation notes), which redacts Secret data there.
func Publish(o *composed.Unstructured, namespace, name string, details ...Detail) {
	spec := o.Object["spec"].(map[string]any) //nolint:forcetypeassert // Objects of this package
	spec["writeConnectionSecretToRef"] = map[string]any{"namespace": namespace, "name": name}
	cds := make([]any, 0, len(details))
	for _, d := range details {
		cds = append(cds, map[string]any{
			"apiVersion": d.APIVersion, "kind": d.Kind, "namespace": d.Namespace, "name": d.Name,
			"fieldPath": d.FieldPath, "toConnectionSecretKey": d.Key,
		})
	}
	spec["connectionDetails"] = cds
}
