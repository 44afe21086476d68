// Package nbglobal manages options of the OVN Northbound database's single
// NB_Global row. The row belongs to OVN; a resource only owns the option
// keys it sets, recorded in the row's external_ids per resource, so several
// resources (and ovn-nbctl) can share the row.
package nbglobal

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/nbdb"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// Setup adds the NBGlobal controller.
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.OVN) error {
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("NBGlobal"), &v1alpha1.NBGlobalList{},
		managed.WithTypedExternalConnector[*v1alpha1.NBGlobal](providerconfig.Connector[*v1alpha1.NBGlobal, *ovn.Conn]{Client: pc.Conn,
			External: func(c *ovn.Conn) managed.TypedExternalClient[*v1alpha1.NBGlobal] { return &external{conn: c} }}))
}

type external struct{ conn *ovn.Conn }

// column is the record name of the options this resource set.
func column(mg *v1alpha1.NBGlobal) string { return "options/" + mg.GetName() }

func (e *external) global(ctx context.Context) (*nbdb.NBGlobal, error) {
	var rows []nbdb.NBGlobal
	if err := e.conn.NB.Select(ctx, &rows); err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, errors.New("the OVN Northbound database has no NB_Global row: it is not initialized yet (ovn-northd or ovn-nbctl init makes it)")
	}
	return &rows[0], nil
}

// desired is NB_Global with the resource's options applied (opts nil:
// removed) and its record of them.
func desired(g *nbdb.NBGlobal, col string, opts map[string]string) *nbdb.NBGlobal {
	want := *g
	merged, record := ovn.Merge(col, g.Options, opts, g.ExternalIDs)
	want.Options = merged
	want.ExternalIDs = maps.Clone(g.ExternalIDs)
	if want.ExternalIDs == nil {
		want.ExternalIDs = map[string]string{}
	}
	ovn.SetOwnedKeys(want.ExternalIDs, col, record)
	return &want
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.NBGlobal) (managed.ExternalObservation, error) {
	g, err := e.global(ctx)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if len(ovn.OwnedKeys(column(mg), g.ExternalIDs)) == 0 {
		return managed.ExternalObservation{}, nil
	}
	mg.Status.AtProvider = v1alpha1.NBGlobalObservation{UUID: g.UUID, NBCfg: int64(g.NbCfg), SBCfg: int64(g.SbCfg), HVCfg: int64(g.HvCfg)}
	mg.SetConditions(xpv2.Available())
	want := desired(g, column(mg), mg.Spec.ForProvider.Options)
	return managed.ExternalObservation{ResourceExists: true,
		ResourceUpToDate: maps.Equal(want.Options, g.Options) && maps.Equal(want.ExternalIDs, g.ExternalIDs)}, nil
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.NBGlobal) (managed.ExternalCreation, error) {
	g, err := e.apply(ctx, mg, mg.Spec.ForProvider.Options)
	if err == nil {
		meta.SetExternalName(mg, g.UUID)
	}
	return managed.ExternalCreation{}, err
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.NBGlobal) (managed.ExternalUpdate, error) {
	_, err := e.apply(ctx, mg, mg.Spec.ForProvider.Options)
	return managed.ExternalUpdate{}, err
}

// Delete removes the options this resource set, so OVN's defaults apply.
func (e *external) Delete(ctx context.Context, mg *v1alpha1.NBGlobal) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	_, err := e.apply(ctx, mg, nil)
	return managed.ExternalDelete{}, err
}

// apply writes options and external_ids in one transaction that also
// checks nobody changed them since they were read: two resources sharing
// the row never lose each other's keys.
func (e *external) apply(ctx context.Context, mg *v1alpha1.NBGlobal, opts map[string]string) (*nbdb.NBGlobal, error) {
	g, err := e.global(ctx)
	if err != nil {
		return nil, err
	}
	want := desired(g, column(mg), opts)
	wait, err := e.conn.NB.Unchanged(g, &g.Options, &g.ExternalIDs)
	if err != nil {
		return nil, err
	}
	upd, err := e.conn.NB.Update(want, &want.Options, &want.ExternalIDs)
	if err != nil {
		return nil, err
	}
	if _, err := ovn.Transact(ctx, e.conn.NB, append(wait, upd...)...); err != nil {
		if errors.Is(err, ovn.ErrNameTaken) {
			return nil, errors.New("NB_Global changed while being written; retrying")
		}
		return nil, fmt.Errorf("cannot set NB_Global options: %w", err)
	}
	return g, nil
}

func (e *external) Disconnect(context.Context) error { return nil }
