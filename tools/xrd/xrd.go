// Package xrd turns the CustomResourceDefinitions that controller-gen derives
// from the consumer API's Go types into Crossplane CompositeResourceDefinitions.
//
// The XRDs are apiextensions.crossplane.io/v1 with claimNames so that tenant
// claims work on Crossplane 1.x and, as LegacyCluster composites, on 2.x.
package xrd

import (
	"encoding/json"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
)

// Crossplane owns every top-level field of a composite except spec and status
// (and merges its own fields into those), so an XRD schema carries only them.
var schemaRoots = []string{"spec", "status"}

// FromCRD builds the XRD for a composite from the CRD of its Go type.
func FromCRD(crd *extv1.CustomResourceDefinition, def v1alpha1.CompositeDefinition) (*xv1.CompositeResourceDefinition, error) {
	if crd.Spec.Names.Kind != def.Kind {
		return nil, errors.Errorf("CRD %s is of kind %s, not %s", crd.GetName(), crd.Spec.Names.Kind, def.Kind)
	}
	if crd.Spec.Scope != extv1.ClusterScoped {
		return nil, errors.Errorf("%s must be cluster scoped (+kubebuilder:resource:scope=Cluster): XRDs with claims define cluster-scoped composites", def.Kind)
	}

	group := crd.Spec.Group
	if def.Group != "" {
		group = def.Group
	}
	x := &xv1.CompositeResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: xv1.SchemeGroupVersion.String(), Kind: xv1.CompositeResourceDefinitionKind},
		ObjectMeta: metav1.ObjectMeta{Name: def.Plural + "." + group},
		Spec: xv1.CompositeResourceDefinitionSpec{
			Group: group,
			Names: extv1.CustomResourceDefinitionNames{
				Kind: def.Kind, ListKind: def.Kind + "List", Plural: def.Plural,
				Singular: crd.Spec.Names.Singular, Categories: crd.Spec.Names.Categories,
			},
			ClaimNames: &extv1.CustomResourceDefinitionNames{
				Kind: def.ClaimKind, ListKind: def.ClaimKind + "List", Plural: def.ClaimPlural,
				Categories: crd.Spec.Names.Categories,
			},
			ConnectionSecretKeys: def.ConnectionSecretKeys,
		},
	}
	if def.DefaultComposition != "" {
		x.Spec.DefaultCompositionRef = &xv1.CompositionReference{Name: def.DefaultComposition}
	}

	for _, v := range crd.Spec.Versions {
		s, err := compositeSchema(v.Schema)
		if err != nil {
			return nil, errors.Wrapf(err, "cannot build schema of %s/%s", def.Kind, v.Name)
		}
		xv := xv1.CompositeResourceDefinitionVersion{
			Name:                     v.Name,
			Served:                   v.Served,
			Referenceable:            v.Storage,
			Schema:                   &xv1.CompositeResourceValidation{OpenAPIV3Schema: runtime.RawExtension{Raw: s}},
			AdditionalPrinterColumns: v.AdditionalPrinterColumns,
		}
		if def.Deprecation != "" {
			// Crossplane copies both into the composite's and the claim's
			// CRDs, whose API server then warns on every request.
			xv.Deprecated, xv.DeprecationWarning = ptr.To(true), ptr.To(def.Deprecation)
		}
		x.Spec.Versions = append(x.Spec.Versions, xv)
	}
	return x, nil
}

// compositeSchema keeps the spec and status of a CRD's schema.
func compositeSchema(v *extv1.CustomResourceValidation) ([]byte, error) {
	if v == nil || v.OpenAPIV3Schema == nil {
		return nil, errors.New("CRD version has no openAPIV3Schema")
	}
	in := v.OpenAPIV3Schema
	out := extv1.JSONSchemaProps{
		Type:                   "object",
		Description:            in.Description,
		Properties:             map[string]extv1.JSONSchemaProps{},
		XValidations:           in.XValidations,
		XPreserveUnknownFields: in.XPreserveUnknownFields,
	}
	for _, k := range schemaRoots {
		if p, ok := in.Properties[k]; ok {
			out.Properties[k] = p
		}
	}
	for _, r := range in.Required {
		if _, ok := out.Properties[r]; ok {
			out.Required = append(out.Required, r)
		}
	}
	return json.Marshal(out)
}

// Marshal renders an XRD as YAML without the empty status and creation
// timestamp that a typed object would otherwise carry.
func Marshal(x *xv1.CompositeResourceDefinition) ([]byte, error) {
	j, err := json.Marshal(x)
	if err != nil {
		return nil, errors.Wrap(err, "cannot marshal XRD")
	}
	m := map[string]any{}
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, errors.Wrap(err, "cannot unmarshal XRD")
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	return yaml.Marshal(m)
}

// ComposeInGroup copies a Composition of a composite served in the CRD's
// group for the same composite served in another group (see
// v1alpha1.CompositeDefinition.Group): the same pipeline, the composite type
// and the name's group changed. It returns nil for a Composition of another
// composite.
func ComposeInGroup(comp map[string]any, crd *extv1.CustomResourceDefinition, def v1alpha1.CompositeDefinition) (map[string]any, error) {
	spec, _ := comp["spec"].(map[string]any)
	ref, _ := spec["compositeTypeRef"].(map[string]any)
	if ref == nil || ref["kind"] != def.Kind {
		return nil, nil
	}
	apiVersion, _ := ref["apiVersion"].(string)
	from, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot parse compositeTypeRef.apiVersion %q", apiVersion)
	}
	if from.Group != crd.Spec.Group {
		return nil, nil
	}
	out := runtime.DeepCopyJSON(comp)
	md, _ := out["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	suffix := "." + def.Plural + "." + crd.Spec.Group
	if !strings.HasSuffix(name, suffix) {
		return nil, errors.Errorf("Composition %s of %s must be named <variant>%s, to be named <variant>.%s.%s in group %s", name, def.Kind, suffix, def.Plural, def.Group, def.Group)
	}
	md["name"] = strings.TrimSuffix(name, suffix) + "." + def.Plural + "." + def.Group
	out["spec"].(map[string]any)["compositeTypeRef"].(map[string]any)["apiVersion"] = schema.GroupVersion{Group: def.Group, Version: from.Version}.String()
	return out, nil
}
