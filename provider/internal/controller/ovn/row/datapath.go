package row

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/ovn-org/libovsdb/model"

	"github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn"
)

// A Datapath is the external client of a logical switch or router: a named
// row whose spec sets some of its columns, that others attach ports to, and
// that ovn-northd turns into a Southbound Datapath_Binding. T is the
// managed resource, M the row's model.
type Datapath[T resource.Managed, M model.Model] struct {
	Kind Kind[M]
	Conn *ovn.Conn
	// Name of the row the resource asks for.
	Name func(T) string
	// New is an empty row to insert, with a placeholder UUID and the name.
	New func(name string) M
	// Desired is the row the spec asks for, built on observed.
	Desired func(mg T, observed M) M
	// Equal compares what Desired sets.
	Equal func(want, observed M) bool
	// Columns are pointers to the fields Desired sets, for the update.
	Columns func(M) []any
	// Ports counts the ports attached to a row.
	Ports func(M) int
	// SBKey names the row in Datapath_Binding external_ids ("logical-switch").
	SBKey string
	// Observed writes the observation into the resource's status.
	Observed func(T, v1alpha1.DatapathObservation)
}

// Observe finds the row, reports its datapath and whether it is as desired.
func (d Datapath[T, M]) Observe(ctx context.Context, mg T) (managed.ExternalObservation, error) {
	observed, adopted, err := d.Kind.Lookup(ctx, d.Conn.NB, mg, d.Name(mg))
	if err != nil || IsNil(observed) {
		return managed.ExternalObservation{}, err
	}
	uuid := d.Kind.UUID(observed)
	d.Observed(mg, v1alpha1.DatapathObservation{UUID: uuid, Ports: int32(d.Ports(observed)), TunnelKey: TunnelKey(ctx, d.Conn.SB, d.SBKey, uuid)})
	mg.SetConditions(xpv2.Available())
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: d.Equal(d.Desired(mg, observed), observed),
		ResourceLateInitialized: adopted}, nil
}

// Create inserts the desired row, guarded by its name.
func (d Datapath[T, M]) Create(ctx context.Context, mg T) (managed.ExternalCreation, error) {
	name := d.Name(mg)
	return managed.ExternalCreation{}, d.Kind.Create(ctx, d.Conn.NB, mg, name, d.Desired(mg, d.New(name)))
}

// Update writes the columns the spec sets.
func (d Datapath[T, M]) Update(ctx context.Context, mg T) (managed.ExternalUpdate, error) {
	observed, _, err := d.Kind.Lookup(ctx, d.Conn.NB, mg, d.Name(mg))
	if err != nil || IsNil(observed) {
		return managed.ExternalUpdate{}, err
	}
	want := d.Desired(mg, observed)
	return managed.ExternalUpdate{}, d.Kind.Update(ctx, d.Conn.NB, want, d.Columns(want)...)
}

// Delete refuses while ports are attached: deleting the row would delete
// their port rows with it.
func (d Datapath[T, M]) Delete(ctx context.Context, mg T) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	return managed.ExternalDelete{}, DeleteUnlessInUse(ctx, d.Kind, d.Conn.NB, mg, d.Name(mg), d.Ports)
}

// Disconnect does nothing: the connection is shared.
func (d Datapath[T, M]) Disconnect(context.Context) error { return nil }
