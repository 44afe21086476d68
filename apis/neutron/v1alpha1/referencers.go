package v1alpha1

import (
	"context"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ResolveReferences resolves the Keystone project this QuotaSet applies to.
func (mg *QuotaSet) ResolveReferences(ctx context.Context, c client.Reader) error {
	return mg.Spec.ForProvider.ProjectIDReference.Resolve(ctx, c, mg, "spec.forProvider.projectIDRef")
}

// Referenced names the Project the QuotaSet resolves by name, so that the
// provider reconciles it as soon as that Project has its ID.
func (mg *QuotaSet) Referenced() []xpv2.TypedReference {
	return mg.Spec.ForProvider.ProjectIDReference.Referenced()
}
