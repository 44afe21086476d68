package providerconfig

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
)

// staleCache answers every read with the copy it was given, as a
// manager's cache does that has not seen the writes since; the rest goes
// to the API server.
type staleCache struct {
	client.Client
	held *openstackv1alpha1.ProviderConfig
}

func (c staleCache) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	c.held.DeepCopyInto(obj.(*openstackv1alpha1.ProviderConfig))
	return nil
}

// countedReads counts the reads of the API server past the cache.
type countedReads struct {
	client.Reader
	n *int
}

func (r countedReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	*r.n++
	return r.Reader.Get(ctx, key, obj, opts...)
}

// Against a real API server, patchMetadata changes a ProviderConfig's
// finalizers and annotations from a copy read before other writers
// changed it: without the conflict an update from that copy meets, without
// losing or bringing back what the others wrote, and never on an object
// deleted and made again under the same name.
func TestPatchMetadataIntegration(t *testing.T) {
	kube := uncachedClient(t)
	ctx := t.Context()
	const ours, theirs, ann = "openstack.provider.c5c3.io/ours", "example.com/theirs", "openstack.provider.c5c3.io/guarded-secret"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "patched"}}

	cases := map[string]struct {
		// start is the ProviderConfig as the cache holds it.
		start func(pc *openstackv1alpha1.ProviderConfig)
		// meanwhile is what another writer does after the cache's copy.
		meanwhile func(t *testing.T, pc *openstackv1alpha1.ProviderConfig)
		change    func(o client.Object)
		// The finalizers and the annotation the API server holds after,
		// and how many reads went past the cache.
		finalizers []string
		annotation string
		liveReads  int
		conflict   bool
		// also checks what else the API server must hold after.
		also func(t *testing.T, got *openstackv1alpha1.ProviderConfig)
	}{
		"a finalizer added after the users' count changed": {
			meanwhile: func(t *testing.T, pc *openstackv1alpha1.ProviderConfig) {
				pc.Status.Users = 4
				if err := kube.Status().Update(ctx, pc); err != nil {
					t.Fatal(err)
				}
			},
			change:     func(o client.Object) { meta.AddFinalizer(o, ours) },
			finalizers: []string{ours},
			also: func(t *testing.T, got *openstackv1alpha1.ProviderConfig) {
				if got.Status.Users != 4 {
					t.Errorf("the users' count is %d, want the other writer's 4", got.Status.Users)
				}
			},
		},
		"a finalizer added after another writer added its own": {
			meanwhile: func(t *testing.T, pc *openstackv1alpha1.ProviderConfig) {
				meta.AddFinalizer(pc, theirs)
				if err := kube.Update(ctx, pc); err != nil {
					t.Fatal(err)
				}
			},
			change:     func(o client.Object) { meta.AddFinalizer(o, ours) },
			finalizers: []string{theirs, ours},
			liveReads:  1,
		},
		"a finalizer removed after another writer added its own": {
			start: func(pc *openstackv1alpha1.ProviderConfig) { pc.Finalizers = []string{ours} },
			meanwhile: func(t *testing.T, pc *openstackv1alpha1.ProviderConfig) {
				meta.AddFinalizer(pc, theirs)
				if err := kube.Update(ctx, pc); err != nil {
					t.Fatal(err)
				}
			},
			change:     func(o client.Object) { meta.RemoveFinalizer(o, ours) },
			finalizers: []string{theirs},
			liveReads:  1,
		},
		"a finalizer another writer removed is not brought back": {
			start: func(pc *openstackv1alpha1.ProviderConfig) { pc.Finalizers = []string{theirs} },
			meanwhile: func(t *testing.T, pc *openstackv1alpha1.ProviderConfig) {
				pc.Finalizers = nil
				if err := kube.Update(ctx, pc); err != nil {
					t.Fatal(err)
				}
			},
			change:     func(o client.Object) { meta.AddFinalizer(o, ours) },
			finalizers: []string{ours},
			liveReads:  1,
		},
		"an annotation and a finalizer, no annotations before": {
			change: func(o client.Object) {
				meta.AddFinalizer(o, ours)
				meta.AddAnnotations(o, map[string]string{ann: "default/patched"})
			},
			finalizers: []string{ours},
			annotation: "default/patched",
		},
		"an annotation removed beside another's": {
			start: func(pc *openstackv1alpha1.ProviderConfig) {
				pc.Annotations = map[string]string{ann: "default/patched", "example.com/note": "kept"}
			},
			meanwhile: func(t *testing.T, pc *openstackv1alpha1.ProviderConfig) {
				pc.Annotations["example.com/other"] = "kept too"
				if err := kube.Update(ctx, pc); err != nil {
					t.Fatal(err)
				}
			},
			change: func(o client.Object) { meta.RemoveAnnotations(o, ann) },
			also: func(t *testing.T, got *openstackv1alpha1.ProviderConfig) {
				if got.Annotations["example.com/other"] != "kept too" {
					t.Errorf("another writer's annotation is gone: %v", got.Annotations)
				}
			},
		},
		"nothing to change": {
			start:  func(pc *openstackv1alpha1.ProviderConfig) { pc.Finalizers = []string{ours} },
			change: func(o client.Object) { meta.AddFinalizer(o, ours) },
			// The API server is not asked: its finalizers stay as made.
			finalizers: []string{ours},
		},
		"an object deleted and made again": {
			meanwhile: func(t *testing.T, pc *openstackv1alpha1.ProviderConfig) {
				if err := kube.Delete(ctx, pc); err != nil {
					t.Fatal(err)
				}
				again := openStackConfig(pc.Name, secret)
				if err := kube.Create(ctx, again); err != nil {
					t.Fatal(err)
				}
			},
			change:    func(o client.Object) { meta.AddFinalizer(o, ours) },
			liveReads: 1,
			conflict:  true,
		},
	}
	i := 0
	for name, tc := range cases {
		i++
		t.Run(name, func(t *testing.T) {
			pc := openStackConfig(fmt.Sprintf("patched-%d", i), secret)
			if tc.start != nil {
				tc.start(pc)
			}
			mustCreate(t, kube, pc)
			t.Cleanup(func() {
				o := &openstackv1alpha1.ProviderConfig{}
				if kube.Get(context.Background(), client.ObjectKeyFromObject(pc), o) == nil {
					o.Finalizers = nil
					_ = kube.Update(context.Background(), o)
					_ = kube.Delete(context.Background(), o)
				}
			})
			cached := pc.DeepCopy()
			if tc.meanwhile != nil {
				tc.meanwhile(t, pc.DeepCopy())
				// What the conflict is about: an update from the cache's
				// copy is refused.
				stale := cached.DeepCopy()
				tc.change(stale)
				if err := kube.Update(ctx, stale); !kerrors.IsConflict(err) {
					t.Fatalf("an update from the cache's copy: %v, want a conflict", err)
				}
			}
			reads := 0
			obj := cached.DeepCopy()
			err := patchMetadata(ctx, staleCache{Client: kube, held: cached}, countedReads{Reader: kube, n: &reads}, obj, tc.change)
			if tc.conflict != kerrors.IsConflict(err) || (!tc.conflict && err != nil) {
				t.Fatalf("patchMetadata: %v, want a conflict: %t", err, tc.conflict)
			}
			if reads != tc.liveReads {
				t.Errorf("%d reads of the API server, want %d", reads, tc.liveReads)
			}
			got := &openstackv1alpha1.ProviderConfig{}
			if err := kube.Get(ctx, types.NamespacedName{Name: pc.Name}, got); err != nil {
				t.Fatal(err)
			}
			if tc.conflict {
				if len(got.Finalizers) != 0 {
					t.Errorf("the object made again has finalizers %v, want none", got.Finalizers)
				}
				return
			}
			if !slices.Equal(got.Finalizers, tc.finalizers) {
				t.Errorf("finalizers %v, want %v", got.Finalizers, tc.finalizers)
			}
			if a := got.Annotations[ann]; a != tc.annotation {
				t.Errorf("annotation %s is %q, want %q", ann, a, tc.annotation)
			}
			for k, v := range cached.Annotations {
				if k != ann && got.Annotations[k] != v {
					t.Errorf("annotation %s is %q, want %q kept", k, got.Annotations[k], v)
				}
			}
			if tc.also != nil {
				tc.also(t, got)
			}
			if obj.GetResourceVersion() == cached.GetResourceVersion() && tc.meanwhile != nil {
				t.Errorf("the object passed is not filled with what the API server holds after the patch")
			}
		})
	}
}
