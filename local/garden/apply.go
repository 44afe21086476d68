package garden

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Apply applies the objects of files, in order, as an operator applies the
// garden's objects (Project, CloudProfile, CredentialsBinding,
// ControllerRegistrations) with kubectl: server-side, retrying for up to a
// minute what the API refuses while it catches up (a group just
// aggregated, an admission plugin's informer not yet synced).
func Apply(ctx context.Context, cfg *rest.Config, files ...string) error {
	var objs []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // files the caller names
		if err != nil {
			return err
		}
		o, err := parse(b)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		objs = append(objs, o...)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for _, o := range objs {
		for {
			err := apply(ctx, dyn, mapper, o)
			if err == nil {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("cannot apply %s %s: %w", o.GetKind(), name(o), err)
			}
			mapper.Reset()
			time.Sleep(250 * time.Millisecond)
		}
	}
	return nil
}

func apply(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, o *unstructured.Unstructured) error {
	m, err := mapper.RESTMapping(o.GroupVersionKind().GroupKind(), o.GroupVersionKind().Version)
	if err != nil {
		return err
	}
	var r dynamic.ResourceInterface = dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		r = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
	}
	return ServerSideApply(ctx, r, o, fieldManager)
}

// ServerSideApply applies o through r (its resource, namespaced when o is)
// as manager, taking over fields other managers hold.
func ServerSideApply(ctx context.Context, r dynamic.ResourceInterface, o *unstructured.Unstructured, manager string) error {
	b, err := o.MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	_, err = r.Patch(ctx, o.GetName(), types.ApplyPatchType, b, metav1.PatchOptions{FieldManager: manager, Force: &force})
	return err
}

func parse(b []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

func name(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
