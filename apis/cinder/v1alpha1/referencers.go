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

// ResolveReferences resolves the Keystone projects granted a private type.
func (mg *VolumeType) ResolveReferences(ctx context.Context, c client.Reader) error {
	p := &mg.Spec.ForProvider
	ids, refs, err := keystonev1alpha1.ResolveProjectIDs(ctx, c, mg, p.AccessProjectIDs, p.AccessProjectIDRefs, "spec.forProvider.accessProjectIDRefs")
	if err != nil {
		return err
	}
	p.AccessProjectIDs, p.AccessProjectIDRefs = ids, refs
	return nil
}
