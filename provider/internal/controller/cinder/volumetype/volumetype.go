// Package volumetype reconciles Cinder volume types bound to one backend.
package volumetype

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumetypes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// keyBackend binds a type to a backend in Cinder's scheduler.
const keyBackend = "volume_backend_name"

// Setup adds the VolumeType controller; newClient builds its client from a session
// (openstack.NewBlockStorage, or a wrapper in tests).
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.OpenStack, newClient func(*openstack.Session) (openstack.BlockStorage, error)) error {
	created := &pcontroller.Created[volumetypes.VolumeType]{}
	c := providerconfig.Connector[*v1alpha1.VolumeType, openstack.BlockStorage]{
		Client: providerconfig.OpenStackClient(pc, newClient),
		External: func(c openstack.BlockStorage) managed.TypedExternalClient[*v1alpha1.VolumeType] {
			return &external{cinder: c, created: created}
		},
	}
	return pcontroller.SetupManagedReferencing(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("VolumeType"), &v1alpha1.VolumeTypeList{},
		[]pcontroller.Wake{{Object: &keystonev1alpha1.Project{}}}, managed.WithTypedExternalConnector[*v1alpha1.VolumeType](c))
}

type external struct {
	cinder  openstack.BlockStorage
	created *pcontroller.Created[volumetypes.VolumeType]
}

func (e *external) finder(name string) pcontroller.Finder[volumetypes.VolumeType] {
	return pcontroller.Finder[volumetypes.VolumeType]{
		Created: e.created,
		Get:     e.cinder.GetVolumeType,
		FindByName: func(ctx context.Context) (*volumetypes.VolumeType, error) {
			return e.cinder.FindVolumeType(ctx, name)
		},
		ID: func(v *volumetypes.VolumeType) string { return v.ID },
	}
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.VolumeType) (managed.ExternalObservation, error) {
	p := mg.Spec.ForProvider
	observed, adopted, err := e.finder(p.Name).Lookup(ctx, mg)
	if err != nil {
		return managed.ExternalObservation{}, openstack.Classify(err, "cannot get Cinder volume type %q", p.Name)
	}
	if observed == nil {
		return managed.ExternalObservation{}, nil
	}
	mg.Status.AtProvider = v1alpha1.VolumeTypeObservation{ID: observed.ID}
	mg.SetConditions(xpv2.Available())
	upToDate := p.Name == observed.Name && p.Description == observed.Description && isPublic(p) == observed.IsPublic
	if set, del := specChanges(desiredSpecs(p), observed.ExtraSpecs); len(set)+len(del) > 0 {
		upToDate = false
	}
	if upToDate && !isPublic(p) {
		have, err := e.cinder.ListAccess(ctx, observed.ID)
		if err != nil {
			return managed.ExternalObservation{}, openstack.Classify(err, "cannot list the projects of Cinder volume type %q", p.Name)
		}
		add, remove := pcontroller.SetDiff(p.AccessProjectIDs, have)
		upToDate = len(add)+len(remove) == 0
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate, ResourceLateInitialized: adopted}, nil
}

// Create checks that a cinder-volume service serves the backend before it
// creates anything: a type bound to no backend accepts volume requests that
// then fail in the scheduler, long after the mistake.
func (e *external) Create(ctx context.Context, mg *v1alpha1.VolumeType) (managed.ExternalCreation, error) {
	p := mg.Spec.ForProvider
	if err := e.checkBackend(ctx, p.BackendName); err != nil {
		return managed.ExternalCreation{}, err
	}
	public := isPublic(p)
	created, err := e.finder(p.Name).Create(ctx, mg, func(ctx context.Context) (*volumetypes.VolumeType, error) {
		return e.cinder.CreateVolumeType(ctx, volumetypes.CreateOpts{
			Name: p.Name, Description: p.Description, IsPublic: &public, ExtraSpecs: desiredSpecs(p),
		})
	})
	if openstack.IsConflict(err) {
		return managed.ExternalCreation{}, pcontroller.NameTaken(fmt.Sprintf("a Cinder volume type named %q", p.Name))
	}
	if err != nil {
		return managed.ExternalCreation{}, openstack.Classify(err, "cannot create Cinder volume type %q", p.Name)
	}
	meta.SetExternalName(mg, created.ID)
	return managed.ExternalCreation{}, nil
}

func (e *external) checkBackend(ctx context.Context, backend string) error {
	backends, err := e.cinder.Backends(ctx)
	if err != nil {
		return openstack.Classify(err, "cannot list Cinder's volume backends")
	}
	if !slices.Contains(backends, backend) {
		served := strings.Join(backends, ", ")
		if served == "" {
			served = "none"
		}
		return openstack.Terminal(fmt.Errorf("spec.forProvider.backendName %q is served by no cinder-volume service (backends: %s)", backend, served))
	}
	return nil
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.VolumeType) (managed.ExternalUpdate, error) {
	p := mg.Spec.ForProvider
	id := meta.GetExternalName(mg)
	observed, err := e.cinder.GetVolumeType(ctx, id)
	if err != nil {
		return managed.ExternalUpdate{}, openstack.Classify(err, "cannot get Cinder volume type %q", p.Name)
	}
	if observed.ExtraSpecs[keyBackend] != p.BackendName {
		if err := e.checkBackend(ctx, p.BackendName); err != nil {
			return managed.ExternalUpdate{}, err
		}
	}
	public := isPublic(p)
	if p.Name != observed.Name || p.Description != observed.Description || public != observed.IsPublic {
		if _, err := e.cinder.UpdateVolumeType(ctx, id, volumetypes.UpdateOpts{Name: &p.Name, Description: &p.Description, IsPublic: &public}); err != nil {
			return managed.ExternalUpdate{}, openstack.Classify(err, "cannot update Cinder volume type %q", p.Name)
		}
	}
	set, del := specChanges(desiredSpecs(p), observed.ExtraSpecs)
	if len(set) > 0 {
		if err := e.cinder.SetExtraSpecs(ctx, id, set); err != nil {
			return managed.ExternalUpdate{}, openstack.Classify(err, "cannot set extra specs of Cinder volume type %q", p.Name)
		}
	}
	for _, k := range del {
		if err := e.cinder.DeleteExtraSpec(ctx, id, k); err != nil && !openstack.IsNotFound(err) {
			return managed.ExternalUpdate{}, openstack.Classify(err, "cannot delete extra spec %q of Cinder volume type %q", k, p.Name)
		}
	}
	if public {
		return managed.ExternalUpdate{}, nil
	}
	have, err := e.cinder.ListAccess(ctx, id)
	if err != nil {
		return managed.ExternalUpdate{}, openstack.Classify(err, "cannot list the projects of Cinder volume type %q", p.Name)
	}
	add, remove := pcontroller.SetDiff(p.AccessProjectIDs, have)
	for _, project := range add {
		if err := e.cinder.AddAccess(ctx, id, project); err != nil {
			return managed.ExternalUpdate{}, openstack.Classify(err, "cannot grant project %s Cinder volume type %q", project, p.Name)
		}
	}
	for _, project := range remove {
		if err := e.cinder.RemoveAccess(ctx, id, project); err != nil && !openstack.IsNotFound(err) {
			return managed.ExternalUpdate{}, openstack.Classify(err, "cannot revoke project %s from Cinder volume type %q", project, p.Name)
		}
	}
	return managed.ExternalUpdate{}, nil
}

func (e *external) Delete(ctx context.Context, mg *v1alpha1.VolumeType) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	err := e.cinder.DeleteVolumeType(ctx, meta.GetExternalName(mg))
	if openstack.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, openstack.Classify(err, "cannot delete Cinder volume type %q (volumes of this type must be gone first)", mg.Spec.ForProvider.Name)
}

func (e *external) Disconnect(context.Context) error { return nil }

func isPublic(p v1alpha1.VolumeTypeParameters) bool { return p.IsPublic == nil || *p.IsPublic }

// desiredSpecs are the spec's extra specs with the backend binding.
func desiredSpecs(p v1alpha1.VolumeTypeParameters) map[string]string {
	specs := maps.Clone(p.ExtraSpecs)
	if specs == nil {
		specs = map[string]string{}
	}
	specs[keyBackend] = p.BackendName
	return specs
}

// specChanges returns the extra specs to set and the keys to delete.
func specChanges(desired, observed map[string]string) (set map[string]string, del []string) {
	set = map[string]string{}
	for k, v := range desired {
		if ov, ok := observed[k]; !ok || ov != v {
			set[k] = v
		}
	}
	for k := range observed {
		if _, ok := desired[k]; !ok {
			del = append(del, k)
		}
	}
	sort.Strings(del)
	return set, del
}
