package v1alpha1

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
)

// ResolveReferences resolves the Keystone project this QuotaSet applies to.
func (mg *QuotaSet) ResolveReferences(ctx context.Context, c client.Reader) error {
	return mg.Spec.ForProvider.ProjectIDReference.Resolve(ctx, c, mg, "spec.forProvider.projectIDRef")
}

// ResolveReferences resolves the Keystone projects the aggregate is limited to.
func (mg *Aggregate) ResolveReferences(ctx context.Context, c client.Reader) error {
	p := &mg.Spec.ForProvider
	ids, refs, err := keystonev1alpha1.ResolveProjectIDs(ctx, c, mg, p.FilterTenantIDs, p.FilterTenantIDRefs, "spec.forProvider.filterTenantIDRefs")
	if err != nil {
		return err
	}
	p.FilterTenantIDs, p.FilterTenantIDRefs = ids, refs
	return nil
}
