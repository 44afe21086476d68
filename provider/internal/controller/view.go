package controller

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
)

// A View is the write half of the external client of a kind that only
// observes (a ChassisSet, a ServerInventory): its Observe always reports
// the view as existing and up to date, so the managed reconciler never asks
// it to create, change or delete anything, and there is nothing to. Embed
// it beside the kind's Observe.
type View[T resource.Managed] struct{}

// Create does nothing: a view has nothing to create.
func (View[T]) Create(context.Context, T) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, nil
}

// Update does nothing: a view has nothing to change.
func (View[T]) Update(context.Context, T) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, nil
}

// Delete does nothing: deleting a view leaves what it observes.
func (View[T]) Delete(context.Context, T) (managed.ExternalDelete, error) {
	return managed.ExternalDelete{}, nil
}

// Disconnect does nothing: a view holds no connection of its own.
func (View[T]) Disconnect(context.Context) error { return nil }
