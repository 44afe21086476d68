package xrd

import (
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/test"
	xv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	"github.com/google/go-cmp/cmp"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

func crd(scope extv1.ResourceScope) *extv1.CustomResourceDefinition {
	return &extv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "xpools.crossplane.c5c3.io"},
		Spec: extv1.CustomResourceDefinitionSpec{
			Group: "crossplane.c5c3.io",
			Names: extv1.CustomResourceDefinitionNames{Kind: "XPool", Plural: "xpools", Singular: "xpool", Categories: []string{"cobaltcore"}},
			Scope: scope,
			Versions: []extv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				AdditionalPrinterColumns: []extv1.CustomResourceColumnDefinition{{Name: "REGION", Type: "string", JSONPath: ".spec.region"}},
				Schema: &extv1.CustomResourceValidation{OpenAPIV3Schema: &extv1.JSONSchemaProps{
					Type:        "object",
					Description: "A pool.",
					Required:    []string{"spec", "metadata"},
					Properties: map[string]extv1.JSONSchemaProps{
						"apiVersion": {Type: "string"},
						"kind":       {Type: "string"},
						"metadata":   {Type: "object"},
						"spec":       {Type: "object", Properties: map[string]extv1.JSONSchemaProps{"region": {Type: "string"}}},
						"status":     {Type: "object"},
					},
				}},
			}},
		},
	}
}

var def = v1alpha1.CompositeDefinition{
	Kind: "XPool", Plural: "xpools", ClaimKind: "Pool", ClaimPlural: "pools",
	ConnectionSecretKeys: []string{"kubeconfig"}, DefaultComposition: "xpools.crossplane.c5c3.io",
}

// deprecated is def, deprecated.
var deprecated = func() v1alpha1.CompositeDefinition {
	d := def
	d.Deprecation = "claim pools in group new.example.org"
	return d
}()

// poolXRD is the XRD FromCRD builds of crd(extv1.ClusterScoped) and def.
func poolXRD() *xv1.CompositeResourceDefinition {
	return &xv1.CompositeResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.crossplane.io/v1", Kind: "CompositeResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "xpools.crossplane.c5c3.io"},
		Spec: xv1.CompositeResourceDefinitionSpec{
			Group:                 "crossplane.c5c3.io",
			Names:                 extv1.CustomResourceDefinitionNames{Kind: "XPool", ListKind: "XPoolList", Plural: "xpools", Singular: "xpool", Categories: []string{"cobaltcore"}},
			ClaimNames:            &extv1.CustomResourceDefinitionNames{Kind: "Pool", ListKind: "PoolList", Plural: "pools", Categories: []string{"cobaltcore"}},
			ConnectionSecretKeys:  []string{"kubeconfig"},
			DefaultCompositionRef: &xv1.CompositionReference{Name: "xpools.crossplane.c5c3.io"},
			Versions: []xv1.CompositeResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Referenceable: true,
				AdditionalPrinterColumns: []extv1.CustomResourceColumnDefinition{{Name: "REGION", Type: "string", JSONPath: ".spec.region"}},
				Schema: &xv1.CompositeResourceValidation{OpenAPIV3Schema: runtime.RawExtension{Raw: []byte(
					`{"description":"A pool.","type":"object","required":["spec"],"properties":{"spec":{"type":"object","properties":{"region":{"type":"string"}}},"status":{"type":"object"}}}`)}},
			}},
		},
	}
}

func TestFromCRD(t *testing.T) {
	type want struct {
		xrd *xv1.CompositeResourceDefinition
		err error
	}
	cases := map[string]struct {
		reason string
		crd    *extv1.CustomResourceDefinition
		def    v1alpha1.CompositeDefinition
		want   want
	}{
		"ClusterScopedComposite": {
			reason: "The XRD carries claim names, connection keys, the default Composition, printer columns, and only spec and status of the schema.",
			crd:    crd(extv1.ClusterScoped),
			def:    def,
			want:   want{xrd: poolXRD()},
		},
		"DeprecatedKind": {
			reason: "A deprecated definition marks every version deprecated with its warning, which Crossplane copies into both CRDs; the rest is as without.",
			crd:    crd(extv1.ClusterScoped),
			def:    deprecated,
			want: want{xrd: func() *xv1.CompositeResourceDefinition {
				x := poolXRD()
				x.Spec.Versions[0].Deprecated, x.Spec.Versions[0].DeprecationWarning = ptr.To(true), ptr.To(deprecated.Deprecation)
				return x
			}()},
		},
		"NamespacedType": {
			reason: "A claimable composite must be cluster scoped; the error says which marker fixes it.",
			crd:    crd(extv1.NamespaceScoped),
			def:    def,
			want:   want{err: errors.New("XPool must be cluster scoped (+kubebuilder:resource:scope=Cluster): XRDs with claims define cluster-scoped composites")},
		},
		"KindMismatch": {
			reason: "A definition applied to another kind's CRD is refused.",
			crd:    crd(extv1.ClusterScoped),
			def:    v1alpha1.CompositeDefinition{Kind: "XOther"},
			want:   want{err: errors.New("CRD xpools.crossplane.c5c3.io is of kind XPool, not XOther")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := FromCRD(tc.crd, tc.def)
			if diff := cmp.Diff(tc.want.err, err, test.EquateErrors()); diff != "" {
				t.Fatalf("%s\nFromCRD(...): -want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.xrd, got); diff != "" {
				t.Errorf("%s\nFromCRD(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
