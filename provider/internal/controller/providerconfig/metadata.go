package providerconfig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// patchMetadata changes a ProviderConfig's finalizers and annotations as
// change does to the copy the manager's cache holds, by a JSON patch that
// applies only while the API server still holds the finalizers (and the
// annotations changed) as that copy has them: not by an update, which
// carries the version read and is refused whenever anything else changed
// since. Three writers share a ProviderConfig: crossplane-runtime's usage
// reconciler (its finalizer, its users' count), the credentials guard (its
// finalizer and annotation) and the catalog reader (its status). While a
// landscape converges, the users' count changes with every new user, so an
// update of the finalizers read from the cache was refused more often than
// not: 6,486 refused while two shards converged 1,000 clouds
// (docs/benchmarks.md), each followed by a wait of 30 s (crossplane-runtime)
// or a backoff (the guard). The patch's tests keep what the update's
// version kept: a finalizer another writer added or removed meanwhile is
// neither lost nor brought back. When a test fails (the cache lags the
// API server), the object is read from the API server (live) and patched
// once more; a second refusal is returned, as a conflict.
//
// obj is read from the cache and carries the UID of the object meant; it is
// filled with the object the API server holds after a patch.
func patchMetadata(ctx context.Context, cache client.Client, live client.Reader, obj client.Object, change func(client.Object)) error {
	held, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("%T is not an object", obj)
	}
	if err := cache.Get(ctx, client.ObjectKeyFromObject(obj), held); err != nil {
		return err
	}
	for try := 0; ; try++ {
		if held.GetUID() != obj.GetUID() {
			// Deleted and made again since obj was read: not this object.
			return kerrors.NewConflict(schema.GroupResource{}, obj.GetName(), errors.New("the object was deleted and made again"))
		}
		want, _ := held.DeepCopyObject().(client.Object)
		change(want)
		patch := metadataPatch(held, want)
		if patch == nil {
			return nil
		}
		err := cache.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch))
		// A failed test is a 422 (Invalid) from the API server.
		if err == nil || !kerrors.IsInvalid(err) {
			return err
		}
		if try == 1 {
			return kerrors.NewConflict(schema.GroupResource{}, obj.GetName(), err)
		}
		if err := live.Get(ctx, client.ObjectKeyFromObject(obj), held); err != nil {
			return err
		}
	}
}

// metadataPatch is the JSON patch from held's finalizers and annotations
// to want's, each change preceded by a test of the value held; nil when
// nothing differs.
func metadataPatch(held, want client.Object) []byte {
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	// The object itself, not one deleted and made again since.
	ops := []op{{"test", "/metadata/uid", held.GetUID()}}
	// A list absent on the server tests as null (RFC 6902's test of a
	// missing member, as the API server's json-patch applies it).
	orNull := func(v []string) any {
		if len(v) == 0 {
			return nil
		}
		return v
	}
	if h, w := held.GetFinalizers(), want.GetFinalizers(); !slices.Equal(h, w) {
		ops = append(ops, op{"test", "/metadata/finalizers", orNull(h)}, op{"add", "/metadata/finalizers", orNull(w)})
	}
	h, w := held.GetAnnotations(), want.GetAnnotations()
	if !maps.Equal(h, w) {
		if len(h) == 0 {
			ops = append(ops, op{"test", "/metadata/annotations", nil}, op{"add", "/metadata/annotations", w})
		} else {
			for _, k := range slices.Sorted(maps.Keys(unionOf(h, w))) {
				hv, inH := h[k]
				wv, inW := w[k]
				if inH == inW && hv == wv {
					continue
				}
				path := "/metadata/annotations/" + escapePointer(k)
				var was any
				if inH {
					was = hv
				}
				ops = append(ops, op{"test", path, was})
				if inW {
					ops = append(ops, op{"add", path, wv})
				} else {
					ops = append(ops, op{Op: "remove", Path: path})
				}
			}
		}
	}
	if len(ops) == 1 {
		return nil
	}
	b, _ := json.Marshal(ops) // strings and string lists: cannot fail
	return b
}

// setFinalizer gives o the finalizer fin when keep, and takes it away
// otherwise: a change for patchMetadata.
func setFinalizer(o client.Object, fin string, keep bool) {
	if keep {
		meta.AddFinalizer(o, fin)
	} else {
		meta.RemoveFinalizer(o, fin)
	}
}

func unionOf(a, b map[string]string) map[string]string {
	u := maps.Clone(a)
	maps.Copy(u, b)
	return u
}

// escapePointer escapes a key for a JSON pointer (RFC 6901): an
// annotation's key holds a slash.
func escapePointer(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}
