package xrd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/test/kubetest"
	"github.com/c5c3/consumer-plane/test/xrdtest"
)

// kube is the real kube-apiserver of this package's integration tests
// (test/kubetest), once requireKube has run.
var kube client.Client

func TestMain(m *testing.M) {
	os.Exit(kubetest.Main(m))
}

func requireKube(t *testing.T) {
	t.Helper()
	kube = kubetest.Client(t)
}

func readYAMLFile(file string, into any) error {
	b, err := os.ReadFile(file) //nolint:gosec // test data
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

const examples = "../../examples"

// installConsumerAPI installs the CRDs Crossplane derives from every generated
// XRD, and the namespaces the examples claim in, once per test binary.
var installConsumerAPI = sync.OnceValue(func() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := xrdtest.InstallXRDs(ctx, kube, "../../package/xrds")
	if err != nil {
		return err
	}
	if n != len(v1alpha1.Composites) {
		return fmt.Errorf("want the %d XRDs of the consumer API in package/xrds, found %d", len(v1alpha1.Composites), n)
	}
	for _, ns := range []string{"infrastructure", "team-a", "team-b", "internal", "finance", "tenant-customer-a", "tenant-customer-b", "tenant-finance"} {
		if err := kube.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns},
		}}); err != nil {
			return err
		}
	}
	return keepConfigMapParams(ctx)
})

// keepConfigMapParams binds, for the whole test binary, a policy that takes
// ConfigMaps as params and matches nothing. The policies of the examples take
// ConfigMaps too, and each test deletes its own when it ends; kube-apiserver
// 1.35 stops its ConfigMap param informer for good once no binding names the
// kind for a second (kubernetes/kubernetes#130887), after which a policy
// bound later finds no params and refuses everything. A landscape keeps both
// policies bound; operations.md says what to do when it does not.
func keepConfigMapParams(ctx context.Context) error {
	for _, o := range []map[string]any{{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": "test-keeps-configmap-params"},
		"spec": map[string]any{
			"paramKind": map[string]any{"apiVersion": "v1", "kind": "ConfigMap"},
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"apiGroups": []any{"keeper.test.c5c3.io"}, "apiVersions": []any{"*"}, "operations": []any{"CREATE"}, "resources": []any{"nothing"},
			}}},
			"validations": []any{map[string]any{"expression": "true"}},
		},
	}, {
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
		"metadata": map[string]any{"name": "test-keeps-configmap-params"},
		"spec": map[string]any{
			"policyName": "test-keeps-configmap-params", "validationActions": []any{"Deny"},
			"paramRef": map[string]any{"name": "none", "namespace": "default", "parameterNotFoundAction": "Allow"},
		},
	}} {
		if err := kube.Create(ctx, &unstructured.Unstructured{Object: o}); err != nil {
			return err
		}
	}
	return nil
}

func setup(t *testing.T) context.Context {
	t.Helper()
	requireKube(t)
	if err := installConsumerAPI(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// example reads an example claim, renamed so that each case creates its own.
func example(t *testing.T, file, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := readYAMLFile(filepath.Join(examples, file), &u.Object); err != nil {
		t.Fatal(err)
	}
	if name != "" {
		u.SetName(name)
	}
	return u
}

// set sets a dotted field path of a claim (no list indices).
func set(path string, v any) func(u *unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		if err := unstructured.SetNestedField(u.Object, v, strings.Split(path, ".")...); err != nil {
			panic(err)
		}
	}
}

func del(path string) func(u *unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		unstructured.RemoveNestedField(u.Object, strings.Split(path, ".")...)
	}
}

const (
	hvPool      = "infrastructure/eu-de-1/pools/hypervisor/hv-pool-a.yaml"
	hvPoolFin   = "infrastructure/eu-de-1/pools/hypervisor/hv-pool-fin.yaml"
	stPool      = "infrastructure/eu-de-1/pools/storage/st-pool-a.yaml"
	stPoolFin   = "infrastructure/eu-de-1/pools/storage/st-pool-fin.yaml"
	stPoolS     = "infrastructure/eu-de-1/pools/storage/st-pool-s.yaml"
	controlPlan = "infrastructure/eu-de-1/control-plane/controlplanecluster.yaml"
	cloud       = "tenants/team-a/openstack-clusters/team-a-prod.yaml"
)

// TestExamplesAdmittedIntegration creates every example claim in a real
// kube-apiserver: the examples are valid, and the API server defaults what
// they leave out.
func TestExamplesAdmittedIntegration(t *testing.T) {
	ctx := setup(t)
	n := 0
	err := filepath.WalkDir(examples, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := readYAMLFile(path, &u.Object); err != nil {
			return err
		}
		// The pools in crossplane.c5c3.io, the clouds in c5c3.io.
		if gv := u.GetAPIVersion(); gv != v1alpha1.SchemeGroupVersion.String() && gv != v1alpha1.DocsGroupVersion.String() {
			return nil
		}
		n++
		if err := kube.Create(ctx, u); err != nil {
			t.Errorf("%s: the example claim is refused: %v", path, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 15 {
		t.Fatalf("found %d example claims, want the whole scenario (at least 15)", n)
	}

	// Defaults the examples rely on.
	got := example(t, "tenants/team-b/openstack-clusters/team-b-staging.yaml", "")
	if err := kube.Get(ctx, client.ObjectKeyFromObject(got), got); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"spec.openStackRelease":                            "2025.2",
		"spec.services.nova":                               true,
		"spec.services.octavia":                            false,
		"spec.network.mtu":                                 nil, // not defaulted: nothing applies it yet, and a set one is reported
		"spec.storage.ceph.volumePool.replication":         int64(3),
		"spec.storage.ceph.volumePool.compression":         "aggressive",
		"spec.storage.ceph.ephemeralPool.replication":      int64(2),
		"spec.storage.ceph.filesystem.enabled":             false,
		"spec.cortex.enabled":                              true,
		"spec.storage.ceph.filesystem.dataPoolReplication": int64(3),
	} {
		v, _, _ := unstructured.NestedFieldNoCopy(got.Object, strings.Split(path, ".")...)
		if diff := cmp.Diff(want, v); diff != "" {
			t.Errorf("team-b-staging: %s defaulted to %v, want %v", path, v, want)
		}
	}
}

// TestDocsClaimsAdmittedIntegration creates every claim of the C5C3
// operations docs, byte for byte as the docs print them (their apiVersion
// c5c3.io/v1alpha1 for clouds, crossplane.c5c3.io/v1alpha1 for pools), in a
// real kube-apiserver: each is accepted as written, in the group it names.
func TestDocsClaimsAdmittedIntegration(t *testing.T) {
	ctx := setup(t)
	b, err := os.ReadFile("testdata/c5c3-docs-claims.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(b), "\n---\n")
	if len(docs) != 4 {
		t.Fatalf("want the docs' 4 claims in testdata/c5c3-docs-claims.yaml, found %d", len(docs))
	}
	for _, doc := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		written := u.GetAPIVersion()
		if err := kube.Create(ctx, u); err != nil {
			t.Errorf("%s %s %s/%s as the C5C3 docs write it is refused: %v", written, u.GetKind(), u.GetNamespace(), u.GetName(), err)
			continue
		}
		if err := kube.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			t.Fatal(err)
		}
		if u.GetAPIVersion() != written {
			t.Errorf("%s %s: stored as %s", written, u.GetName(), u.GetAPIVersion())
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "zones"); found {
			t.Errorf("%s %s: spec.zones was defaulted by the API server; the function takes them from the CloudProfile", u.GetKind(), u.GetName())
		}
	}
}

// TestDocsFlowPoolClaimsAdmittedIntegration creates pool claims as the C5C3
// docs' provisioning flow draws them — a region and a size, no spec.name, no
// ironcore — in a real kube-apiserver: admitted, with the machine class
// defaulted (the functions name the pool and its machine pool after the
// claim). Without a region they are refused naming spec.region
// (TestBadClaimsRefusedIntegration).
func TestDocsFlowPoolClaimsAdmittedIntegration(t *testing.T) {
	ctx := setup(t)
	for _, tc := range []struct {
		claim, class string
	}{
		{`{"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "HypervisorCluster", "metadata": {"name": "flow-hv-pool", "namespace": "infrastructure"}, "spec": {"region": "eu-de-1", "workers": 50}}`, "baremetal-kvm"},
		{`{"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "StorageCluster", "metadata": {"name": "flow-st-pool", "namespace": "infrastructure"}, "spec": {"region": "eu-de-1", "capacity": "500Ti"}}`, "baremetal-storage"},
	} {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(tc.claim), &u.Object); err != nil {
			t.Fatal(err)
		}
		if err := kube.Create(ctx, u); err != nil {
			t.Errorf("%s %s as the docs' flow writes it is refused: %v", u.GetKind(), u.GetName(), err)
			continue
		}
		if err := kube.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
			t.Fatal(err)
		}
		if c, _, _ := unstructured.NestedString(u.Object, "spec", "ironcore", "machineClass"); c != tc.class {
			t.Errorf("%s %s: spec.ironcore.machineClass %q, want the default %q", u.GetKind(), u.GetName(), c, tc.class)
		}
	}
}

// TestOpenStackClustersResolveToTheDocsGroupIntegration reads the real
// kube-apiserver's discovery as kubectl does: with the cloud served in both
// groups, "openstackclusters" means the docs' c5c3.io (API groups of equal
// priority are ordered by name), and the other group is reached by its full
// name, as docs/tenant-guide.md says.
func TestOpenStackClustersResolveToTheDocsGroupIntegration(t *testing.T) {
	setup(t)
	dc, err := discovery.NewDiscoveryClientForConfig(kubetest.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	for in, want := range map[string]string{
		"openstackclusters":                    v1alpha1.DocsGroup,
		"openstackcluster":                     v1alpha1.DocsGroup,
		"openstackclusters.c5c3.io":            v1alpha1.DocsGroup,
		"openstackclusters.crossplane.c5c3.io": v1alpha1.Group,
	} {
		// As kubectl: resource.version.group first, then resource.group.
		gvr, gr := schema.ParseResourceArg(in)
		got, err := schema.GroupVersionResource{}, error(nil)
		if gvr != nil {
			got, err = mapper.ResourceFor(*gvr)
		}
		if gvr == nil || err != nil {
			got, err = mapper.ResourceFor(gr.WithVersion(""))
		}
		if err != nil {
			t.Errorf("kubectl get %s: %v", in, err)
			continue
		}
		if got.Group != want {
			t.Errorf("kubectl get %s: resolves to group %s, want %s", in, got.Group, want)
		}
	}
}

// TestLegacyCloudsWarnIntegration: a cloud claimed in crossplane.c5c3.io, the
// group clouds were claimed in before they moved to the docs' c5c3.io, is
// still admitted and served, and every request to it, to its composite and
// to their lists is answered with the warning that says where clouds are
// claimed now, as kubectl prints it. The docs' group warns of nothing.
func TestLegacyCloudsWarnIntegration(t *testing.T) {
	ctx := setup(t)
	w := &kubetest.Warnings{}
	cfg := rest.CopyConfig(kubetest.Config(t))
	cfg.WarningHandler = w
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	legacy := schema.GroupVersionResource{Group: v1alpha1.Group, Version: v1alpha1.Version, Resource: "openstackclusters"}
	docs := schema.GroupVersionResource{Group: v1alpha1.DocsGroup, Version: v1alpha1.Version, Resource: "openstackclusters"}
	for _, tc := range []struct {
		gvr  schema.GroupVersionResource
		name string
		want []string
	}{
		{legacy, "legacy-cloud", []string{v1alpha1.LegacyCloudWarning}},
		{docs, "docs-cloud", nil},
	} {
		u := example(t, cloud, tc.name)
		u.SetAPIVersion(tc.gvr.GroupVersion().String())
		ns := dyn.Resource(tc.gvr).Namespace(u.GetNamespace())
		for _, r := range []struct {
			verb string
			do   func() error
		}{
			{"create", func() error { _, err := ns.Create(ctx, u, metav1.CreateOptions{}); return err }},
			{"get", func() error { _, err := ns.Get(ctx, tc.name, metav1.GetOptions{}); return err }},
			{"list of the composites", func() error {
				_, err := dyn.Resource(tc.gvr.GroupVersion().WithResource("xopenstackclusters")).List(ctx, metav1.ListOptions{})
				return err
			}},
		} {
			verb := r.verb
			if err := r.do(); err != nil {
				t.Fatalf("%s %s %s: %v", verb, tc.gvr.GroupResource(), tc.name, err)
			}
			if diff := cmp.Diff(tc.want, w.Take()); diff != "" {
				t.Errorf("%s %s %s: the API server's warnings: -want, +got:\n%s", verb, tc.gvr.GroupResource(), tc.name, diff)
			}
		}
	}
}

// TestBadClaimsRefusedIntegration sends claims a tenant or platform engineer
// could get wrong to a real kube-apiserver: each must be refused, with a
// message that names the field.
func TestBadClaimsRefusedIntegration(t *testing.T) {
	ctx := setup(t)
	cases := map[string]struct {
		file   string
		mutate []func(*unstructured.Unstructured)
		want   []string
	}{
		"hv-workers-above-max":          {hvPool, muts(set("spec.workers", int64(70))), []string{"spec.workers must not exceed spec.maxWorkers"}},
		"hv-no-zones":                   {hvPool, muts(set("spec.zones", []any{})), []string{"spec.zones", "at least 1 items"}},
		"hv-duplicate-zone":             {hvPool, muts(set("spec.zones", []any{"eu-de-1a", "eu-de-1a"})), []string{"spec.zones[1]", "Duplicate value"}},
		"hv-name-too-long":              {hvPool, muts(set("spec.name", "hypervisor-pool-eu-de-1-a-for-every-tenant")), []string{"spec.name", "may not be more than 40"}},
		"hv-name-invalid":               {hvPool, muts(set("spec.name", "HV_POOL")), []string{"spec.name", "should match"}},
		"hv-workers-wrong-type":         {hvPool, muts(set("spec.workers", "twenty")), []string{"spec.workers", "must be of type integer"}},
		"hv-kubernetes-1-29":            {hvPool, muts(set("spec.kubernetesVersion", "1.29")), []string{"spec.kubernetesVersion", "should match"}},
		"hv-dedicated-no-tenants":       {hvPool, muts(set("spec.dedicated", true)), []string{"spec.allowedTenants must name the tenant namespace(s) a dedicated pool is for"}},
		"hv-dedicated-label-not-bool":   {hvPool, muts(set("spec.labels.dedicated", "yes")), []string{`spec.labels.dedicated marks a dedicated pool, as spec.dedicated does: it must be "true" or "false"`}},
		"hv-dedicated-label-disagrees":  {hvPoolFin, muts(set("spec.labels.dedicated", "false")), []string{`spec.labels.dedicated is "false" and spec.dedicated is true`}},
		"st-dedicated-label-not-bool":   {stPool, muts(set("spec.labels", map[string]any{"dedicated": "1"})), []string{`spec.labels.dedicated marks a dedicated pool`}},
		"hv-tenant-invalid":             {hvPoolFin, muts(set("spec.allowedTenants", []any{"Team_A"})), []string{"spec.allowedTenants[0]", "should match"}},
		"hv-no-region":                  {hvPool, muts(del("spec.region")), []string{"spec.region", "Required value"}},
		"st-replication-0":              {stPool, muts(set("spec.ceph.replicationFactor", int64(0))), []string{"spec.ceph.replicationFactor", "greater than or equal to 1"}},
		"st-replication-6":              {stPool, muts(set("spec.ceph.replicationFactor", int64(6))), []string{"spec.ceph.replicationFactor", "less than or equal to 5"}},
		"st-device-class-unknown":       {stPool, muts(set("spec.ceph.deviceClass", "floppy")), []string{"spec.ceph.deviceClass", "Unsupported value", `"nvme"`}},
		"st-too-few-workers":            {stPool, muts(set("spec.workers", int64(2))), []string{"spec.workers", "greater than or equal to 3"}},
		"st-capacity-not-quantity":      {stPool, muts(set("spec.ceph.targetCapacity", "lots")), []string{"spec.ceph.targetCapacity"}},
		"st-capacity-twice":             {stPool, muts(set("spec.capacity", "400Ti")), []string{"spec.capacity and spec.ceph.targetCapacity both size the pool"}},
		"st-capacity-not-quantity-docs": {stPool, muts(set("spec.capacity", "lots")), []string{"spec.capacity"}},
		"st-osd-count-0":                {stPool, muts(set("spec.ceph.osdCount", int64(0))), []string{"spec.ceph.osdCount", "greater than or equal to 1"}},
		"cp-ha-one-zone":                {controlPlan, muts(set("spec.zones", []any{"eu-de-1a"})), []string{"spec.zones must name at least 3 zones when spec.highAvailability is true"}},
		"cp-no-zones":                   {controlPlan, muts(set("spec.zones", []any{})), []string{"spec.zones", "at least 1 items"}},
		"st-stretched-no-zones":         {stPoolS, muts(del("spec.zones")), []string{"spec.zones must name the 2 zones a stretched pool (spec.arbiterCluster) spans"}},
		"st-stretched-three-zones":      {stPoolS, muts(set("spec.zones", []any{"eu-de-1a", "eu-de-1b", "eu-de-1c"})), []string{"spec.zones must name the 2 zones a stretched pool (spec.arbiterCluster) spans"}},
		"cp-no-region":                  {controlPlan, muts(del("spec.region")), []string{"spec.region", "Required value"}},
		"cp-volume-not-quantity":        {controlPlan, muts(set("spec.volumeSize", "big")), []string{"spec.volumeSize"}},
		"os-size-unknown":               {cloud, muts(set("spec.size", "huge")), []string{"spec.size", "Unsupported value", `"xlarge"`}},
		"os-no-hypervisor-pools":        {cloud, muts(set("spec.hypervisorClusters", []any{})), []string{"spec.hypervisorClusters", "at least 1 items"}},
		"os-no-storage-pools":           {cloud, muts(del("spec.storageClusters")), []string{"spec.storageClusters", "Required value"}},
		"os-duplicate-hv-pool":          {cloud, muts(set("spec.hypervisorClusters", []any{"hv-pool-a", "hv-pool-a"})), []string{"spec.hypervisorClusters[1]", "Duplicate value"}},
		"os-duplicate-hv-share":         {cloud, muts(set("spec.hypervisorShares", []any{map[string]any{"name": "hv-pool-a", "nodes": int64(2)}, map[string]any{"name": "hv-pool-a", "nodes": int64(3)}})), []string{"spec.hypervisorShares[1]", "Duplicate value"}},
		"os-share-of-unlisted-pool":     {cloud, muts(set("spec.hypervisorShares", []any{map[string]any{"name": "hv-pool-z", "nodes": int64(2)}})), []string{"spec.hypervisorShares may only name pools listed in spec.hypervisorClusters"}},
		"os-hv-pool-as-object":          {cloud, muts(set("spec.hypervisorClusters", []any{map[string]any{"name": "hv-pool-a", "nodes": int64(2)}})), []string{"spec.hypervisorClusters[0]", "must be of type string"}},
		"os-duplicate-st-pool":          {cloud, muts(set("spec.storageClusters", []any{"st-pool-a", "st-pool-a"})), []string{"spec.storageClusters[1]", "Duplicate value"}},
		"os-volume-replication-0":       {cloud, muts(set("spec.storage.ceph.volumePool.replication", int64(0))), []string{"spec.storage.ceph.volumePool.replication", "greater than or equal to 1"}},
		"os-volume-replication-6":       {cloud, muts(set("spec.storage.ceph.volumePool.replication", int64(6))), []string{"spec.storage.ceph.volumePool.replication", "less than or equal to 5"}},
		"os-image-replication-6":        {cloud, muts(set("spec.storage.ceph.imagePool.replication", int64(6))), []string{"spec.storage.ceph.imagePool.replication", "less than or equal to 5"}},
		"os-compression-unknown":        {cloud, muts(set("spec.storage.ceph.volumePool.compression", "zstd")), []string{"spec.storage.ceph.volumePool.compression", "Unsupported value"}},
		"os-quota-negative":             {cloud, muts(set("spec.storage.ceph.volumePool.quotaGB", int64(-1))), []string{"spec.storage.ceph.volumePool.quotaGB", "greater than or equal to 0"}},
		"os-tls-empty-issuer":           {cloud, muts(set("spec.tls.issuerRef", "")), []string{"spec.tls.issuerRef must name a cert-manager issuer when spec.tls.enabled is true"}},
		"os-mtu-too-small":              {cloud, muts(set("spec.network.mtu", int64(100))), []string{"spec.network.mtu", "greater than or equal to 1280"}},
		"os-release-invalid":            {cloud, muts(set("spec.openStackRelease", "2025.3")), []string{"spec.openStackRelease", "should match"}},
		"os-share-zero-nodes":           {cloud, muts(set("spec.hypervisorShares", []any{map[string]any{"name": "hv-pool-a", "nodes": int64(0)}})), []string{"spec.hypervisorShares[0].nodes", "greater than or equal to 1"}},
		"os-share-without-nodes":        {cloud, muts(set("spec.hypervisorShares", []any{map[string]any{"name": "hv-pool-a"}})), []string{"spec.hypervisorShares[0].nodes", "Required value"}},
		"os-pool-name-invalid":          {cloud, muts(set("spec.hypervisorClusters", []any{"HV_POOL"})), []string{"spec.hypervisorClusters[0]", "should match"}},
		"os-cortex-pipeline-unknown":    {cloud, muts(set("spec.cortex", map[string]any{"pipelines": []any{"glance"}})), []string{"spec.cortex.pipelines[0]", "Unsupported value"}},
		"os-compute-quota-below-1":      {cloud, muts(set("spec.quotas.compute.cores", int64(-2))), []string{"spec.quotas.compute.cores", "greater than or equal to -1"}},
		"os-cores-beyond-nova":          {cloud, muts(set("spec.quotas.compute.cores", int64(1)<<31)), []string{"spec.quotas.compute.cores", "less than or equal to 2147483647"}},
		"os-ram-beyond-nova":            {cloud, muts(set("spec.quotas.compute.ramGB", int64(1)<<21)), []string{"spec.quotas.compute.ramGB", "less than or equal to 2097151"}},
		"os-ports-near-2^63":            {cloud, muts(set("spec.quotas.network.ports", int64(1)<<62)), []string{"spec.quotas.network.ports", "less than or equal to 2147483647"}},
		"os-quota-gb-overflows":         {cloud, muts(set("spec.storage.ceph.volumePool.quotaGB", int64(1)<<40)), []string{"spec.storage.ceph.volumePool.quotaGB", "less than or equal to 8589934591"}},
		"os-no-size":                    {cloud, muts(del("spec.size")), []string{"spec.size", "Required value"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := example(t, tc.file, name)
			for _, m := range tc.mutate {
				m(u)
			}
			err := kube.Create(ctx, u)
			if err == nil {
				t.Fatalf("the real kube-apiserver accepted the bad claim %s", name)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

// TestBadUpdatesRefusedIntegration changes what must not change on existing
// claims: each update must be refused, naming the field.
func TestBadUpdatesRefusedIntegration(t *testing.T) {
	ctx := setup(t)
	cases := map[string]struct {
		file   string
		mutate func(*unstructured.Unstructured)
		want   string
	}{
		"hv-region": {hvPool, set("spec.region", "eu-de-2"), "spec.region is immutable"},
		"hv-name":   {hvPool, set("spec.name", "hv-pool-z"), "spec.name is immutable"},
		"hv-dedicated": {hvPool, func(u *unstructured.Unstructured) {
			set("spec.dedicated", true)(u)
			set("spec.allowedTenants", []any{"team-a"})(u)
		}, "spec.dedicated is immutable"},
		"hv-dedicated-label":   {hvPool, set("spec.labels.dedicated", "true"), "spec.labels.dedicated is immutable"},
		"st-region":            {stPool, set("spec.region", "us-east-1"), "spec.region is immutable"},
		"st-encrypted":         {stPoolFin, set("spec.ceph.encrypted", false), "spec.ceph.encrypted is immutable"},
		"cp-region":            {controlPlan, set("spec.region", "eu-de-2"), "spec.region is immutable"},
		"os-region":            {cloud, set("spec.region", "us-east-1"), "spec.region is immutable"},
		"os-release-downgrade": {cloud, set("spec.openStackRelease", "2025.1"), "spec.openStackRelease cannot be downgraded"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := example(t, tc.file, "update-"+name)
			if err := kube.Create(ctx, u); err != nil {
				t.Fatalf("cannot create the claim to update: %v", err)
			}
			if err := kube.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
				t.Fatal(err)
			}
			tc.mutate(u)
			err := kube.Update(ctx, u)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("updating %s: got error %v, want one containing %q", name, err, tc.want)
			}
		})
	}
}

func muts(m ...func(*unstructured.Unstructured)) []func(*unstructured.Unstructured) { return m }

// TestPrinterColumnsIntegration checks the columns `kubectl get` shows for
// every claim and composite, as the API server stores the derived CRDs.
func TestPrinterColumnsIntegration(t *testing.T) {
	ctx := setup(t)
	for _, d := range v1alpha1.Composites {
		for _, plural := range []string{d.Plural, d.ClaimPlural} {
			crd := &extv1.CustomResourceDefinition{}
			group := v1alpha1.Group
			if d.Group != "" {
				group = d.Group
			}
			if err := kube.Get(ctx, client.ObjectKey{Name: plural + "." + group}, crd); err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
				got[c.Name] = true
			}
			want := []string{"SYNCED", "READY", "REGION", "PHASE", "AGE"}
			if d.Kind != v1alpha1.XOpenStackClusterKind {
				// A cluster's Shoot may be named otherwise than the cluster.
				want = append(want, "SHOOT")
			}
			for _, w := range want {
				if !got[w] {
					t.Errorf("%s: no %s column among %v", plural, w, got)
				}
			}
		}
	}
}
