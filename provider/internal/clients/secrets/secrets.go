// Package secrets is the provider's client for Secrets: it reads a Secret
// from the API server only when it changed, and sends no write that would
// change nothing.
//
// The provider keeps no informer on Secrets' data (it would hold every
// Secret of the cluster in memory, #23 §11). Without this client every
// reconcile read its ProviderConfig's credentials and CA and its tenant's
// password from the API server, and every poll of a User or an
// ApplicationCredential read and patched its connection Secret: at 200
// clouds polled every 20 s, 66 GETs and 20 PATCHes of Secrets a second,
// nearly all the provider asked the API server (#55, docs/benchmarks.md).
package secrets

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultFor is how long a Secret read from the API server is kept: while
// kept, it answers every read for which the watch of Secrets' versions
// (Versions) shows it unchanged.
const DefaultFor = 10 * time.Minute

// Version is the object of the metadata-only watch of the cluster's
// Secrets (Versions) that Cached checks a kept Secret against.
func Version() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// VersionOnly is the transform of the watch of Secrets' versions: of each
// Secret it keeps what tells its version, and drops the rest before the
// watch stores it, annotations included.
func VersionOnly(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
	}}, nil
}

// Versions is the watch of Secrets' versions in c (the manager's cache,
// whose options give Version the transform VersionOnly), answering only
// once it has listed them all: a reader that blocked until then, as the
// cache's does, would hold every reconcile if Secrets cannot be listed.
func Versions(c cache.Cache) (client.Reader, error) {
	inf, err := c.GetInformer(context.Background(), Version(), cache.BlockUntilSynced(false))
	if err != nil {
		return nil, err
	}
	return syncedReader{Reader: c, synced: inf.HasSynced}, nil
}

type syncedReader struct {
	client.Reader
	synced func() bool
}

var errNotSynced = errors.New("the watch of Secrets' versions has not listed them yet")

func (r syncedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if !r.synced() {
		return errNotSynced
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// Cached is c whose Gets of Secrets are answered from memory while versions
// (the watch of Secrets' versions) shows the kept Secret unchanged, and for
// at most ttl; a rotated credential is used as soon as the watch sees its
// new version. With versions nil the TTL alone decides. Only the Secrets
// asked for are kept; a Get that failed is not, and a Secret written through
// this client is read again. A merge patch of a Secret that would change
// nothing the Secret holds is not sent. Everything else goes to c.
func Cached(c client.Client, versions client.Reader, ttl time.Duration) client.Client {
	return &cached{Client: c, versions: versions, ttl: ttl, secrets: map[client.ObjectKey]kept{}}
}

type cached struct {
	client.Client
	versions client.Reader
	ttl      time.Duration
	mu       sync.Mutex
	secrets  map[client.ObjectKey]kept
	swept    time.Time // when entries past the TTL were last dropped
}

type kept struct {
	secret *corev1.Secret
	at     time.Time
}

func (c *cached) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	s, ok := obj.(*corev1.Secret)
	if !ok || len(opts) > 0 {
		return c.Client.Get(ctx, key, obj, opts...)
	}
	if held, ok := c.held(ctx, key); ok {
		held.DeepCopyInto(s)
		return nil
	}
	now := time.Now()
	if err := c.Client.Get(ctx, key, s); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Entries past the TTL are never served (held); sweeping them bounds
	// the memory. Once per TTL, not on every read from the API server: the
	// map holds every Secret read within the TTL (10 minutes), and a
	// provider starting on a landscape reads thousands in a row.
	if now.Sub(c.swept) >= c.ttl {
		for k, e := range c.secrets {
			if now.Sub(e.at) >= c.ttl {
				delete(c.secrets, k)
			}
		}
		c.swept = now
	}
	c.secrets[key] = kept{secret: s.DeepCopy(), at: now}
	return nil
}

// held is the kept Secret of key, if it is still the API server's.
func (c *cached) held(ctx context.Context, key client.ObjectKey) (*corev1.Secret, bool) {
	c.mu.Lock()
	e, hit := c.secrets[key]
	c.mu.Unlock()
	if !hit || time.Since(e.at) >= c.ttl {
		return nil, false
	}
	if c.versions != nil {
		// A watch that cannot say (not synced, the Secret gone) sends the
		// read to the API server.
		m := Version()
		if err := c.versions.Get(ctx, key, m); err != nil || m.ResourceVersion != e.secret.ResourceVersion {
			return nil, false
		}
	}
	return e.secret, true
}

func (c *cached) forget(obj client.Object) {
	if _, ok := obj.(*corev1.Secret); ok {
		c.mu.Lock()
		delete(c.secrets, client.ObjectKeyFromObject(obj))
		c.mu.Unlock()
	}
}

// Patch sends a merge patch of a Secret only when it would change what the
// Secret holds (crossplane-runtime publishes an observe's connection
// details, a part of what the Secret holds, as a merge patch on every
// poll); skipped, obj is the Secret as held.
func (c *cached) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if s, ok := obj.(*corev1.Secret); ok && len(opts) == 0 && patch.Type() == types.MergePatchType {
		if held, ok := c.held(ctx, client.ObjectKeyFromObject(s)); ok && changesNothing(held, s, patch) {
			held.DeepCopyInto(s)
			return nil
		}
	}
	defer c.forget(obj)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *cached) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	defer c.forget(obj)
	return c.Client.Update(ctx, obj, opts...)
}

func (c *cached) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	defer c.forget(obj)
	return c.Client.Create(ctx, obj, opts...)
}

func (c *cached) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	defer c.forget(obj)
	return c.Client.Delete(ctx, obj, opts...)
}

// changesNothing reports whether the merge patch of s would leave held as
// it is. Only a patch that says nothing but a Secret's type, owners, labels,
// annotations and data qualifies (as crossplane-runtime's publisher sends:
// the whole desired Secret); held must already have each: a merge patch
// replaces a list, so the owners must be the same list, and adds to a map,
// so held's labels, annotations and data must hold the patch's.
func changesNothing(held, s *corev1.Secret, patch client.Patch) bool {
	data, err := patch.Data(s)
	if err != nil {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return false
	}
	for k := range fields {
		switch k {
		case "apiVersion", "kind", "type", "data", "stringData":
		case "metadata":
			var meta map[string]json.RawMessage
			if json.Unmarshal(fields[k], &meta) != nil {
				return false
			}
			for m := range meta {
				switch m {
				case "name", "namespace", "creationTimestamp", "ownerReferences", "labels", "annotations":
				default:
					return false
				}
			}
		default:
			return false
		}
	}
	want := &corev1.Secret{}
	if json.Unmarshal(data, want) != nil {
		return false
	}
	if want.Type != "" && want.Type != held.Type {
		return false
	}
	if want.OwnerReferences != nil && !reflect.DeepEqual(want.OwnerReferences, held.OwnerReferences) {
		return false
	}
	// The API server writes stringData into data.
	for k, v := range want.StringData {
		if want.Data == nil {
			want.Data = map[string][]byte{}
		}
		want.Data[k] = []byte(v)
	}
	return holds(held.Labels, want.Labels) && holds(held.Annotations, want.Annotations) && holdsBytes(held.Data, want.Data)
}

func holds(have, want map[string]string) bool {
	for k, v := range want {
		if h, ok := have[k]; !ok || h != v {
			return false
		}
	}
	return true
}

func holdsBytes(have, want map[string][]byte) bool {
	for k, v := range want {
		if h, ok := have[k]; !ok || string(h) != string(v) {
			return false
		}
	}
	return true
}
