// Package project reconciles Keystone projects.
package project

import (
	"context"
	"fmt"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// Setup adds the Project controller; newClient builds its client from a session
// (openstack.NewIdentity, or a wrapper in tests).
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.OpenStack, newClient func(*openstack.Session) (openstack.Identity, error)) error {
	created := &pcontroller.Created[projects.Project]{}
	c := providerconfig.Connector[*v1alpha1.Project, openstack.Identity]{
		Client: providerconfig.OpenStackClient(pc, newClient),
		External: func(c openstack.Identity) managed.TypedExternalClient[*v1alpha1.Project] {
			return &external{keystone: c, created: created}
		},
	}
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("Project"), &v1alpha1.ProjectList{},
		managed.WithTypedExternalConnector[*v1alpha1.Project](c))
}

type external struct {
	keystone openstack.Identity
	created  *pcontroller.Created[projects.Project]
}

func (e *external) finder(p v1alpha1.ProjectParameters) pcontroller.Finder[projects.Project] {
	return pcontroller.Finder[projects.Project]{
		Created: e.created,
		Get:     e.keystone.GetProject,
		FindByName: func(ctx context.Context) (*projects.Project, error) {
			return e.keystone.FindProject(ctx, domainOf(p), p.Name)
		},
		ID: func(p *projects.Project) string { return p.ID },
	}
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.Project) (managed.ExternalObservation, error) {
	p := &mg.Spec.ForProvider
	observed, adopted, err := e.finder(*p).Lookup(ctx, mg)
	if err != nil {
		return managed.ExternalObservation{}, openstack.Classify(err, "cannot get Keystone project %q", p.Name)
	}
	if observed == nil {
		return managed.ExternalObservation{}, nil
	}
	if observed.DomainID != domainOf(*p) {
		return managed.ExternalObservation{}, openstack.Terminal(fmt.Errorf("keystone project %s is in domain %q, not spec.forProvider.domainID %q", observed.ID, observed.DomainID, domainOf(*p)))
	}
	mg.Status.AtProvider = v1alpha1.ProjectObservation{ID: observed.ID}
	mg.SetConditions(xpv2.Available())
	lateInit := lateInitialize(p, observed)
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        !needsUpdate(*p, observed),
		ResourceLateInitialized: lateInit || adopted,
	}, nil
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.Project) (managed.ExternalCreation, error) {
	p := mg.Spec.ForProvider
	created, err := e.finder(p).Create(ctx, mg, func(ctx context.Context) (*projects.Project, error) {
		return e.keystone.CreateProject(ctx, projects.CreateOpts{
			Name: p.Name, DomainID: domainOf(p), Description: p.Description, Enabled: p.Enabled, Tags: p.Tags,
		})
	})
	if openstack.IsConflict(err) {
		return managed.ExternalCreation{}, e.nameTaken(ctx, p)
	}
	if err != nil {
		return managed.ExternalCreation{}, openstack.Classify(err, "cannot create Keystone project %q", p.Name)
	}
	meta.SetExternalName(mg, created.ID)
	return managed.ExternalCreation{}, nil
}

// nameTaken explains a 409: the name belongs to a project this resource did
// not create, which it will not silently take over.
func (e *external) nameTaken(ctx context.Context, p v1alpha1.ProjectParameters) error {
	id := "unknown"
	if other, err := e.keystone.FindProject(ctx, domainOf(p), p.Name); err == nil && other != nil {
		id = other.ID
	}
	return pcontroller.NameTaken(fmt.Sprintf("a Keystone project named %q in domain %q (ID %s)", p.Name, domainOf(p), id))
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.Project) (managed.ExternalUpdate, error) {
	p := mg.Spec.ForProvider
	tags := p.Tags
	if tags == nil {
		tags = []string{}
	}
	_, err := e.keystone.UpdateProject(ctx, meta.GetExternalName(mg), projects.UpdateOpts{
		Name: p.Name, Description: &p.Description, Enabled: p.Enabled, Tags: &tags,
	})
	return managed.ExternalUpdate{}, openstack.Classify(err, "cannot update Keystone project %q", p.Name)
}

func (e *external) Delete(ctx context.Context, mg *v1alpha1.Project) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	err := e.keystone.DeleteProject(ctx, meta.GetExternalName(mg))
	if openstack.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, openstack.Classify(err, "cannot delete Keystone project %q", mg.Spec.ForProvider.Name)
}

func (e *external) Disconnect(context.Context) error { return nil }

func domainOf(p v1alpha1.ProjectParameters) string {
	if p.DomainID == "" {
		return "default"
	}
	return p.DomainID
}

// needsUpdate compares what the spec manages with Keystone's project.
func needsUpdate(p v1alpha1.ProjectParameters, o *projects.Project) bool {
	enabled := p.Enabled == nil || *p.Enabled
	return p.Name != o.Name || p.Description != o.Description || enabled != o.Enabled || !sameSet(p.Tags, o.Tags)
}

// lateInitialize fills unset optional fields from Keystone.
func lateInitialize(p *v1alpha1.ProjectParameters, o *projects.Project) bool {
	if p.Enabled != nil {
		return false
	}
	enabled := o.Enabled
	p.Enabled = &enabled
	return true
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
