// Package apis_test checks the provider's CRDs (and those of the mirrors of
// external APIs: the c5c3 ControlPlane, the external arbiter)
// against the real kube-apiserver: they install, their CEL rules compile,
// and bad objects are refused with a message that names the field.
package apis_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/consumer-plane/test/kubetest"
)

func TestMain(m *testing.M) {
	os.Exit(kubetest.Main(m, "../provider/package/crds", "../cluster/crds/c5c3", "../cluster/crds/arbiter"))
}

// object decodes YAML into an object to create.
func object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// Good objects of every kind, as the functions compose them.
var good = map[string]string{
	"openstack ProviderConfig": `
apiVersion: openstack.provider.c5c3.io/v1alpha1
kind: ProviderConfig
metadata: {name: cloud}
spec:
  region: eu-de-1
  credentials: {source: Secret, secretRef: {namespace: crossplane-system, name: cloud-admin, key: clouds.yaml}}`,
	"keystone Project": `
apiVersion: keystone.provider.c5c3.io/v1alpha1
kind: Project
metadata: {name: team-a}
spec: {providerConfigRef: {name: cloud}, forProvider: {name: team-a}}`,
	"nova Aggregate": `
apiVersion: nova.provider.c5c3.io/v1alpha1
kind: Aggregate
metadata: {name: team-a-hv-pool-a}
spec:
  providerConfigRef: {name: cloud}
  forProvider: {name: hv-pool-a, availabilityZone: hv-pool-a, metadata: {c5c3.io_pool: hv-pool-a}, filterTenantIDRefs: [{name: team-a}]}`,
	"nova QuotaSet": `
apiVersion: nova.provider.c5c3.io/v1alpha1
kind: QuotaSet
metadata: {name: team-a-compute}
spec: {providerConfigRef: {name: cloud}, forProvider: {projectIDRef: {name: team-a}, cores: 100, ramMB: -1}}`,
	"cinder VolumeType": `
apiVersion: cinder.provider.c5c3.io/v1alpha1
kind: VolumeType
metadata: {name: team-a-st-pool-a}
spec: {providerConfigRef: {name: cloud}, forProvider: {name: st-pool-a, backendName: ceph-st-pool-a}}`,
	"cinder QuotaSet": `
apiVersion: cinder.provider.c5c3.io/v1alpha1
kind: QuotaSet
metadata: {name: team-a-volume}
spec: {providerConfigRef: {name: cloud}, forProvider: {projectID: 0123abcd, gigabytes: 5000}}`,
	"neutron QuotaSet": `
apiVersion: neutron.provider.c5c3.io/v1alpha1
kind: QuotaSet
metadata: {name: team-a-network}
spec: {providerConfigRef: {name: cloud}, forProvider: {projectIDRef: {name: team-a}, floatingIPs: 20}}`,
	"ceph ProviderConfig": `
apiVersion: ceph.provider.c5c3.io/v1alpha1
kind: ProviderConfig
metadata: {name: storage-st-pool-a}
spec: {credentials: {source: Secret, secretRef: {namespace: crossplane-system, name: storage-st-pool-a-ceph, key: key}}}`,
	"ceph Pool": `
apiVersion: ceph.provider.c5c3.io/v1alpha1
kind: Pool
metadata: {name: team-a-st-pool-a-volumes}
spec: {providerConfigRef: {name: storage-st-pool-a}, forProvider: {name: team-a-volumes, size: 3, compressionMode: aggressive, quotaMaxBytes: 1073741824}}`,
	"ceph Client": `
apiVersion: ceph.provider.c5c3.io/v1alpha1
kind: Client
metadata: {name: team-a-st-pool-a-client}
spec:
  providerConfigRef: {name: storage-st-pool-a}
  writeConnectionSecretToRef: {namespace: crossplane-system, name: team-a-ceph}
  forProvider: {entity: openstack-team-a, caps: {mon: profile rbd, osd: profile rbd pool=team-a-volumes}}`,
	"c5c3 ControlPlane": `
apiVersion: c5c3.io/v1alpha1
kind: ControlPlane
metadata: {name: team-a, namespace: default}
spec:
  openStackRelease: "2025.2"
  infrastructure:
    database: {clusterRef: {name: openstack-db}, database: keystone, secretRef: {name: keystone-db}, replicas: 3}
    cache: {clusterRef: {name: openstack-memcached}, backend: dogpile.cache.pymemcache, replicas: 3}
  services: {keystone: {mode: Managed, replicas: 3}}`,
	"arbiter RemoteCluster": `
apiVersion: ceph.cobaltcore.sap.com/v1alpha1
kind: RemoteCluster
metadata: {name: cp-eu-de-1, namespace: default}
spec: {accesskeyRef: {name: arbiter-cp-eu-de-1-kubeconfig, key: kubeconfig}, namespace: ceph-arbiter-st-pool-s}`,
	"arbiter RemoteArbiter": `
apiVersion: ceph.cobaltcore.sap.com/v1alpha1
kind: RemoteArbiter
metadata: {name: st-pool-s, namespace: default}
spec: {cephCluster: {namespace: rook-ceph, name: st-pool-s}, remoteCluster: {name: cp-eu-de-1}}`,
	"ovn ProviderConfig": `
apiVersion: ovn.provider.c5c3.io/v1alpha1
kind: ProviderConfig
metadata: {name: ovn-eu-de-1}
spec:
  northbound: {endpoints: ["ssl:10.0.0.1:6641", "ssl:10.0.0.2:6641", "ssl:10.0.0.3:6641"]}
  southbound: {endpoints: ["ssl:10.0.0.1:6642"]}
  tlsSecretRef: {namespace: crossplane-system, name: ovn-client-tls}`,
	"ovn HAChassisGroup": `
apiVersion: ovn.provider.c5c3.io/v1alpha1
kind: HAChassisGroup
metadata: {name: gw-hv-pool-a}
spec: {providerConfigRef: {name: ovn-eu-de-1}, forProvider: {name: gw-hv-pool-a, chassis: [{name: hv-1, priority: 20}, {name: hv-2, priority: 10}]}}`,
	"ovn LogicalSwitch": `
apiVersion: ovn.provider.c5c3.io/v1alpha1
kind: LogicalSwitch
metadata: {name: infra-mgmt}
spec: {providerConfigRef: {name: ovn-eu-de-1}, forProvider: {name: infra-mgmt, otherConfig: {subnet: 10.10.0.0/24}, externalIDs: {purpose: infrastructure}}}`,
	"ovn LogicalRouter": `
apiVersion: ovn.provider.c5c3.io/v1alpha1
kind: LogicalRouter
metadata: {name: infra-router}
spec: {providerConfigRef: {name: ovn-eu-de-1}, forProvider: {name: infra-router}}`,
	"ovn NBGlobal": `
apiVersion: ovn.provider.c5c3.io/v1alpha1
kind: NBGlobal
metadata: {name: nb-global}
spec: {providerConfigRef: {name: ovn-eu-de-1}, forProvider: {options: {northd_probe_interval: "7000"}}}`,
	"ovn ChassisSet": `
apiVersion: ovn.provider.c5c3.io/v1alpha1
kind: ChassisSet
metadata: {name: hv-pool-a}
spec: {providerConfigRef: {name: ovn-eu-de-1}, forProvider: {availabilityZones: [hv-pool-a]}}`,
}

// TestGoodObjectsAdmittedIntegration: every kind installs and admits what
// the functions compose, with defaults applied.
func TestGoodObjectsAdmittedIntegration(t *testing.T) {
	kube := kubetest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, y := range good {
		t.Run(name, func(t *testing.T) {
			if err := kube.Create(ctx, object(t, y)); err != nil {
				t.Fatalf("the real kube-apiserver refuses a good %s: %v", name, err)
			}
		})
	}
	t.Run("defaults", func(t *testing.T) {
		u := object(t, good["ceph Pool"])
		u.SetName("defaults")
		unstructured.RemoveNestedField(u.Object, "spec", "forProvider", "compressionMode")
		if err := kube.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := unstructured.NestedString(u.Object, "spec", "forProvider", "application"); got != "rbd" {
			t.Errorf("default application = %q, want rbd", got)
		}
		if got, _, _ := unstructured.NestedString(u.Object, "spec", "forProvider", "compressionMode"); got != "none" {
			t.Errorf("default compressionMode = %q, want none", got)
		}
	})
}

// TestProviderExamplesAdmittedIntegration: the provider's example manifests
// are what the API server accepts.
func TestProviderExamplesAdmittedIntegration(t *testing.T) {
	kube := kubetest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	files, err := filepath.Glob("../provider/examples/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no provider examples (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---\n") {
			u := object(t, doc)
			u.SetName("example-" + u.GetName())
			if err := kube.Create(ctx, u); err != nil {
				t.Errorf("%s: %s %s refused: %v", f, u.GetKind(), u.GetName(), err)
			}
		}
	}
}

// TestBadObjectsRefusedIntegration: each bad object is refused, and the
// message names the field at fault.
func TestBadObjectsRefusedIntegration(t *testing.T) {
	kube := kubetest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cases := map[string]struct {
		base, path string
		value      any // nil deletes the field
		want       string
	}{
		"aggregate metadata sets filter_tenant_id": {"nova Aggregate", "spec.forProvider.metadata", map[string]any{"filter_tenant_id": "x"},
			"spec.forProvider.metadata must not set filter_tenant_id; use filterTenantIDs"},
		"volume type extra spec sets the backend": {"cinder VolumeType", "spec.forProvider.extraSpecs", map[string]any{"volume_backend_name": "x"},
			"spec.forProvider.extraSpecs must not set volume_backend_name; use backendName"},
		"volume type without backend": {"cinder VolumeType", "spec.forProvider.backendName", nil, "spec.forProvider.backendName: Required value"},
		"quota set without project":   {"nova QuotaSet", "spec.forProvider.projectIDRef", nil, "spec.forProvider needs projectID, projectIDRef or projectIDSelector"},
		"quota below -1":              {"neutron QuotaSet", "spec.forProvider.floatingIPs", int64(-2), "spec.forProvider.floatingIPs: Invalid value: -2"},
		"pool with an unknown compression mode": {"ceph Pool", "spec.forProvider.compressionMode", "zstd",
			`spec.forProvider.compressionMode: Unsupported value: "zstd"`},
		"pool with device class and CRUSH rule": {"ceph Pool", "spec.forProvider.crushRule", "replicated_nvme",
			"spec.forProvider sets either deviceClass or crushRule"},
		"pool name not a Ceph pool name": {"ceph Pool", "spec.forProvider.name", "team a", "spec.forProvider.name in body should match"},
		"client caps for an unknown daemon": {"ceph Client", "spec.forProvider.caps", map[string]any{"rgw": "allow *"},
			"spec.forProvider.caps keys must be mon, mgr, osd or mds"},
		"client without caps": {"ceph Client", "spec.forProvider.caps", map[string]any{}, "spec.forProvider.caps: Invalid value"},
		"provider config with a Secret source and no secretRef": {"openstack ProviderConfig", "spec.credentials.secretRef", nil,
			"spec.credentials.secretRef is required when spec.credentials.source is Secret"},
		"provider config with an unknown credentials format": {"openstack ProviderConfig", "spec.credentials.format", "token",
			`spec.credentials.format: Unsupported value: "token"`},
		"arbiter naming and inlining its remote cluster": {"arbiter RemoteArbiter", "spec.remoteCluster.spec", map[string]any{"namespace": "x"},
			"exactly one of name and spec"},
		"ovn ssl endpoints without TLS":  {"ovn ProviderConfig", "spec.tlsSecretRef", nil, "spec.tlsSecretRef is required when an endpoint uses ssl:"},
		"ovn endpoint not in ovsdb form": {"ovn ProviderConfig", "spec.northbound.endpoints", []any{"10.0.0.1:6641"}, "spec.northbound.endpoints[0] in body should match"},
		"ovn external ids in neutron's namespace": {"ovn LogicalSwitch", "spec.forProvider.externalIDs", map[string]any{"neutron:network_name": "x"},
			"spec.forProvider.externalIDs keys must not start with neutron: or cobaltcore.c5c3.io/"},
		"ovn group without chassis": {"ovn HAChassisGroup", "spec.forProvider.chassis", []any{}, "spec.forProvider.chassis: Invalid value"},
		"ovn group chassis priority out of range": {"ovn HAChassisGroup", "spec.forProvider.chassis", []any{map[string]any{"name": "hv-1", "priority": int64(40000)}},
			"spec.forProvider.chassis[0].priority: Invalid value: 40000"},
		"ovn chassis set selecting nothing":          {"ovn ChassisSet", "spec.forProvider.availabilityZones", nil, "spec.forProvider sets availabilityZones or names"},
		"control plane release not YYYY.1 or YYYY.2": {"c5c3 ControlPlane", "spec.openStackRelease", "2025.3", "spec.openStackRelease in body should match"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := object(t, good[tc.base])
			u.SetName("bad-" + strings.ToLower(strings.ReplaceAll(name, " ", "-")))
			path := strings.Split(tc.path, ".")
			if tc.value == nil {
				unstructured.RemoveNestedField(u.Object, path...)
			} else if err := unstructured.SetNestedField(u.Object, tc.value, path...); err != nil {
				t.Fatal(err)
			}
			if tc.path == "spec.forProvider.crushRule" {
				_ = unstructured.SetNestedField(u.Object, "nvme", "spec", "forProvider", "deviceClass")
			}
			err := kube.Create(ctx, u)
			if err == nil {
				t.Fatalf("the real kube-apiserver accepted the bad object")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("refused with\n  %v\nwhich does not say %q", err, tc.want)
			}
		})
	}
}

// TestImmutableFieldsIntegration: names that identify the external resource
// cannot change after creation.
func TestImmutableFieldsIntegration(t *testing.T) {
	kube := kubetest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for base, field := range map[string]string{"ceph Pool": "name", "ceph Client": "entity", "keystone Project": "domainID"} {
		t.Run(base, func(t *testing.T) {
			u := object(t, good[base])
			u.SetName("immutable-" + strings.ReplaceAll(strings.ToLower(base), " ", "-"))
			if err := kube.Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			if err := unstructured.SetNestedField(u.Object, "changed", "spec", "forProvider", field); err != nil {
				t.Fatal(err)
			}
			err := kube.Update(ctx, u)
			if want := "spec.forProvider." + field + " is immutable"; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("update of spec.forProvider.%s: got %v, want a refusal saying %q", field, err, want)
			}
		})
	}
}
