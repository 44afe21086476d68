// Package roleassignment reconciles Keystone role assignments (grants).
package roleassignment

import (
	"context"
	"fmt"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// Setup adds the RoleAssignment controller; newClient builds its client from
// a session (openstack.NewIdentity, or a wrapper in tests).
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.OpenStack, newClient func(*openstack.Session) (openstack.Identity, error)) error {
	c := providerconfig.Connector[*v1alpha1.RoleAssignment, openstack.Identity]{
		Client: providerconfig.OpenStackClient(pc, newClient),
		External: func(c openstack.Identity) managed.TypedExternalClient[*v1alpha1.RoleAssignment] {
			return &external{keystone: c}
		},
	}
	// Keystone's grants are read from its database, never stale, and
	// granting is idempotent: a grant found missing right after it was
	// made is missing, and is granted again without the grace period
	// crossplane gives eventually consistent APIs (which, under its
	// backoff, stretched a repair to minutes).
	wakes := []pcontroller.Wake{{Object: &v1alpha1.Project{}}, {Object: &v1alpha1.User{}}}
	return pcontroller.SetupManagedReferencing(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("RoleAssignment"), &v1alpha1.RoleAssignmentList{}, wakes,
		managed.WithTypedExternalConnector[*v1alpha1.RoleAssignment](c), managed.WithCreationGracePeriod(0))
}

type external struct{ keystone openstack.Identity }

// A grant is a role on a scope for an actor. Keystone gives it no ID; its
// external name spells it out, so a changed spec can revoke the old one.
type grant struct {
	roleID string
	opts   roles.AssignOpts
}

func (g grant) String() string {
	scope, scopeID := "project", g.opts.ProjectID
	if g.opts.DomainID != "" {
		scope, scopeID = "domain", g.opts.DomainID
	}
	actor, actorID := "user", g.opts.UserID
	if g.opts.GroupID != "" {
		actor, actorID = "group", g.opts.GroupID
	}
	return strings.Join([]string{scope, scopeID, actor, actorID, g.roleID}, "/")
}

// parse reads an external name back into a grant.
func parse(name string) (grant, bool) {
	f := strings.Split(name, "/")
	if len(f) != 5 || f[1] == "" || f[3] == "" || f[4] == "" {
		return grant{}, false
	}
	g := grant{roleID: f[4]}
	switch f[0] {
	case "project":
		g.opts.ProjectID = f[1]
	case "domain":
		g.opts.DomainID = f[1]
	default:
		return grant{}, false
	}
	switch f[2] {
	case "user":
		g.opts.UserID = f[3]
	case "group":
		g.opts.GroupID = f[3]
	default:
		return grant{}, false
	}
	return g, true
}

// desired resolves the spec into a grant; the role is looked up by name.
func (e *external) desired(ctx context.Context, p v1alpha1.RoleAssignmentParameters) (grant, error) {
	if (p.UserID == "") == (p.GroupID == "") {
		return grant{}, openstack.Terminal(fmt.Errorf("spec.forProvider must name exactly one of a user (userID or a resolved userIDRef) and a groupID"))
	}
	if (p.ProjectID == "") == (p.DomainID == "") {
		return grant{}, openstack.Terminal(fmt.Errorf("spec.forProvider must name exactly one of a project (projectID or a resolved projectIDRef) and a domainID"))
	}
	role, err := e.keystone.FindRole(ctx, p.RoleDomainID, p.Role)
	if err != nil {
		return grant{}, openstack.Classify(err, "cannot look up Keystone role %q", p.Role)
	}
	if role == nil {
		where := "among the global roles"
		if p.RoleDomainID != "" {
			where = "in domain " + p.RoleDomainID
		}
		return grant{}, openstack.Terminal(fmt.Errorf("spec.forProvider.role: Keystone has no role %q %s", p.Role, where))
	}
	return grant{roleID: role.ID, opts: roles.AssignOpts{UserID: p.UserID, GroupID: p.GroupID, ProjectID: p.ProjectID, DomainID: p.DomainID}}, nil
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.RoleAssignment) (managed.ExternalObservation, error) {
	g, err := e.desired(ctx, mg.Spec.ForProvider)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	// A grant whose spec changed is another grant: Create revokes the old.
	if name := meta.GetExternalName(mg); name != "" && name != g.String() {
		return managed.ExternalObservation{}, nil
	}
	ok, err := e.keystone.HasGrant(ctx, g.roleID, g.opts)
	if err != nil {
		return managed.ExternalObservation{}, openstack.Classify(err, "cannot check Keystone grant %s", g)
	}
	if !ok {
		return managed.ExternalObservation{}, nil
	}
	recorded := meta.GetExternalName(mg) == g.String()
	meta.SetExternalName(mg, g.String())
	mg.Status.AtProvider.RoleID = g.roleID
	mg.SetConditions(xpv2.Available())
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ResourceLateInitialized: !recorded}, nil
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.RoleAssignment) (managed.ExternalCreation, error) {
	g, err := e.desired(ctx, mg.Spec.ForProvider)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	if old, ok := parse(meta.GetExternalName(mg)); ok && old.String() != g.String() {
		if err := e.revoke(ctx, old); err != nil {
			return managed.ExternalCreation{}, err
		}
	}
	if err := e.keystone.Grant(ctx, g.roleID, g.opts); err != nil {
		return managed.ExternalCreation{}, openstack.Classify(err, "cannot grant Keystone role %q (%s)", mg.Spec.ForProvider.Role, g)
	}
	meta.SetExternalName(mg, g.String())
	return managed.ExternalCreation{}, nil
}

// Update has nothing to do: a grant has no properties, and a changed spec is
// a new grant (Observe reports it missing, Create replaces the old).
func (e *external) Update(context.Context, *v1alpha1.RoleAssignment) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, nil
}

func (e *external) Delete(ctx context.Context, mg *v1alpha1.RoleAssignment) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	g, ok := parse(meta.GetExternalName(mg))
	if !ok {
		// Never granted by this resource (no grant recorded), or granted
		// under a name this version cannot read: resolve it from the spec.
		var err error
		if g, err = e.desired(ctx, mg.Spec.ForProvider); err != nil {
			return managed.ExternalDelete{}, err
		}
	}
	return managed.ExternalDelete{}, e.revoke(ctx, g)
}

func (e *external) revoke(ctx context.Context, g grant) error {
	err := e.keystone.Revoke(ctx, g.roleID, g.opts)
	if err == nil || openstack.IsNotFound(err) {
		return nil
	}
	return openstack.Classify(err, "cannot revoke Keystone grant %s", g)
}

func (e *external) Disconnect(context.Context) error { return nil }
