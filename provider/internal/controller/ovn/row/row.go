// Package row holds what the OVN controllers of named Northbound rows
// (logical switches, logical routers, HA chassis groups) share: finding a
// resource's row by UUID or name, the ownership rules, and creating by
// name without ever making a second row.
package row

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/sbdb"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

// A Kind describes one table of named rows. M is the model's pointer type
// (*nbdb.LogicalSwitch).
type Kind[M model.Model] struct {
	// Table name, and What the row is called in messages ("OVN logical switch").
	Table, What string
	// Accessors of the model.
	UUID        func(M) string
	Name        func(M) string
	ExternalIDs func(M) map[string]string
	// WithUUID returns an empty model with a UUID, to look it up.
	WithUUID func(uuid string) M
}

func (k Kind[M]) named(name string) string { return fmt.Sprintf("%s %q", k.What, name) }

// byName reads the rows with a name.
func (k Kind[M]) byName(ctx context.Context, nb *ovn.Database, name string) ([]M, error) {
	var rows []M
	err := nb.Select(ctx, &rows, ovn.NameIs(name))
	return rows, err
}

// Lookup returns mg's row, or a nil M when it has none: by UUID when the
// external name records one, else the row of this name that this resource
// wrote (its create's reply was lost), or, when pcontroller.MayAdopt allows,
// an unowned row of this name. A Neutron row is refused, even by UUID.
func (k Kind[M]) Lookup(ctx context.Context, nb *ovn.Database, mg resource.Managed, name string) (row M, adopted bool, err error) {
	m, adopted, err := k.find(ctx, nb, mg, name)
	if err == nil && !IsNil(m) && ovn.Owner(k.ExternalIDs(m), mg.GetName()) == ovn.OwnedByNeutron {
		var none M
		return none, false, ovn.RefuseNeutron(fmt.Sprintf("%s %s (%q)", k.What, k.UUID(m), k.Name(m)))
	}
	return m, adopted, err
}

// find is Lookup without refusing Neutron's rows.
func (k Kind[M]) find(ctx context.Context, nb *ovn.Database, mg resource.Managed, name string) (row M, adopted bool, err error) {
	var none M
	if uuid := meta.GetExternalName(mg); uuid != "" {
		m := k.WithUUID(uuid)
		err := nb.Get(ctx, m)
		if errors.Is(err, ovn.ErrNotFound) {
			return none, false, nil
		}
		if err != nil {
			return none, false, err
		}
		return m, false, nil
	}
	rows, err := k.byName(ctx, nb, name)
	if err != nil {
		return none, false, err
	}
	for _, m := range rows {
		switch ovn.Owner(k.ExternalIDs(m), mg.GetName()) {
		case ovn.OwnedByResource:
		case ovn.Unowned:
			if !pcontroller.MayAdopt(mg) {
				continue
			}
		default:
			continue
		}
		meta.SetExternalName(mg, k.UUID(m))
		return m, true, nil
	}
	return none, false, nil
}

// Create inserts models (the row first, then rows it references) unless a
// row of this name exists, and records the new row's UUID as mg's external
// name. A row of the name that is not this resource's is refused with a
// message saying whose it is.
func (k Kind[M]) Create(ctx context.Context, nb *ovn.Database, mg resource.Managed, name string, models ...model.Model) error {
	rows, err := k.byName(ctx, nb, name)
	if err != nil {
		return err
	}
	for _, m := range rows {
		switch ovn.Owner(k.ExternalIDs(m), mg.GetName()) {
		case ovn.OwnedByNeutron:
			return ovn.RefuseNeutron(k.named(name))
		case ovn.OwnedByOtherResource:
			return terminal.Wrap(fmt.Errorf("%s already exists and belongs to resource %q", k.named(name), k.ExternalIDs(m)[v1alpha1.ExternalIDResource]))
		case ovn.Unowned:
			return pcontroller.NameTaken(k.named(name))
		}
	}
	ops, err := nb.Insert(models...)
	if err != nil {
		return terminal.Wrap(fmt.Errorf("cannot build the insert of %s: %w", k.named(name), err))
	}
	ops = append([]ovsdb.Operation{ovn.NameIsFree(k.Table, name)}, ops...)
	res, err := ovn.Transact(ctx, nb, ops...)
	if errors.Is(err, ovn.ErrNameTaken) {
		// An earlier attempt committed after all (or someone raced us):
		// the next observation adopts the row if it is ours.
		return fmt.Errorf("%s appeared while creating it; observing it next", k.named(name))
	}
	if err != nil {
		return fmt.Errorf("cannot create %s: %w", k.named(name), err)
	}
	meta.SetExternalName(mg, res[1].UUID.GoUUID)
	return nil
}

// Update writes the given fields of m (a full row with its UUID).
func (k Kind[M]) Update(ctx context.Context, nb *ovn.Database, m M, fields ...any) error {
	ops, err := nb.Update(m, fields...)
	if err != nil {
		return terminal.Wrap(fmt.Errorf("cannot build the update of %s: %w", k.named(k.Name(m)), err))
	}
	if _, err := ovn.Transact(ctx, nb, ops...); err != nil {
		return fmt.Errorf("cannot update %s: %w", k.named(k.Name(m)), err)
	}
	return nil
}

// DeleteUnlessInUse deletes mg's row if it still exists. It refuses while
// ports(row) > 0 (deleting the row would take the ports with it; nil ports
// means nothing can be attached). A row Neutron or another resource owns
// was never this resource's (it was refused, or given the wrong UUID): it
// is left alone and the resource goes.
func DeleteUnlessInUse[M model.Model](ctx context.Context, k Kind[M], nb *ovn.Database, mg resource.Managed, name string, ports func(M) int) error {
	m, _, err := k.find(ctx, nb, mg, name)
	if err != nil || IsNil(m) {
		return err
	}
	if o := ovn.Owner(k.ExternalIDs(m), mg.GetName()); o == ovn.OwnedByOtherResource || o == ovn.OwnedByNeutron {
		return nil
	}
	if ports != nil {
		if n := ports(m); n > 0 {
			return fmt.Errorf("%s still has %d ports attached; deleting it would delete them too: detach them first, or delete this resource with deletionPolicy Orphan", k.named(name), n)
		}
	}
	ops, err := nb.Delete(m)
	if err != nil {
		return terminal.Wrap(fmt.Errorf("cannot build the delete of %s: %w", k.named(name), err))
	}
	if _, err := ovn.Transact(ctx, nb, ops...); err != nil {
		return fmt.Errorf("cannot delete %s: %w", k.named(name), err)
	}
	return nil
}

// IsNil reports whether Lookup found no row.
func IsNil[M model.Model](m M) bool { return reflect.ValueOf(m).IsNil() }

// TunnelKey is the tunnel key of the Southbound Datapath_Binding ovn-northd
// made for the Northbound row uuid (key is "logical-switch" or
// "logical-router"), or nil when there is none yet or no Southbound.
func TunnelKey(ctx context.Context, sb *ovn.Database, key, uuid string) *int64 {
	if sb == nil {
		return nil
	}
	var dps []sbdb.DatapathBinding
	if err := sb.Select(ctx, &dps, ovn.MapIncludes("external_ids", key, uuid)); err != nil || len(dps) == 0 {
		return nil
	}
	k := int64(dps[0].TunnelKey)
	return &k
}
