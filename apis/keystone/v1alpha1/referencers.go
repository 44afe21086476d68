package v1alpha1

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reference"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ProjectIDs resolve to a Project's external name, the ID Keystone assigned.
var toProject = reference.To{Managed: &Project{}, List: &ProjectList{}}

// Resolve sets ProjectID from ProjectIDRef or ProjectIDSelector, on behalf of
// the managed resource mg that inlines this reference. field names the
// reference in error messages.
func (r *ProjectIDReference) Resolve(ctx context.Context, c client.Reader, mg resource.Managed, field string) error {
	return resolveID(ctx, c, mg, toProject, &r.ProjectID, &r.ProjectIDRef, r.ProjectIDSelector, field)
}

// resolveID resolves one ID from a reference or selector to a kind whose
// external name is the ID, keeping an ID already given.
func resolveID(ctx context.Context, c client.Reader, mg resource.Managed, to reference.To, id *string, ref **xpv2.Reference, sel *xpv2.Selector, field string) error {
	rsp, err := reference.NewAPIResolver(c, mg).Resolve(ctx, reference.ResolutionRequest{
		CurrentValue: *id, Reference: *ref, Selector: sel, To: to, Extract: reference.ExternalName(),
	})
	if err != nil {
		return errors.Wrapf(err, "cannot resolve %s", field)
	}
	*id, *ref = rsp.ResolvedValue, rsp.ResolvedReference
	return nil
}

// ResolveProjectIDs resolves the Project references refs into IDs, keeping
// the IDs already given. field names the references in error messages.
func ResolveProjectIDs(ctx context.Context, c client.Reader, mg resource.Managed, ids []string, refs []xpv2.Reference, field string) ([]string, []xpv2.Reference, error) {
	rsp, err := reference.NewAPIResolver(c, mg).ResolveMultiple(ctx, reference.MultiResolutionRequest{
		CurrentValues: ids,
		References:    refs,
		To:            toProject,
		Extract:       reference.ExternalName(),
	})
	if err != nil {
		return nil, nil, errors.Wrapf(err, "cannot resolve %s", field)
	}
	return rsp.ResolvedValues, rsp.ResolvedReferences, nil
}

// UserIDs resolve to a User's external name, the ID Keystone assigned.
var toUser = reference.To{Managed: &User{}, List: &UserList{}}

// Resolve sets UserID from UserIDRef or UserIDSelector, on behalf of the
// managed resource mg that inlines this reference.
func (r *UserIDReference) Resolve(ctx context.Context, c client.Reader, mg resource.Managed, field string) error {
	return resolveID(ctx, c, mg, toUser, &r.UserID, &r.UserIDRef, r.UserIDSelector, field)
}

// ResolveReferences resolves the user and the project of the grant.
func (mg *RoleAssignment) ResolveReferences(ctx context.Context, c client.Reader) error {
	p := &mg.Spec.ForProvider
	if p.GroupID == "" {
		if err := p.UserIDReference.Resolve(ctx, c, mg, "spec.forProvider.userIDRef"); err != nil {
			return err
		}
	}
	if p.DomainID == "" {
		return p.ProjectIDReference.Resolve(ctx, c, mg, "spec.forProvider.projectIDRef")
	}
	return nil
}

// ResolveReferences resolves the user and the project of the credential.
func (mg *ApplicationCredential) ResolveReferences(ctx context.Context, c client.Reader) error {
	p := &mg.Spec.ForProvider
	if err := p.UserIDReference.Resolve(ctx, c, mg, "spec.forProvider.userIDRef"); err != nil {
		return err
	}
	return p.ProjectIDReference.Resolve(ctx, c, mg, "spec.forProvider.projectIDRef")
}
