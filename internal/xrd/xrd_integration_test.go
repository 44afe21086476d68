package xrd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// The real kube-apiserver + etcd of this package's integration tests, started
// once in TestMain; nil when the binaries are absent.
var (
	kube       client.Client
	envSkipMsg string
)

func TestMain(m *testing.M) {
	os.Exit(runWithEnvtest(m))
}

func runWithEnvtest(m *testing.M) int {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); assets == "" || err != nil {
		envSkipMsg = fmt.Sprintf("needs kube-apiserver and etcd in KUBEBUILDER_ASSETS (%q): run `make test-integration`, which builds them with `make tools`", assets)
		return m.Run()
	}
	if isShort() {
		envSkipMsg = "integration test: skipped with -short"
		return m.Run()
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot start kube-apiserver and etcd: %v\n", err)
		return 1
	}
	defer env.Stop() //nolint:errcheck // best effort on the way out
	kube, err = client.New(cfg, client.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot create a client: %v\n", err)
		return 1
	}
	return m.Run()
}

// isShort reads -test.short before testing.Short may be called (flags are
// parsed by m.Run).
func isShort() bool {
	for _, a := range os.Args {
		if a == "-test.short" || a == "-test.short=true" {
			return true
		}
	}
	return false
}

func requireKube(t *testing.T) {
	t.Helper()
	if kube != nil {
		return
	}
	if os.Getenv("REQUIRE_INTEGRATION") != "" && !testing.Short() {
		t.Fatal(envSkipMsg)
	}
	t.Skip(envSkipMsg)
}

// installAsCrossplaneWould creates the CRDs Crossplane derives from an XRD with
// claim names: the cluster-scoped composite and the namespaced claim, both
// with the XRD's schema (Crossplane adds its own fields, which need no test).
func installAsCrossplaneWould(t *testing.T, ctx context.Context, x *xv1.CompositeResourceDefinition) {
	t.Helper()
	for _, n := range []struct {
		names extv1.CustomResourceDefinitionNames
		scope extv1.ResourceScope
	}{
		{x.Spec.Names, extv1.ClusterScoped},
		{*x.Spec.ClaimNames, extv1.NamespaceScoped},
	} {
		crd := &extv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: n.names.Plural + "." + x.Spec.Group},
			Spec:       extv1.CustomResourceDefinitionSpec{Group: x.Spec.Group, Names: n.names, Scope: n.scope},
		}
		for _, v := range x.Spec.Versions {
			s := &extv1.JSONSchemaProps{}
			if err := json.Unmarshal(v.Schema.OpenAPIV3Schema.Raw, s); err != nil {
				t.Fatal(err)
			}
			crd.Spec.Versions = append(crd.Spec.Versions, extv1.CustomResourceDefinitionVersion{
				Name: v.Name, Served: v.Served, Storage: v.Referenceable,
				Schema:                   &extv1.CustomResourceValidation{OpenAPIV3Schema: s},
				Subresources:             &extv1.CustomResourceSubresources{Status: &extv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: v.AdditionalPrinterColumns,
			})
		}
		if err := kube.Create(ctx, crd); err != nil {
			t.Fatalf("the real kube-apiserver refuses the CRD derived from %s: %v", x.GetName(), err)
		}
		if err := waitEstablished(ctx, crd.GetName()); err != nil {
			t.Fatal(err)
		}
	}
}

func waitEstablished(ctx context.Context, name string) error {
	for {
		crd := &extv1.CustomResourceDefinition{}
		if err := kube.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == extv1.Established && c.Status == extv1.ConditionTrue {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not established: %w", name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func readYAML(t *testing.T, file string, into any) {
	t.Helper()
	b, err := os.ReadFile(file) //nolint:gosec // test data
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// TestHypervisorClusterXRDIntegration installs the generated XRD's schema in a
// real kube-apiserver and checks what it admits, defaults and refuses.
func TestHypervisorClusterXRDIntegration(t *testing.T) {
	requireKube(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	x := &xv1.CompositeResourceDefinition{}
	readYAML(t, "../../package/xrds/xhypervisorclusters.crossplane.c5c3.io.yaml", x)
	installAsCrossplaneWould(t, ctx, x)
	if err := kube.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "infrastructure"},
	}}); err != nil {
		t.Fatal(err)
	}

	example := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		readYAML(t, "../../examples/infrastructure/eu-de-1/hypervisorcluster-hv-pool-a.yaml", &u.Object)
		return u
	}

	t.Run("ExampleClaimIsAdmittedAndDefaulted", func(t *testing.T) {
		u := example()
		unstructured.RemoveNestedField(u.Object, "spec", "kubernetesVersion")
		unstructured.RemoveNestedField(u.Object, "spec", "ironcore", "machineClass")
		if err := kube.Create(ctx, u); err != nil {
			t.Fatalf("the example claim is refused: %v", err)
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		if err := kube.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatal(err)
		}
		for path, want := range map[string]string{"spec.kubernetesVersion": "1.34", "spec.ironcore.machineClass": "baremetal-kvm"} {
			v, _, _ := unstructured.NestedString(got.Object, strings.Split(path, ".")...)
			if v != want {
				t.Errorf("%s defaulted to %q, want %q", path, v, want)
			}
		}
	})

	t.Run("RegionIsImmutable", func(t *testing.T) {
		got := example()
		if err := kube.Get(ctx, client.ObjectKeyFromObject(got), got); err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(got.Object, "eu-de-2", "spec", "region")
		err := kube.Update(ctx, got)
		if err == nil || !strings.Contains(err.Error(), "spec.region is immutable") {
			t.Errorf("changing spec.region: got error %v, want one saying spec.region is immutable", err)
		}
	})

	refused := map[string]struct {
		mutate func(u *unstructured.Unstructured)
		want   string
	}{
		"WorkersAboveMaxWorkers": {
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, int64(120), "spec", "workers")
			},
			want: "spec.workers must not exceed spec.maxWorkers",
		},
		"NoZones": {
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedSlice(u.Object, []any{}, "spec", "zones")
			},
			want: "spec.zones: Invalid value: 0: spec.zones in body should have at least 1 items",
		},
		"PoolNameTooLongForGardener": {
			mutate: func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "hypervisor-pool-eu-de-1-a", "spec", "name")
			},
			want: `spec.name: Invalid value: "hypervisor-pool-eu-de-1-a": spec.name in body should match`,
		},
		"MissingMachinePool": {
			mutate: func(u *unstructured.Unstructured) {
				unstructured.RemoveNestedField(u.Object, "spec", "ironcore", "machinePool")
			},
			want: "spec.ironcore.machinePool: Required value",
		},
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			u := example()
			u.SetName(strings.ToLower(name))
			tc.mutate(u)
			err := kube.Create(ctx, u)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("creating a claim with %s: got error %v, want one containing %q", name, err, tc.want)
			}
		})
	}
}
