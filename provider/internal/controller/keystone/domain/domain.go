// Package domain reconciles Keystone domains.
package domain

import (
	"context"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/domains"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// Setup adds the Domain controller; newClient builds its client from a session
// (openstack.NewIdentity, or a wrapper in tests).
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.OpenStack, newClient func(*openstack.Session) (openstack.Identity, error)) error {
	created := &pcontroller.Created[domains.Domain]{}
	c := providerconfig.Connector[*v1alpha1.Domain, openstack.Identity]{
		Client: providerconfig.OpenStackClient(pc, newClient),
		External: func(c openstack.Identity) managed.TypedExternalClient[*v1alpha1.Domain] {
			return &external{keystone: c, created: created}
		},
	}
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("Domain"), &v1alpha1.DomainList{},
		managed.WithTypedExternalConnector[*v1alpha1.Domain](c))
}

type external struct {
	keystone openstack.Identity
	created  *pcontroller.Created[domains.Domain]
}

func (e *external) finder(name string) pcontroller.Finder[domains.Domain] {
	return pcontroller.Finder[domains.Domain]{
		Created:    e.created,
		Get:        e.keystone.GetDomain,
		FindByName: func(ctx context.Context) (*domains.Domain, error) { return e.keystone.FindDomain(ctx, name) },
		ID:         func(d *domains.Domain) string { return d.ID },
	}
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.Domain) (managed.ExternalObservation, error) {
	p := &mg.Spec.ForProvider
	observed, adopted, err := e.finder(p.Name).Lookup(ctx, mg)
	if err != nil {
		return managed.ExternalObservation{}, openstack.Classify(err, "cannot get Keystone domain %q", p.Name)
	}
	if observed == nil {
		return managed.ExternalObservation{}, nil
	}
	mg.Status.AtProvider = v1alpha1.DomainObservation{ID: observed.ID}
	mg.SetConditions(xpv2.Available())
	lateInit := false
	if p.Enabled == nil {
		enabled := observed.Enabled
		p.Enabled, lateInit = &enabled, true
	}
	enabled := p.Enabled == nil || *p.Enabled
	upToDate := p.Name == observed.Name && p.Description == observed.Description && enabled == observed.Enabled
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate, ResourceLateInitialized: lateInit || adopted}, nil
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.Domain) (managed.ExternalCreation, error) {
	p := mg.Spec.ForProvider
	created, err := e.finder(p.Name).Create(ctx, mg, func(ctx context.Context) (*domains.Domain, error) {
		return e.keystone.CreateDomain(ctx, domains.CreateOpts{Name: p.Name, Description: p.Description, Enabled: p.Enabled})
	})
	if openstack.IsConflict(err) {
		return managed.ExternalCreation{}, pcontroller.NameTaken(fmt.Sprintf("a Keystone domain named %q", p.Name))
	}
	if err != nil {
		return managed.ExternalCreation{}, openstack.Classify(err, "cannot create Keystone domain %q", p.Name)
	}
	meta.SetExternalName(mg, created.ID)
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.Domain) (managed.ExternalUpdate, error) {
	p := mg.Spec.ForProvider
	_, err := e.keystone.UpdateDomain(ctx, meta.GetExternalName(mg), domains.UpdateOpts{Name: p.Name, Description: &p.Description, Enabled: p.Enabled})
	return managed.ExternalUpdate{}, openstack.Classify(err, "cannot update Keystone domain %q", p.Name)
}

// Delete disables the domain first: Keystone refuses to delete an enabled one.
func (e *external) Delete(ctx context.Context, mg *v1alpha1.Domain) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	id := meta.GetExternalName(mg)
	disabled := false
	_, err := e.keystone.UpdateDomain(ctx, id, domains.UpdateOpts{Enabled: &disabled})
	if err == nil {
		err = e.keystone.DeleteDomain(ctx, id)
	}
	if openstack.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, openstack.Classify(err, "cannot delete Keystone domain %q", mg.Spec.ForProvider.Name)
}

func (e *external) Disconnect(context.Context) error { return nil }
