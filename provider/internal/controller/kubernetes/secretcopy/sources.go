package secretcopy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
)

// DefaultSourceNamespaces are where the Compositions keep what they copy
// (the functions' default secretNamespace and accessSecretNamespace).
var DefaultSourceNamespaces = []string{"crossplane-system"}

// indexSecretRefs indexes every ProviderConfig by the Secrets it reads, as
// <namespace>/<name>.
const indexSecretRefs = "spec.secretRefs"

// sources says which Secrets of the management cluster a SecretCopy may
// read. The provider reads every Secret the ProviderConfigs name (admin
// kubeconfigs of the garden and of every pool cluster, Ceph's admin keys,
// the clouds' admin credentials), so a SecretCopy is the one way such a
// value could leave the management cluster: whoever can write a SecretCopy
// (a Composition, a function's bug, a tenant field that reaches a source
// name) could send it to any cluster. Only the namespaces the platform
// names are read, and never a Secret a ProviderConfig reads.
type sources struct {
	namespaces []string
	kube       client.Reader
	scheme     *runtime.Scheme
	configs    []schema.GroupVersionKind
}

// newSources indexes the ProviderConfigs of every group of the provider in
// the manager's scheme by the Secrets they read.
func newSources(ctx context.Context, mgr ctrl.Manager, namespaces []string) (*sources, error) {
	s := &sources{namespaces: namespaces, kube: mgr.GetClient(), scheme: mgr.GetScheme()}
	if len(s.namespaces) == 0 {
		s.namespaces = DefaultSourceNamespaces
	}
	for gvk := range mgr.GetScheme().AllKnownTypes() {
		if gvk.Kind != "ProviderConfig" || !strings.HasSuffix(gvk.Group, ".provider.c5c3.io") {
			continue
		}
		o, err := mgr.GetScheme().New(gvk)
		if err != nil {
			return nil, err
		}
		obj, ok := o.(client.Object)
		if !ok {
			continue
		}
		if err := mgr.GetFieldIndexer().IndexField(ctx, obj, indexSecretRefs, secretRefs); err != nil {
			return nil, fmt.Errorf("cannot index %s by its Secrets: %w", gvk, err)
		}
		s.configs = append(s.configs, gvk)
	}
	slices.SortFunc(s.configs, func(a, b schema.GroupVersionKind) int { return strings.Compare(a.Group, b.Group) })
	return s, nil
}

// refuse says why the SecretCopy may not read src, or nil.
func (s *sources) refuse(ctx context.Context, src v1alpha1.SecretSource) error {
	if !slices.Contains(s.namespaces, src.Namespace) {
		return fmt.Errorf("spec.forProvider.source.namespace %q is not a namespace the provider copies Secrets from: %s (its flag --secret-copy-source-namespaces)",
			src.Namespace, strings.Join(s.namespaces, ", "))
	}
	for _, gvk := range s.configs {
		name, err := s.readBy(ctx, gvk, src)
		if err != nil {
			return fmt.Errorf("cannot tell whether a ProviderConfig reads Secret %s/%s (spec.forProvider.source): %w", src.Namespace, src.Name, err)
		}
		if name != "" {
			return fmt.Errorf("spec.forProvider.source %s/%s is read by %s %s: a ProviderConfig's Secret never leaves the management cluster",
				src.Namespace, src.Name, gvk.GroupKind(), name)
		}
	}
	return nil
}

// readBy names a ProviderConfig of kind gvk that reads src, if one does.
func (s *sources) readBy(ctx context.Context, gvk schema.GroupVersionKind, src v1alpha1.SecretSource) (string, error) {
	o, err := s.scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return "", err
	}
	l, ok := o.(client.ObjectList)
	if !ok {
		return "", fmt.Errorf("%s is not a list", gvk.Kind+"List")
	}
	if err := s.kube.List(ctx, l, client.MatchingFields{indexSecretRefs: src.Namespace + "/" + src.Name}); err != nil {
		return "", err
	}
	items, err := meta.ExtractList(l)
	if err != nil || len(items) == 0 {
		return "", err
	}
	if m, ok := items[0].(metav1.Object); ok {
		return m.GetName(), nil
	}
	return "?", nil
}

// secretRefs are the Secrets a ProviderConfig reads: every field of its
// spec whose name ends in secretRef (credentials.secretRef, tlsSecretRef,
// caBundleSecretRef) and names a namespace and a name. Read generically,
// so a ProviderConfig kind added later is covered without a change here.
func secretRefs(o client.Object) []string {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil
	}
	var refs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, f := range v {
				if ref, ok := f.(map[string]any); ok && strings.HasSuffix(strings.ToLower(k), "secretref") {
					ns, _ := ref["namespace"].(string)
					name, _ := ref["name"].(string)
					if ns != "" && name != "" {
						refs = append(refs, ns+"/"+name)
					}
				}
				walk(f)
			}
		case []any:
			for _, f := range v {
				walk(f)
			}
		}
	}
	walk(u["spec"])
	slices.Sort(refs)
	return slices.Compact(refs)
}
