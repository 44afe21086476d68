package function

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	corev1 "k8s.io/api/core/v1"
)

// Labels Crossplane sets on a claimed composite.
const (
	LabelClaimName      = "crossplane.io/claim-name"
	LabelClaimNamespace = "crossplane.io/claim-namespace"
)

// ClusterName is the name clouds know a pool or control-plane cluster by:
// its claim's name (labels of the composite), or the composite's own name
// when it has no claim.
func ClusterName(labels map[string]string, composite string) string {
	if n := labels[LabelClaimName]; n != "" {
		return n
	}
	return composite
}

// ObservedReady reports whether a composed resource is observed with its
// Ready condition True.
func ObservedReady(observed map[resource.Name]resource.ObservedComposed, name resource.Name) bool {
	o, ok := observed[name]
	return ok && o.Resource.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue
}
