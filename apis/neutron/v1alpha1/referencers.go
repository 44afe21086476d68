package v1alpha1

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ResolveReferences resolves the Keystone project this QuotaSet applies to.
func (mg *QuotaSet) ResolveReferences(ctx context.Context, c client.Reader) error {
	return mg.Spec.ForProvider.ProjectIDReference.Resolve(ctx, c, mg, "spec.forProvider.projectIDRef")
}
