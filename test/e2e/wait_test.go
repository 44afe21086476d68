//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	consumerv1alpha1 "github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
)

// Resources the suite reads. The pools are served in crossplane.c5c3.io;
// a cloud in c5c3.io, as the C5C3 docs and the examples claim it
// (cloudsGroup), and in the deprecated crossplane.c5c3.io (legacyGroup).
var (
	controlPlaneClusters = consumer("controlplaneclusters")
	hypervisorClusters   = consumer("hypervisorclusters")
	storageClusters      = consumer("storageclusters")

	shoots             = schema.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"}
	servers            = schema.GroupVersionResource{Group: "metal.ironcore.dev", Version: "v1alpha1", Resource: "servers"}
	apiServices        = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	crds               = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	configurations     = pkg("configurations")
	providers          = pkg("providers")
	functions          = pkg("functions")
	functionRevisions  = pkg("functionrevisions")
	kubernetesObjectsA = schema.GroupVersionResource{Group: "kubernetes.crossplane.io", Version: "v1alpha1", Resource: "objects"}
)

func consumer(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: consumerv1alpha1.Group, Version: consumerv1alpha1.Version, Resource: resource}
}

// cloudsGroup is a resource of the group tenants claim clouds in, c5c3.io
// as the C5C3 docs write it.
func cloudsGroup(resource string) schema.GroupVersionResource {
	return consumerv1alpha1.DocsGroupVersion.WithResource(resource)
}

// legacyGroup is a cloud resource of the deprecated group clouds were
// claimed in before they moved to c5c3.io.
func legacyGroup(r schema.GroupVersionResource) schema.GroupVersionResource {
	r.Group = consumerv1alpha1.Group
	return r
}

func pkg(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "pkg.crossplane.io", Version: "v1", Resource: resource}
}

// ref names one object of a resource.
type ref struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

func (r ref) String() string {
	if r.namespace == "" {
		return r.gvr.Resource + "/" + r.name
	}
	return r.namespace + "/" + r.gvr.Resource + "/" + r.name
}

// conditioned is what every claim and composite has: Crossplane's
// conditions, the project's status beside them.
type conditioned struct {
	Status xpv2.ConditionedStatus `json:"status"`
}

func (c conditioned) condition(t string) xpv2.Condition {
	return c.Status.GetCondition(xpv2.ConditionType(t))
}

// decode converts an object read from the API server into the project's
// type (or any struct of its fields).
func decode[T any](u *unstructured.Unstructured) (*T, error) {
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, fmt.Errorf("cannot decode %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return out, nil
}

// get reads one object into T.
func get[T any](ctx context.Context, r ref) (*T, error) {
	u, err := plane.dyn.Resource(r.gvr).Namespace(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return decode[T](u)
}

// eventually is a check of its own, named what: it watches the object r
// until ok holds for it, for at most within. ok says, when it does not
// hold, what the object shows instead; the failure names what was expected
// and that. It returns whether ok held.
func eventually[T any](t *testing.T, within time.Duration, what string, r ref, ok func(*T) (bool, string)) bool {
	t.Helper()
	return t.Run(what, func(t *testing.T) {
		if seen, held := watchUntil(t.Context(), within, r, ok); !held {
			t.Errorf("not within %s: %s", within, seen)
		}
	})
}

// watchUntil watches the object r until ok holds for it, for at most
// within, and returns what ok last said of it.
func watchUntil[T any](ctx context.Context, within time.Duration, r ref, ok func(*T) (bool, string)) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	seen := "nothing yet"
	_, err := watchtools.UntilWithSync(ctx, listWatch(ctx, r), &unstructured.Unstructured{}, nil, func(e watch.Event) (bool, error) {
		u, isObject := e.Object.(*unstructured.Unstructured)
		if !isObject || e.Type == watch.Deleted {
			seen = r.String() + " does not exist"
			return false, nil
		}
		v, err := decode[T](u)
		if err != nil {
			return false, err
		}
		held, why := ok(v)
		seen = why
		return held, nil
	})
	if err != nil && ctx.Err() == nil {
		seen += " (" + err.Error() + ")"
	}
	return seen, err == nil
}

// conditionIs holds when the condition of type ct has the reason and its
// message contains text (either may be empty: anything).
func conditionIs(ct, reason, text string) func(*conditioned) (bool, string) {
	return func(c *conditioned) (bool, string) {
		got := c.condition(ct)
		return (reason == "" || string(got.Reason) == reason) && strings.Contains(got.Message, text),
			fmt.Sprintf("%s is %s %q: %q", ct, got.Status, got.Reason, got.Message)
	}
}

// eventuallyGone is a check of its own, named what: the object r no
// longer exists within the bound (a watch of it until it is deleted).
func eventuallyGone(t *testing.T, within time.Duration, what string, r ref) bool {
	t.Helper()
	return t.Run(what, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), within)
		defer cancel()
		absent := func(store cache.Store) (bool, error) { return len(store.List()) == 0, nil }
		if _, err := watchtools.UntilWithSync(ctx, listWatch(ctx, r), &unstructured.Unstructured{}, absent, func(e watch.Event) (bool, error) {
			return e.Type == watch.Deleted, nil
		}); err != nil {
			t.Errorf("%s still exists after %s", r, within)
		}
	})
}

// eventuallyNone is a check of its own, named what: list returns nothing
// within the bound. It asks once a second: what it lists spans kinds, so
// no one watch sees it.
func eventuallyNone(t *testing.T, within time.Duration, what string, list func(context.Context) ([]string, error)) bool {
	t.Helper()
	return eventuallyNil(t, within, what, func(ctx context.Context) error {
		left, err := list(ctx)
		if err == nil && len(left) > 0 {
			err = fmt.Errorf("left: %v", left)
		}
		return err
	})
}

// eventuallyNil is a check of its own, named what: f returns no error
// within the bound, asked once a second; the failure is f's last error.
// For what no watch of the API shows (a process, several kinds at once).
func eventuallyNil(t *testing.T, within time.Duration, what string, f func(context.Context) error) bool {
	t.Helper()
	return t.Run(what, func(t *testing.T) {
		deadline := time.Now().Add(within)
		for {
			err := f(t.Context())
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("not within %s: %v", within, err)
			}
			time.Sleep(time.Second)
		}
	})
}

// listWatch lists and watches the one object r.
func listWatch(ctx context.Context, r ref) *cache.ListWatch {
	client := plane.dyn.Resource(r.gvr).Namespace(r.namespace)
	byName := fields.OneTermEqualSelector("metadata.name", r.name).String()
	return &cache.ListWatch{
		ListFunc: func(o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = byName
			return client.List(ctx, o)
		},
		WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = byName
			return client.Watch(ctx, o)
		},
	}
}

// after waits until another section closed done, at most a few minutes:
// when -test.run leaves that section out, nobody closes it.
func after(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Logf("went on after 3 minutes without %s", what)
	}
}
