// Package aggregate reconciles Nova host aggregates and the availability
// zones and tenant isolation they carry.
package aggregate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/aggregates"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	"github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

const (
	// keyTenantFilter is what Nova's AggregateMultiTenancyIsolation filter
	// reads: a comma-separated list of project IDs.
	keyTenantFilter = "filter_tenant_id"
	// keyZone is set by Nova itself from the aggregate's availability zone.
	keyZone = "availability_zone"
)

// Setup adds the Aggregate controller; newClient builds its client from a session
// (openstack.NewCompute, or a wrapper in tests).
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.OpenStack, newClient func(*openstack.Session) (openstack.Compute, error)) error {
	created := &pcontroller.Created[aggregates.Aggregate]{}
	c := providerconfig.Connector[*v1alpha1.Aggregate, openstack.Compute]{
		Client: providerconfig.OpenStackClient(pc, newClient),
		External: func(c openstack.Compute) managed.TypedExternalClient[*v1alpha1.Aggregate] {
			return &external{nova: c, created: created}
		},
	}
	return pcontroller.SetupManagedReferencing(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("Aggregate"), &v1alpha1.AggregateList{},
		[]pcontroller.Wake{{Object: &keystonev1alpha1.Project{}}}, managed.WithTypedExternalConnector[*v1alpha1.Aggregate](c))
}

type external struct {
	nova    openstack.Compute
	created *pcontroller.Created[aggregates.Aggregate]
}

func (e *external) get(ctx context.Context, id string) (*aggregates.Aggregate, error) {
	n, err := aggregateID(id)
	if err != nil {
		return nil, err
	}
	return e.nova.GetAggregate(ctx, n)
}

// ConditionHostsReleased says whether every host spec.forProvider.hosts no
// longer names has left the aggregate: one that still runs instances of
// the aggregate's tenants (filterTenantIDs) is kept until they are gone.
const ConditionHostsReleased xpv2.ConditionType = "HostsReleased"

// Reasons of ConditionHostsReleased.
const (
	ReasonReleased         xpv2.ConditionReason = "Released"
	ReasonInstancesRunning xpv2.ConditionReason = "InstancesRunning"
)

// ConditionHostsRegistered says whether every host spec.forProvider.hosts
// names is in the aggregate: a host Nova does not know yet (its
// nova-compute has not registered: the c5c3-operator deploys it on the
// cloud's nodes) is added once it is, without failing the aggregate.
const ConditionHostsRegistered xpv2.ConditionType = "HostsRegistered"

// Reasons of ConditionHostsRegistered.
const (
	ReasonRegistered    xpv2.ConditionReason = "Registered"
	ReasonNotRegistered xpv2.ConditionReason = "NotRegistered"
)

func hostsRegistered() xpv2.Condition {
	return xpv2.Condition{Type: ConditionHostsRegistered, Status: corev1.ConditionTrue, Reason: ReasonRegistered, LastTransitionTime: metav1.Now()}
}

func (e *external) finder(p v1alpha1.AggregateParameters) pcontroller.Finder[aggregates.Aggregate] {
	return pcontroller.Finder[aggregates.Aggregate]{
		Created:    e.created,
		Get:        e.get,
		FindByName: func(ctx context.Context) (*aggregates.Aggregate, error) { return e.nova.FindAggregate(ctx, p.Name) },
		ID:         func(a *aggregates.Aggregate) string { return strconv.Itoa(a.ID) },
	}
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.Aggregate) (managed.ExternalObservation, error) {
	p := mg.Spec.ForProvider
	observed, adopted, err := e.finder(p).Lookup(ctx, mg)
	if err != nil {
		return managed.ExternalObservation{}, openstack.Classify(err, "cannot get Nova aggregate %q", p.Name)
	}
	if observed == nil {
		return managed.ExternalObservation{}, nil
	}
	hosts := slices.Clone(observed.Hosts)
	sort.Strings(hosts)
	mg.Status.AtProvider = v1alpha1.AggregateObservation{ID: strconv.Itoa(observed.ID), Hosts: hosts}
	mg.SetConditions(xpv2.Available())
	add, remove := hostChanges(p.Hosts, observed.Hosts)
	if len(p.Hosts) > 0 && len(remove) == 0 {
		mg.SetConditions(xpv2.Condition{Type: ConditionHostsReleased, Status: corev1.ConditionTrue, Reason: ReasonReleased, LastTransitionTime: metav1.Now()})
	}
	if len(p.Hosts) > 0 && len(add) == 0 {
		mg.SetConditions(hostsRegistered())
	}
	upToDate := p.Name == observed.Name && p.AvailabilityZone == observed.AvailabilityZone &&
		len(metadataChanges(desiredMetadata(p), observed.Metadata)) == 0 && len(add)+len(remove) == 0
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate, ResourceLateInitialized: adopted}, nil
}

// Create makes the aggregate with its name and zone and records its ID at
// once; metadata and hosts follow in the Update of the next reconcile.
func (e *external) Create(ctx context.Context, mg *v1alpha1.Aggregate) (managed.ExternalCreation, error) {
	p := mg.Spec.ForProvider
	created, err := e.finder(p).Create(ctx, mg, func(ctx context.Context) (*aggregates.Aggregate, error) {
		return e.nova.CreateAggregate(ctx, aggregates.CreateOpts{Name: p.Name, AvailabilityZone: p.AvailabilityZone})
	})
	if openstack.IsConflict(err) {
		return managed.ExternalCreation{}, pcontroller.NameTaken(fmt.Sprintf("a Nova aggregate named %q", p.Name))
	}
	if err != nil {
		return managed.ExternalCreation{}, openstack.Classify(err, "cannot create Nova aggregate %q", p.Name)
	}
	meta.SetExternalName(mg, strconv.Itoa(created.ID))
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.Aggregate) (managed.ExternalUpdate, error) {
	p := mg.Spec.ForProvider
	observed, err := e.get(ctx, meta.GetExternalName(mg))
	if err != nil {
		return managed.ExternalUpdate{}, openstack.Classify(err, "cannot get Nova aggregate %q", p.Name)
	}
	if p.Name != observed.Name || p.AvailabilityZone != observed.AvailabilityZone {
		// Nova keeps the zone when the update leaves it out; an empty zone
		// can only be set as metadata (removing availability_zone).
		if _, err := e.nova.UpdateAggregate(ctx, observed.ID, aggregates.UpdateOpts{Name: p.Name, AvailabilityZone: p.AvailabilityZone}); err != nil {
			return managed.ExternalUpdate{}, openstack.Classify(err, "cannot update Nova aggregate %q", p.Name)
		}
	}
	if change := metadataChanges(desiredMetadata(p), observed.Metadata); len(change) > 0 {
		if p.AvailabilityZone == "" && observed.AvailabilityZone != "" {
			change[keyZone] = nil
		}
		if err := e.nova.SetAggregateMetadata(ctx, observed.ID, change); err != nil {
			return managed.ExternalUpdate{}, openstack.Classify(err, "cannot set metadata of Nova aggregate %q", p.Name)
		}
	}
	add, remove := hostChanges(p.Hosts, observed.Hosts)
	var unregistered []string
	for _, h := range add {
		err := e.nova.AddAggregateHost(ctx, observed.ID, h)
		if openstack.IsNotFound(err) {
			// Not a compute host yet: the next poll tries again.
			unregistered = append(unregistered, h)
			continue
		}
		if err != nil {
			return managed.ExternalUpdate{}, openstack.Classify(err, "cannot add host %q to Nova aggregate %q", h, p.Name)
		}
	}
	if len(unregistered) > 0 {
		mg.SetConditions(xpv2.Condition{Type: ConditionHostsRegistered, Status: corev1.ConditionFalse, Reason: ReasonNotRegistered,
			LastTransitionTime: metav1.Now(),
			Message: fmt.Sprintf("waiting for %s to register as Nova compute host(s) (nova-compute on the node, which the c5c3-operator deploys); added once they do",
				strings.Join(unregistered, ", "))})
	} else if len(p.Hosts) > 0 {
		mg.SetConditions(hostsRegistered())
	}
	var kept []string
	for _, h := range remove {
		// A host that still runs instances of the aggregate's tenants
		// stays: removing it would take their instances out of the zone
		// they were scheduled to, and the next reconcile tries again.
		running, err := e.nova.ServersOnHost(ctx, h, p.FilterTenantIDs)
		if err != nil {
			return managed.ExternalUpdate{}, openstack.Classify(err, "cannot list the instances on host %q", h)
		}
		if len(running) > 0 {
			kept = append(kept, fmt.Sprintf("%s (%d instance(s) of its tenants: %s)", h, len(running), strings.Join(running, ", ")))
			continue
		}
		if err := e.nova.RemoveAggregateHost(ctx, observed.ID, h); err != nil && !openstack.IsNotFound(err) {
			return managed.ExternalUpdate{}, openstack.Classify(err, "cannot remove host %q from Nova aggregate %q", h, p.Name)
		}
	}
	if len(kept) > 0 {
		mg.SetConditions(xpv2.Condition{Type: ConditionHostsReleased, Status: corev1.ConditionFalse, Reason: ReasonInstancesRunning,
			LastTransitionTime: metav1.Now(),
			Message:            fmt.Sprintf("spec.forProvider.hosts no longer names %s; it stays in the aggregate until those instances are gone (migrated or deleted)", strings.Join(kept, "; "))})
	}
	return managed.ExternalUpdate{}, nil
}

// Delete removes the hosts first: Nova refuses to delete an aggregate that
// has any.
func (e *external) Delete(ctx context.Context, mg *v1alpha1.Aggregate) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	observed, err := e.get(ctx, meta.GetExternalName(mg))
	if openstack.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	if err != nil {
		return managed.ExternalDelete{}, openstack.Classify(err, "cannot get Nova aggregate %q", mg.Spec.ForProvider.Name)
	}
	for _, h := range observed.Hosts {
		if err := e.nova.RemoveAggregateHost(ctx, observed.ID, h); err != nil && !openstack.IsNotFound(err) {
			return managed.ExternalDelete{}, openstack.Classify(err, "cannot remove host %q from Nova aggregate %q", h, observed.Name)
		}
	}
	err = e.nova.DeleteAggregate(ctx, observed.ID)
	if openstack.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, openstack.Classify(err, "cannot delete Nova aggregate %q", observed.Name)
}

func (e *external) Disconnect(context.Context) error { return nil }

func aggregateID(externalName string) (int, error) {
	n, err := strconv.Atoi(externalName)
	if err != nil {
		return 0, openstack.Terminal(fmt.Errorf("external name %q is not a Nova aggregate ID (an integer)", externalName))
	}
	return n, nil
}

// desiredMetadata is the aggregate's metadata as the spec says, with the
// tenant filter Nova reads.
func desiredMetadata(p v1alpha1.AggregateParameters) map[string]string {
	md := maps.Clone(p.Metadata)
	if md == nil {
		md = map[string]string{}
	}
	if len(p.FilterTenantIDs) > 0 {
		ids := slices.Clone(p.FilterTenantIDs)
		sort.Strings(ids)
		md[keyTenantFilter] = strings.Join(ids, ",")
	}
	return md
}

// metadataChanges is the SetMetadata body that turns observed into desired:
// changed keys with their value, removed keys with nil. Nova's own
// availability_zone key follows the aggregate's zone and is left alone.
func metadataChanges(desired, observed map[string]string) map[string]any {
	change := map[string]any{}
	for k, v := range desired {
		if ov, ok := observed[k]; !ok || ov != v {
			change[k] = v
		}
	}
	for k := range observed {
		if _, ok := desired[k]; !ok && k != keyZone {
			change[k] = nil
		}
	}
	return change
}

// hostChanges returns the hosts to add and remove. An empty desired list
// leaves membership to the hypervisor operator.
func hostChanges(desired, observed []string) (add, remove []string) {
	if len(desired) == 0 {
		return nil, nil
	}
	return pcontroller.SetDiff(desired, observed)
}
