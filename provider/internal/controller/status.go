package controller

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// unchangedStatusSkipped is the manager the managed reconciler is built
// with: its client sends no status update that would write what the API
// server already holds. crossplane-runtime's managed reconciler ends every
// reconcile with a status update, even a poll that found the external
// object as it should be and changed no condition, so every steady poll of
// a landscape's resources was one request to the API server, which counts
// against the provider's client rate limit (5 a second per
// --max-reconcile-rate) and the API server's capacity: at 100 clouds polled
// every 20 s, 94 requests a second without this, 43 with it
// (docs/benchmarks.md, "The provider at landscape scale").
type unchangedStatusSkipped struct{ ctrl.Manager }

func (m unchangedStatusSkipped) GetClient() client.Client {
	return statusSkipping{Client: m.Manager.GetClient()}
}

// statusSkipping is a client whose status updates are skipped when they
// would change nothing.
type statusSkipping struct{ client.Client }

func (c statusSkipping) Status() client.SubResourceWriter {
	return skippingStatusWriter{SubResourceWriter: c.Client.Status(), reader: c.Client}
}

type skippingStatusWriter struct {
	client.SubResourceWriter
	reader client.Reader
}

// Update sends obj's status unless the reader (the manager's cache, where
// the reconciler read obj) holds the same version of the object with the
// same status: the API server then holds it too, or a newer version, which
// the update would have failed on anyway.
func (w skippingStatusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if len(opts) == 0 && w.unchanged(ctx, obj) {
		return nil
	}
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

func (w skippingStatusWriter) unchanged(ctx context.Context, obj client.Object) bool {
	held := newOf(obj)
	if err := w.reader.Get(ctx, client.ObjectKeyFromObject(obj), held); err != nil {
		return false
	}
	if held.GetResourceVersion() == "" || held.GetResourceVersion() != obj.GetResourceVersion() {
		return false
	}
	// The typed Status fields alone: this runs at the end of every
	// reconcile, and converting both whole objects would cost more than
	// the comparison.
	a, b := reflect.ValueOf(held).Elem().FieldByName("Status"), reflect.ValueOf(obj).Elem().FieldByName("Status")
	return a.IsValid() && b.IsValid() && equality.Semantic.DeepEqual(a.Interface(), b.Interface())
}
