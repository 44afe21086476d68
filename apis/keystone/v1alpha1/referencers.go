package v1alpha1

import (
	"context"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reference"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// toProject is what ProjectIDs resolve to: a Project's external name, the
// ID Keystone assigned. A new one for every resolution: the resolver reads
// the referenced object into To.Managed, and reconciles run at once. One
// shared by all of them gave a cloud's QuotaSet another cloud's project ID
// (bench-scale at 1,000 clouds, stop 78), and resolved IDs are kept.
func toProject() reference.To { return reference.To{Managed: &Project{}, List: &ProjectList{}} }

// Resolve sets ProjectID from ProjectIDRef or ProjectIDSelector, on behalf of
// the managed resource mg that inlines this reference. field names the
// reference in error messages.
func (r *ProjectIDReference) Resolve(ctx context.Context, c client.Reader, mg resource.Managed, field string) error {
	return resolveID(ctx, c, mg, toProject(), &r.ProjectID, &r.ProjectIDRef, r.ProjectIDSelector, field)
}

// resolveID resolves one ID from a reference or selector to a kind whose
// external name is the ID. An ID given without a reference is kept; an ID
// resolved from a reference by name is resolved again at every reconcile
// (see followsReferences).
func resolveID(ctx context.Context, c client.Reader, mg resource.Managed, to reference.To, id *string, ref **xpv2.Reference, sel *xpv2.Selector, field string) error {
	current := *id
	if *ref != nil && followsReferences(**ref) {
		current = ""
	}
	rsp, err := reference.NewAPIResolver(c, mg).Resolve(ctx, reference.ResolutionRequest{
		CurrentValue: current, Reference: *ref, Selector: sel, To: to, Extract: reference.ExternalName(),
	})
	if err != nil {
		return errors.Wrapf(err, "cannot resolve %s", field)
	}
	*id, *ref = rsp.ResolvedValue, rsp.ResolvedReference
	return nil
}

// followsReferences says whether an ID resolved from ref is resolved again
// at every reconcile instead of kept once set, crossplane-runtime's default.
// A kept ID stays wrong for good once it was resolved wrong (stop 78: a
// race gave a cloud's QuotaSet another cloud's project), or once its Project
// was made again under a new ID; resolved again, it follows what the
// reference names, and the controllers move what they made (a grant, an
// aggregate's or a volume type's tenants, a credential's project) or say
// why they cannot (a QuotaSet). A read from the provider's cache each
// reconcile; the resource is written only when an ID changed. An Optional
// reference keeps its ID: resolved again while its object is missing, it
// would lose the ID and the reference.
func followsReferences(ref xpv2.Reference) bool {
	return !ref.Policy.IsResolutionPolicyOptional()
}

// ResolveProjectIDs resolves the Project references refs into IDs; IDs given
// without references are kept, and references by name are resolved again at
// every reconcile (see followsReferences). field names the references in
// error messages.
func ResolveProjectIDs(ctx context.Context, c client.Reader, mg resource.Managed, ids []string, refs []xpv2.Reference, field string) ([]string, []xpv2.Reference, error) {
	if len(refs) > 0 && !slices.ContainsFunc(refs, func(r xpv2.Reference) bool { return !followsReferences(r) }) {
		ids = nil
	}
	rsp, err := reference.NewAPIResolver(c, mg).ResolveMultiple(ctx, reference.MultiResolutionRequest{
		CurrentValues: ids,
		References:    refs,
		To:            toProject(),
		Extract:       reference.ExternalName(),
	})
	if err != nil {
		return nil, nil, errors.Wrapf(err, "cannot resolve %s", field)
	}
	return rsp.ResolvedValues, rsp.ResolvedReferences, nil
}

// toUser is what UserIDs resolve to: a User's external name, the ID
// Keystone assigned; a new one for every resolution, as toProject.
func toUser() reference.To { return reference.To{Managed: &User{}, List: &UserList{}} }

// Resolve sets UserID from UserIDRef or UserIDSelector, on behalf of the
// managed resource mg that inlines this reference.
func (r *UserIDReference) Resolve(ctx context.Context, c client.Reader, mg resource.Managed, field string) error {
	return resolveID(ctx, c, mg, toUser(), &r.UserID, &r.UserIDRef, r.UserIDSelector, field)
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

// The kinds references resolve to, as Referenced names them.
var (
	ProjectGroupVersionKind = SchemeGroupVersion.WithKind("Project")
	UserGroupVersionKind    = SchemeGroupVersion.WithKind("User")
)

// Referenced names the Project the reference resolves by name (see
// Resolve), so that the provider reconciles the resource that inlines it
// as soon as that Project has its ID. A selector names no Project until it
// is resolved.
func (r ProjectIDReference) Referenced() []xpv2.TypedReference {
	if r.ProjectIDRef == nil {
		return nil
	}
	return ReferencedProjects([]xpv2.Reference{*r.ProjectIDRef})
}

// Referenced names the User the reference resolves by name, as
// ProjectIDReference.Referenced does.
func (r UserIDReference) Referenced() []xpv2.TypedReference {
	if r.UserIDRef == nil {
		return nil
	}
	return []xpv2.TypedReference{typedReference(UserGroupVersionKind, r.UserIDRef.Name)}
}

// ReferencedProjects names the Projects of refs, as
// ProjectIDReference.Referenced does.
func ReferencedProjects(refs []xpv2.Reference) []xpv2.TypedReference {
	out := make([]xpv2.TypedReference, 0, len(refs))
	for _, r := range refs {
		out = append(out, typedReference(ProjectGroupVersionKind, r.Name))
	}
	return out
}

func typedReference(gvk schema.GroupVersionKind, name string) xpv2.TypedReference {
	return xpv2.TypedReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: name}
}

// Referenced names the user and the project the grant resolves by name.
func (mg *RoleAssignment) Referenced() []xpv2.TypedReference {
	return append(mg.Spec.ForProvider.UserIDReference.Referenced(), mg.Spec.ForProvider.ProjectIDReference.Referenced()...)
}

// Referenced names the user and the project the credential resolves by
// name.
func (mg *ApplicationCredential) Referenced() []xpv2.TypedReference {
	return append(mg.Spec.ForProvider.UserIDReference.Referenced(), mg.Spec.ForProvider.ProjectIDReference.Referenced()...)
}

// GrantedUser names the User a RoleAssignment grants its role to, when it
// names one by reference; nil for any other object. An application
// credential of that User waits for the grant too (Keystone refuses a
// credential with a role its user lacks), so the provider reconciles the
// User's credentials when the grant is made.
func GrantedUser(o client.Object) []xpv2.TypedReference {
	if g, ok := o.(*RoleAssignment); ok {
		return g.Spec.ForProvider.UserIDReference.Referenced()
	}
	return nil
}
