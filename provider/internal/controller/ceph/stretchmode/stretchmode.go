// Package stretchmode reconciles Ceph's stretch mode: it enables it once the
// cluster stands in two zones with one tiebreaker monitor, and reports it.
package stretchmode

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ceph"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// ReasonWaitingForCluster: the cluster is not yet one stretch mode can be
// enabled in (the condition's message says what it lacks).
const ReasonWaitingForCluster xpv2.ConditionReason = "WaitingForCluster"

// Setup adds the StretchMode controller.
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.Ceph) error {
	// A deleted StretchMode changes nothing in Ceph (see the type's doc), so
	// it goes without reaching a Ceph whose access may be gone with it: a
	// pool's Ceph credentials are deleted alongside its StretchMode.
	client := func(ctx context.Context, mg resource.LegacyManaged) (*ceph.Client, error) {
		if meta.WasDeleted(mg) {
			return nil, nil //nolint:nilnil // Observe of a deleted StretchMode uses no client.
		}
		return pc.Client(ctx, mg)
	}
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("StretchMode"), &v1alpha1.StretchModeList{},
		managed.WithTypedExternalConnector[*v1alpha1.StretchMode](providerconfig.Connector[*v1alpha1.StretchMode, *ceph.Client]{Client: client,
			External: func(c *ceph.Client) managed.TypedExternalClient[*v1alpha1.StretchMode] { return &external{ceph: c} }}))
}

type external struct{ ceph *ceph.Client }

// rule is the CRUSH rule stretch mode places every pool by: the rule of the
// provider's stretched Pools, the device class checked on the OSDs.
func rule(p v1alpha1.StretchModeParameters) ceph.StretchRule {
	return ceph.StretchRule{Root: p.Root, ZoneType: p.ZoneType, Class: p.DeviceClass}
}

// Observe reports the monitors' stretch mode. Not enabled, it asks for
// Create only once the cluster can take it; until then the resource is
// reported as it is, Ready False saying what the cluster lacks, and nothing
// is changed.
func (e *external) Observe(ctx context.Context, mg *v1alpha1.StretchMode) (managed.ExternalObservation, error) {
	if meta.WasDeleted(mg) {
		// Ceph keeps its stretch mode (see the type's doc): nothing to
		// delete, so the finalizer goes.
		mg.SetConditions(xpv2.Deleting())
		return managed.ExternalObservation{}, nil
	}
	p := mg.Spec.ForProvider
	st, err := e.ceph.StretchState(ctx)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	hosts, err := e.ceph.MonitorHosts(ctx)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	mg.Status.AtProvider = observation(st, hosts, p.ZoneType, rule(p).Name())
	if st.Enabled {
		mg.SetConditions(xpv2.Available())
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	zones, err := e.ceph.CrushZones(ctx, p.Root, p.ZoneType)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if _, err := ceph.PlanStretch(hosts, zones, p.TiebreakerZone); err != nil {
		mg.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now(),
			Reason: ReasonWaitingForCluster, Message: "stretch mode is not enabled yet: " + err.Error()})
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	mg.SetConditions(xpv2.Creating())
	return managed.ExternalObservation{}, nil
}

// observation is what status says of the monitors: where each runs and is
// located, and the tiebreaker. The rule is reported once stretch mode is on.
func observation(st ceph.Stretch, hosts map[string]string, zoneType, ruleName string) v1alpha1.StretchModeObservation {
	o := v1alpha1.StretchModeObservation{Enabled: st.Enabled, TiebreakerMonitor: st.Tiebreaker}
	if st.Enabled {
		o.Rule = ruleName
	}
	for _, m := range slices.Sorted(maps.Keys(st.Locations)) {
		o.Monitors = append(o.Monitors, v1alpha1.MonitorLocation{Name: m, Host: hosts[m], Zone: st.Locations[m][zoneType]})
	}
	return o
}

// Create locates the monitors, makes the stretch rule if missing, and
// enables stretch mode. The cluster is read again first: it may have
// changed since Observe.
func (e *external) Create(ctx context.Context, mg *v1alpha1.StretchMode) (managed.ExternalCreation, error) {
	p := mg.Spec.ForProvider
	hosts, err := e.ceph.MonitorHosts(ctx)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	zones, err := e.ceph.CrushZones(ctx, p.Root, p.ZoneType)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	plan, err := ceph.PlanStretch(hosts, zones, p.TiebreakerZone)
	if err != nil {
		return managed.ExternalCreation{}, fmt.Errorf("stretch mode is not enabled yet: %w", err)
	}
	r := rule(p)
	if err := e.ceph.CreateStretchRule(ctx, r); err != nil {
		return managed.ExternalCreation{}, err
	}
	if err := e.ceph.EnableStretchMode(ctx, plan, r.Name(), p.ZoneType); err != nil {
		return managed.ExternalCreation{}, fmt.Errorf("cannot enable stretch mode (tiebreaker %s, zones %v, rule %s): %w", plan.Tiebreaker, plan.Zones, r.Name(), err)
	}
	return managed.ExternalCreation{}, nil
}

// Update has nothing to do: the spec cannot change, and in stretch mode
// Ceph takes a new monitor only with its location (mon add answers EINVAL
// without one).
func (e *external) Update(context.Context, *v1alpha1.StretchMode) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, nil
}

// Delete leaves Ceph's stretch mode on; Observe reports it gone.
func (e *external) Delete(context.Context, *v1alpha1.StretchMode) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, nil
}

func (e *external) Disconnect(context.Context) error { return nil }
