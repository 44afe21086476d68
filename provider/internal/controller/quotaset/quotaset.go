// Package quotaset reconciles the quota sets of Nova, Cinder and Neutron.
// The three differ only in their service and the quota names they manage,
// so one reconciler serves all three kinds.
//
// A quota set always exists for a project; "creating" one sets the limits
// the spec names and records the project ID as the external name, and
// deleting one returns the project to the cloud's defaults.
package quotaset

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/gophercloud/gophercloud/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// A Kind is one service's QuotaSet managed resource.
type Kind[T resource.LegacyManaged] struct {
	GVK  schema.GroupVersionKind
	List resource.ManagedList
	// Service names the service in messages ("Nova").
	Service string
	// NewQuotas returns the service's quota client.
	NewQuotas func(*openstack.Session) (openstack.Quotas, error)
	// ProjectID is the resolved project of a QuotaSet.
	ProjectID func(T) string
	// Limits are the spec's limits by the service's quota names; nil ones
	// are left to the cloud's defaults.
	Limits func(T) map[string]*int64
	// SetObservation records the project the quotas apply to.
	SetObservation func(T, string)
}

// Setup adds the controller of one QuotaSet kind.
func Setup[T resource.LegacyManaged](mgr ctrl.Manager, o controller.Options, pc providerconfig.OpenStack, k Kind[T]) error {
	c := providerconfig.Connector[T, openstack.Quotas]{
		Client:   providerconfig.OpenStackClient(pc, k.NewQuotas),
		External: func(q openstack.Quotas) managed.TypedExternalClient[T] { return &external[T]{quotas: q, kind: k} },
	}
	return pcontroller.SetupManagedReferencing(mgr, o, k.GVK, k.List, []pcontroller.Wake{{Object: &keystonev1alpha1.Project{}}}, managed.WithTypedExternalConnector[T](c))
}

type external[T resource.LegacyManaged] struct {
	quotas openstack.Quotas
	kind   Kind[T]
}

func (e *external[T]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	if pcontroller.DeletionDone(mg) {
		return managed.ExternalObservation{}, nil
	}
	project := e.kind.ProjectID(mg)
	applied, adopted := meta.GetExternalName(mg), false
	if applied == "" && pcontroller.MayAdopt(mg) {
		// Observe-only: the quotas of the project exist; watch them.
		applied, adopted = project, true
		meta.SetExternalName(mg, project)
	}
	if applied == "" {
		return managed.ExternalObservation{}, nil
	}
	if applied != project {
		return managed.ExternalObservation{}, openstack.Terminal(fmt.Errorf(
			"spec.forProvider project changed from %s to %s: a quota set cannot move between projects; delete this %s QuotaSet and create one for the new project",
			applied, project, e.kind.Service))
	}
	have, err := e.quotas.Get(ctx, project)
	if err != nil {
		if meta.WasDeleted(mg) && projectGone(err) {
			// The project went first (a cloud's resources are deleted
			// together), and its quotas with it: nothing is left to reset.
			return managed.ExternalObservation{}, nil
		}
		return managed.ExternalObservation{}, openstack.Classify(err, "cannot get the %s quotas of project %s", e.kind.Service, project)
	}
	e.kind.SetObservation(mg, project)
	mg.SetConditions(xpv2.Available())
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        len(changes(e.kind.Limits(mg), have)) == 0,
		ResourceLateInitialized: adopted,
	}, nil
}

func (e *external[T]) Create(ctx context.Context, mg T) (managed.ExternalCreation, error) {
	project := e.kind.ProjectID(mg)
	if project == "" {
		return managed.ExternalCreation{}, openstack.Terminal(fmt.Errorf("spec.forProvider names no project: set projectID, projectIDRef or projectIDSelector"))
	}
	if err := e.apply(ctx, mg, project, nil); err != nil {
		return managed.ExternalCreation{}, err
	}
	meta.SetExternalName(mg, project)
	return managed.ExternalCreation{}, nil
}

func (e *external[T]) Update(ctx context.Context, mg T) (managed.ExternalUpdate, error) {
	project := e.kind.ProjectID(mg)
	have, err := e.quotas.Get(ctx, project)
	if err != nil {
		return managed.ExternalUpdate{}, openstack.Classify(err, "cannot get the %s quotas of project %s", e.kind.Service, project)
	}
	return managed.ExternalUpdate{}, e.apply(ctx, mg, project, have)
}

// apply sets the limits that differ from have (all of them when have is nil).
func (e *external[T]) apply(ctx context.Context, mg T, project string, have map[string]int64) error {
	want := e.kind.Limits(mg)
	if have != nil {
		want = changes(want, have)
	}
	limits := map[string]int64{}
	for k, v := range want {
		if v != nil {
			limits[k] = *v
		}
	}
	if len(limits) == 0 {
		return nil
	}
	return openstack.Classify(e.quotas.Update(ctx, project, limits), "cannot set the %s quotas of project %s", e.kind.Service, project)
}

func (e *external[T]) Delete(ctx context.Context, mg T) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	project := meta.GetExternalName(mg)
	err := e.quotas.Reset(ctx, project)
	if projectGone(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, openstack.Classify(err, "cannot reset the %s quotas of project %s to the defaults", e.kind.Service, project)
}

func (e *external[T]) Disconnect(context.Context) error { return nil }

// projectGone recognises the answer for quotas of a project that no longer
// exists: 404, or Nova's 400 "Project ID … is not a valid project" (Nova
// checks the project with Keystone; Cinder and Neutron do not).
func projectGone(err error) bool {
	return openstack.IsNotFound(err) || (gophercloud.ResponseCodeIs(err, http.StatusBadRequest) && strings.Contains(err.Error(), "is not a valid project"))
}

// changes are the desired limits that differ from the observed ones.
func changes(want map[string]*int64, have map[string]int64) map[string]*int64 {
	diff := map[string]*int64{}
	for k, v := range want {
		if v == nil {
			continue
		}
		if h, ok := have[k]; !ok || h != *v {
			diff[k] = v
		}
	}
	return diff
}
