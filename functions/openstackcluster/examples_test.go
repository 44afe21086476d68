package main

import (
	"os"
	"path/filepath"
	"testing"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
)

// shareablePercent is function-storage-cluster's: the part of a storage
// pool's target capacity it shares out among its clouds.
const shareablePercent = 85

// TestTheExampleCloudsFitTheirStoragePools: what the example clouds ask of
// each shared storage pool of the examples (every pool's quota times its
// replication, the claims defaulted by their XRD as the API server defaults
// them, no Composition cap) fits what that pool shares out. The demo applies
// the examples: a pool too small refuses a cloud there, which only the e2e
// saw before.
func TestTheExampleCloudsFitTheirStoragePools(t *testing.T) {
	clouds := examples[v1alpha1.XOpenStackCluster](t, "../../examples/tenants/*/openstack-clusters/*.yaml", "../../package/xrds/xopenstackclusters.c5c3.io.yaml")
	pools := examples[v1alpha1.XStorageCluster](t, "../../examples/infrastructure/*/pools/storage/*.yaml", "../../package/xrds/xstorageclusters.crossplane.c5c3.io.yaml")
	if len(clouds) == 0 || len(pools) == 0 {
		t.Fatalf("read %d example clouds and %d storage pools", len(clouds), len(pools))
	}
	for _, p := range pools {
		if p.Spec.Dedicated {
			continue
		}
		q, err := apiresource.ParseQuantity(string(p.Spec.TargetCapacity()))
		if err != nil {
			t.Fatalf("storage pool %s: target capacity: %v", p.Spec.Name, err)
		}
		shareable := (q.Value() >> 30) * shareablePercent / 100
		var asked int64
		for _, x := range clouds {
			for _, st := range x.Spec.StorageClusters {
				if st == p.Spec.Name {
					gb := askedGB(&cloud{xr: x, in: &input.CloudSettings{}, name: x.GetName()}, p, nil)
					t.Logf("%s asks %d GB of %s", x.GetName(), gb, p.Spec.Name)
					asked += gb
				}
			}
		}
		if asked > shareable {
			t.Errorf("the example clouds ask %d GB of storage pool %s, which shares out %d GB (%d %% of %s)", asked, p.Spec.Name, shareable, shareablePercent, p.Spec.TargetCapacity())
		}
	}
}

// examples reads the claims matching glob into composites of type T, each
// defaulted by the first version's schema of the XRD in xrd.
func examples[T any](t *testing.T, glob, xrd string) []*T {
	t.Helper()
	b, err := os.ReadFile(xrd)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema apiextensionsv1.JSONSchemaProps `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &d); err != nil || len(d.Spec.Versions) == 0 {
		t.Fatalf("XRD %s: %v", xrd, err)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&d.Spec.Versions[0].Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*T, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var claim map[string]any
		if err := yaml.Unmarshal(b, &claim); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		structuraldefaulting.Default(claim, s)
		x := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(claim, x); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, x)
	}
	return out
}
