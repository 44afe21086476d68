// Package client reconciles CephX clients: their caps, and their key,
// published only in the connection secret and rotated on request.
package client

import (
	"context"
	"fmt"
	"maps"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ceph"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// Setup adds the Client controller.
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.Ceph) error {
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("Client"), &v1alpha1.ClientList{},
		managed.WithTypedExternalConnector[*v1alpha1.Client](providerconfig.Connector[*v1alpha1.Client, *ceph.Client]{Client: pc.Client,
			External: func(c *ceph.Client) managed.TypedExternalClient[*v1alpha1.Client] {
				return &external{ceph: c, kube: mgr.GetClient(), live: mgr.GetAPIReader()}
			}}))
}

type external struct {
	ceph *ceph.Client
	kube client.Client
	// live reads past the cache (see Update).
	live client.Reader
}

func entity(mg *v1alpha1.Client) string { return "client." + mg.Spec.ForProvider.Entity }

// Observe finds the entity in the cluster's client list (shared by every
// Client's observation within half a poll; a write through the connection,
// such as Create's, drops it). CephX entities carry no metadata, so an
// existing one is this resource's only by its external name, or when
// crossplane's create-pending record (or an Observe-only policy) allows
// adopting it; any other is refused by Create.
func (e *external) Observe(ctx context.Context, mg *v1alpha1.Client) (managed.ExternalObservation, error) {
	name := entity(mg)
	clients, err := e.ceph.Clients(ctx)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	ent, ok := clients[name]
	if !ok {
		return managed.ExternalObservation{}, nil
	}
	adopted := false
	if meta.GetExternalName(mg) != name {
		if !pcontroller.MayAdopt(mg) {
			return managed.ExternalObservation{}, nil
		}
		meta.SetExternalName(mg, name)
		adopted = true
	}
	mg.SetConditions(xpv2.Available())
	p := mg.Spec.ForProvider
	upToDate := maps.Equal(ent.Caps, p.Caps) && p.RotateKey == mg.Status.AtProvider.KeyRotated
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate, ResourceLateInitialized: adopted,
		ConnectionDetails: managed.ConnectionDetails{
			v1alpha1.ConnectionSecretKeyKey:     []byte(ent.Key),
			v1alpha1.ConnectionSecretKeyEntity:  []byte(name),
			v1alpha1.ConnectionSecretKeyMonHost: []byte(e.ceph.MonHost),
		}}, nil
}

// Create adds the entity with a new key. The monitors check the caps first:
// bad caps are refused (terminal, with Ceph's parse error) and nothing is
// created.
func (e *external) Create(ctx context.Context, mg *v1alpha1.Client) (managed.ExternalCreation, error) {
	name := entity(mg)
	if _, err := e.ceph.GetEntity(ctx, name); err == nil {
		return managed.ExternalCreation{}, pcontroller.NameTaken(fmt.Sprintf("the CephX entity %q", name))
	} else if !ceph.IsNotFound(err) {
		return managed.ExternalCreation{}, err
	}
	// The name is recorded before the entity is asked for, as a Pool's is:
	// crossplane persists it even when Create fails, and a monitor that
	// answers too late (a loaded cluster: make e2e saw it) may still have
	// added the entity; Observe then finds it under this resource's name and
	// takes it as its own. Recorded only after, such an entity would be
	// "someone else's" for good.
	meta.SetExternalName(mg, name)
	if err := e.ceph.AddEntity(ctx, name, mg.Spec.ForProvider.Caps); err != nil {
		return managed.ExternalCreation{}, fmt.Errorf("cannot create %s (check spec.forProvider.caps): %w", name, err)
	}
	return managed.ExternalCreation{}, nil
}

// Update sets the caps and, when spec.forProvider.rotateKey changed, mints
// a new key; the connection secret gets it with the next observation.
func (e *external) Update(ctx context.Context, mg *v1alpha1.Client) (managed.ExternalUpdate, error) {
	name, p := entity(mg), mg.Spec.ForProvider
	ent, err := e.ceph.GetEntity(ctx, name)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	if !maps.Equal(ent.Caps, p.Caps) {
		if err := e.ceph.SetCaps(ctx, name, p.Caps); err != nil {
			return managed.ExternalUpdate{}, fmt.Errorf("cannot set the caps of %s (spec.forProvider.caps): %w", name, err)
		}
	}
	if p.RotateKey != mg.Status.AtProvider.KeyRotated {
		// A reconcile may begin from a cached copy older than the last
		// status write: the resource as the API server has it says
		// whether this rotateKey was already done.
		now := &v1alpha1.Client{}
		if err := e.live.Get(ctx, client.ObjectKeyFromObject(mg), now); err != nil {
			return managed.ExternalUpdate{}, err
		}
		if now.Status.AtProvider.KeyRotated == p.RotateKey {
			mg.Status.AtProvider.KeyRotated = p.RotateKey
			return managed.ExternalUpdate{}, nil
		}
		if err := e.ceph.RotateKey(ctx, name, p.Caps); err != nil {
			return managed.ExternalUpdate{}, fmt.Errorf("cannot rotate the key of %s: %w", name, err)
		}
		// Recorded at once, by a patch that needs no resourceVersion: the
		// reconciler's own status update after Update fails when this
		// reconcile began from a cached copy older than the last status
		// write, and the next reconcile, not seeing keyRotated, rotated
		// the key a second time (seen in .ci/run: the connection secret's
		// key replaced twice for one rotateKey).
		patch := fmt.Appendf(nil, `{"status":{"atProvider":{"keyRotated":%q}}}`, p.RotateKey)
		if err := e.kube.Status().Patch(ctx, mg, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return managed.ExternalUpdate{}, fmt.Errorf("rotated the key of %s, but cannot record it in status.atProvider.keyRotated: %w", name, err)
		}
		mg.Status.AtProvider.KeyRotated = p.RotateKey
	}
	return managed.ExternalUpdate{}, nil
}

func (e *external) Delete(ctx context.Context, mg *v1alpha1.Client) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	return managed.ExternalDelete{}, e.ceph.DeleteEntity(ctx, entity(mg))
}

func (e *external) Disconnect(context.Context) error { return nil }
