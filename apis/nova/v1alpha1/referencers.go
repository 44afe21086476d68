package v1alpha1

import (
	"context"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
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

// Referenced names the Project the QuotaSet resolves by name, so that the
// provider reconciles it as soon as that Project has its ID.
func (mg *QuotaSet) Referenced() []xpv2.TypedReference {
	return mg.Spec.ForProvider.ProjectIDReference.Referenced()
}

// Referenced names the Projects the aggregate resolves by name.
func (mg *Aggregate) Referenced() []xpv2.TypedReference {
	return keystonev1alpha1.ReferencedProjects(mg.Spec.ForProvider.FilterTenantIDRefs)
}
