package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	ironcorev1alpha1 "github.com/c5c3/consumer-plane/apis/ironcore/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/function/fntest"
	"github.com/c5c3/consumer-plane/internal/pool"
)

const xr = `{
  "apiVersion": "crossplane.c5c3.io/v1alpha1",
  "kind": "XStorageCluster",
  "metadata": {"name": "st-pool-a-4hq8z", "labels": {"crossplane.io/claim-name": "st-pool-a", "crossplane.io/claim-namespace": "infrastructure"}},
  "spec": {
    "region": "eu-de-1",
    "name": "st-pool-a",
    "kubernetesVersion": "1.34",
    "workers": 5,
    "maxWorkers": 30,
    "zones": ["eu-de-1a", "eu-de-1b", "eu-de-1c"],
    "ironcore": {"machinePool": "st-pool-a", "machineClass": "baremetal-storage"},
    "ceph": {"osdCount": 12, "deviceClass": "nvme", "targetCapacity": "500Ti", "replicationFactor": 3, "encrypted": false},
    "dedicated": false
  }
}`

const shoot = `{
  "apiVersion": "core.gardener.cloud/v1beta1",
  "kind": "Shoot",
  "metadata": {"name": "st-pool-a", "namespace": "garden-c5c3", "labels": {"c5c3.io/pool": "st-pool-a", "c5c3.io/pool-kind": "storage"},
    "annotations": {"confirmation.gardener.cloud/deletion": "true"}},
  "spec": {
    "cloudProfile": {"kind": "CloudProfile", "name": "ironcore-metal"},
    "credentialsBindingName": "ironcore-metal",
    "kubernetes": {"version": "1.34", "kubeAPIServer": {"admissionPlugins": [{"name": "DenyServiceExternalIPs"}]}},
    "networking": {"type": "calico", "nodes": "10.250.0.0/16"},
    "provider": {
      "type": "ironcore-metal",
      "workers": [{
        "name": "storage",
        "machine": {"type": "baremetal-storage", "image": {"name": "gardenlinux"}},
        "minimum": 5, "maximum": 30, "maxSurge": 1, "maxUnavailable": 0,
        "zones": ["eu-de-1a", "eu-de-1b", "eu-de-1c"],
        "labels": {"c5c3.io/pool": "st-pool-a", "c5c3.io/pool-kind": "storage"},
        "providerConfig": {"apiVersion": "ironcore-metal.provider.extensions.gardener.cloud/v1alpha1", "kind": "WorkerConfig", "extraServerLabels": {"c5c3.io/machine-pool": "st-pool-a"}}
      }]
    },
    "purpose": "production",
    "region": "eu-de-1"
  }
}`

const kubeconfig = `{
  "apiVersion": "gardener.provider.c5c3.io/v1alpha1", "kind": "ShootKubeconfig", "metadata": {"name": "storage-st-pool-a"},
  "spec": {
    "writeConnectionSecretToRef": {"name": "storage-st-pool-a-kubeconfig", "namespace": "crossplane-system"},
    "forProvider": {"shootRef": {"name": "st-pool-a", "namespace": "garden-c5c3"}}
  }
}`

const providerConfig = `{
  "apiVersion": "kubernetes.crossplane.io/v1alpha1", "kind": "ProviderConfig", "metadata": {"name": "storage-st-pool-a"},
  "spec": {"credentials": {"source": "Secret", "secretRef": {"namespace": "crossplane-system", "name": "storage-st-pool-a-kubeconfig", "key": "kubeconfig"}}}
}`

// secretsProviderConfig is this project's provider's ProviderConfig of the
// same cluster and Secret, for SecretCopies.
var secretsProviderConfig = strings.Replace(providerConfig, "kubernetes.crossplane.io/v1alpha1", "kubernetes.provider.c5c3.io/v1alpha1", 1)

const kubeconfigReady = `{"apiVersion": "gardener.provider.c5c3.io/v1alpha1", "kind": "ShootKubeconfig", "metadata": {"name": "storage-st-pool-a"},
  "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-22T08:00:00Z"}]}}`

// The Rook CephCluster of xr, in a provider-kubernetes Object.
const cephClusterObject = `{
  "apiVersion": "kubernetes.crossplane.io/v1alpha2", "kind": "Object", "metadata": {"name": "storage-st-pool-a-ceph-cluster"},
  "spec": {
    "providerConfigRef": {"name": "storage-st-pool-a"},
    "watch": true,
    "readiness": {"policy": "DeriveFromObject"},
    "forProvider": {"manifest": {
      "apiVersion": "ceph.rook.io/v1", "kind": "CephCluster",
      "metadata": {"name": "st-pool-a", "namespace": "rook-ceph", "annotations": {"c5c3.io/expected-osds-per-node": "12"}},
      "spec": {
        "cephVersion": {"image": "quay.io/ceph/ceph:v19.2.3"},
        "dataDirHostPath": "/var/lib/rook",
        "mon": {"count": 3, "allowMultiplePerNode": false},
        "mgr": {"count": 2, "allowMultiplePerNode": false},
        "dashboard": {"enabled": true, "ssl": true},
        "storage": {"useAllNodes": true, "useAllDevices": true, "config": {"deviceClass": "nvme", "osdsPerDevice": "1"}},
        "placement": {"all": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
          {"matchExpressions": [{"key": "c5c3.io/pool", "operator": "In", "values": ["st-pool-a"]}]}]}}}}
      }
    }}
  }
}`

const mgrPoolObject = `{
  "apiVersion": "kubernetes.crossplane.io/v1alpha2", "kind": "Object", "metadata": {"name": "storage-st-pool-a-ceph-mgr-pool"},
  "spec": {
    "providerConfigRef": {"name": "storage-st-pool-a"},
    "watch": true,
    "readiness": {"policy": "DeriveFromObject"},
    "forProvider": {"manifest": {
      "apiVersion": "ceph.rook.io/v1", "kind": "CephBlockPool",
      "metadata": {"name": "builtin-mgr", "namespace": "rook-ceph"},
      "spec": {"name": ".mgr", "failureDomain": "zone", "replicated": {"size": 3, "requireSafeReplicaSize": true}, "parameters": {"compression_mode": "none"}}
    }}
  }
}`

func observedObject(name, ready, cephStatus string) string {
	return `{"apiVersion": "kubernetes.crossplane.io/v1alpha2", "kind": "Object", "metadata": {"name": "` + name + `"},
	  "status": {"conditions": [{"type": "Ready", "status": "` + ready + `", "reason": "r", "lastTransitionTime": "2026-11-22T08:00:00Z"}],
	             "atProvider": {"manifest": {"status": ` + cephStatus + `}}}}`
}

// What gives the provider access to the pool's Ceph once it is up.
const cephAdminObject = `{
  "apiVersion": "kubernetes.crossplane.io/v1alpha2", "kind": "Object", "metadata": {"name": "storage-st-pool-a-ceph-admin"},
  "spec": {
    "providerConfigRef": {"name": "storage-st-pool-a"},
    "watch": true,
    "managementPolicies": ["Observe"],
    "readiness": {"policy": "SuccessfulCreate"},
    "forProvider": {"manifest": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "rook-ceph-mon", "namespace": "rook-ceph"}}},
    "writeConnectionSecretToRef": {"namespace": "crossplane-system", "name": "storage-st-pool-a-ceph"},
    "connectionDetails": [
      {"apiVersion": "v1", "kind": "Secret", "namespace": "rook-ceph", "name": "rook-ceph-mon", "fieldPath": "data[admin-secret]", "toConnectionSecretKey": "key"},
      {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "rook-ceph", "name": "rook-ceph-mon-endpoints", "fieldPath": "data.data", "toConnectionSecretKey": "mon_host"}
    ]
  }
}`

const cephProviderConfig = `{
  "apiVersion": "ceph.provider.c5c3.io/v1alpha1", "kind": "ProviderConfig", "metadata": {"name": "storage-st-pool-a"},
  "spec": {"user": "admin", "credentials": {"source": "Secret", "secretRef": {"namespace": "crossplane-system", "name": "storage-st-pool-a-ceph", "key": "key"}}}
}`

// What reads the storage agent's report in the pool's cluster.
const storageReport = `{
  "apiVersion": "kubernetes.provider.c5c3.io/v1alpha1", "kind": "StorageReport", "metadata": {"name": "storage-st-pool-a"},
  "spec": {"providerConfigRef": {"name": "storage-st-pool-a"}, "forProvider": {"cephStatus": "ceph"}}
}`

// observedReport is the StorageReport as the provider fills it: the
// agent's report (atProvider) and its conditions beside Ready.
func observedReport(atProvider string, conditions ...string) string {
	conds := `{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-22T08:00:00Z"}`
	for _, c := range conditions {
		conds += ", " + c
	}
	return `{"apiVersion": "kubernetes.provider.c5c3.io/v1alpha1", "kind": "StorageReport", "metadata": {"name": "storage-st-pool-a"},
	  "status": {"conditions": [` + conds + `], "atProvider": ` + atProvider + `}}`
}

// agentClientObject is the storage agent's read-only CephX user, a Rook
// CephClient (#23 §8).
const agentClientObject = `{
  "apiVersion": "kubernetes.crossplane.io/v1alpha2", "kind": "Object", "metadata": {"name": "storage-st-pool-a-ceph-agent-client"},
  "spec": {
    "providerConfigRef": {"name": "storage-st-pool-a"},
    "watch": true,
    "readiness": {"policy": "DeriveFromObject"},
    "forProvider": {"manifest": {
      "apiVersion": "ceph.rook.io/v1", "kind": "CephClient",
      "metadata": {"name": "storage-agent", "namespace": "rook-ceph"},
      "spec": {"caps": {"mon": "allow r", "mgr": "allow r"}}
    }}
  }
}`

// agentsWaiting is the condition until the storage agent reports.
var agentsWaiting = fntest.Condition("AgentsReporting", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting",
	"waiting for the pool's storage agent to publish CephStatus ceph; until then health and capacity are Rook's CephCluster's")

var (
	cephNoAccess = fntest.Condition("CephReady", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting", "waiting for access to the pool's cluster")
)

// healthy is the status of a CephCluster Rook has brought up.
const healthy = `{"phase": "Ready", "ceph": {"health": "HEALTH_OK", "capacity": {"bytesTotal": 549755813888000, "bytesAvailable": 412316860416000, "bytesUsed": 137438953472000}}}`

func manifest(o map[string]any) map[string]any {
	return fntest.Map(o, "spec", "forProvider", "manifest")
}

// counted is what the IronCore inventory holds for st-pool-a: 32 servers of
// 32 CPUs and 256 GiB, 5 of them the pool's own.
var counted = ironcorev1alpha1.ServerInventoryObservation{
	Servers: 32, Available: 27, Claimed: 5, Usable: 32, SmallestDiskGiB: 100 << 10,
	UsableCapacity: ironcorev1alpha1.ServerCapacity{CPUs: 32 * 32, MemoryGiB: 32 * 256, DiskGiB: 32 * 100 << 10},
}

// sized is the pool's CapacitySized condition with the counted servers: its
// 500Ti takes its 5 workers of 100Ti.
var sized = fntest.Condition("CapacitySized", fnv1.Status_STATUS_CONDITION_TRUE, "Sized",
	"500Ti of raw capacity takes 5 nodes of 100Ti of drives (the smallest of the 32 usable servers): spec.workers 5 hold it")

// inventory is the ServerInventory of st-pool-a with these server labels
// (the machine pool's unless given) and the claim prefix of its Shoot.
func inventory(labels ...string) string {
	sel := map[string]string{"c5c3.io/machine-pool": "st-pool-a"}
	for i := 0; i+1 < len(labels); i += 2 {
		sel[labels[i]] = labels[i+1]
	}
	return fntest.Inventory("storage-st-pool-a", sel, "shoot--c5c3--st-pool-a-")
}

// countedRsp adds what a counted, sufficient inventory (of the given label
// selector) adds to a response.
func countedRsp(rsp *fnv1.RunFunctionResponse, labels ...string) *fnv1.RunFunctionResponse {
	sel := "c5c3.io/machine-pool=st-pool-a"
	if len(labels) == 2 {
		sel = labels[0] + "=" + labels[1] + "," + sel
	}
	rsp = fntest.Counted(rsp, inventory(labels...), counted, fntest.Condition("InventorySufficient", fnv1.Status_STATUS_CONDITION_TRUE, "Sufficient",
		"32 usable servers (1024 CPUs, 8192 GiB) for 5 to 30 workers (32 servers labelled "+sel+": 27 available, 0 claimed by another pool, 0 failed)"))
	rsp.Conditions = slices.Insert(rsp.Conditions, 1, sized)
	return rsp
}

func TestRunFunction(t *testing.T) {
	sufficient := fntest.ObservedInventory("storage-st-pool-a", counted)
	// The pool's cluster can be reached, and Flux applied its layer.
	accessible := map[string]string{"shoot": fntest.ShootReady("st-pool-a"), "kubeconfig": kubeconfigReady, "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig, "inventory": sufficient,
		"layer": fntest.AppliedLayer(poolAccess, layerRevision)}
	with := func(more map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range accessible {
			m[k] = v
		}
		for k, v := range more {
			m[k] = v
		}
		return m
	}
	// Once the pool's cluster can be reached: its layer, the storage report
	// and the agent's user (with more: the CephCluster), the layer applied
	// or not; accessResources once it is.
	layerResources := func(more map[string]*fnv1.Resource, applied bool) map[string]*fnv1.Resource {
		m := fntest.Layer(map[string]*fnv1.Resource{
			"shoot": fntest.Composed(shoot, true), "kubeconfig": fntest.Composed(kubeconfig, true), "provider-config": fntest.Composed(providerConfig, true), "secrets-provider-config": fntest.Composed(secretsProviderConfig, true),
			"storage-report": fntest.Composed(storageReport, true), "ceph-agent-client": fntest.Composed(agentClientObject, true),
		}, poolAccess, applied)
		for k, v := range more {
			m[k] = v
		}
		return m
	}
	accessResources := func(more map[string]*fnv1.Resource) map[string]*fnv1.Resource { return layerResources(more, true) }

	// The agent's report of the cases that read it.
	const okReport = `"health": "HEALTH_OK", "totalBytes": 549755813888000, "usedBytes": 140737488355328, "availableBytes": 409018325532672,
	  "osds": 4, "osdsUp": 4, "osdsIn": 4, "monitors": 3, "monitorsInQuorum": 3, "reportInterval": "30s"`
	cases := map[string]struct {
		reason string
		req    *fnv1.RunFunctionRequest
		want   *fnv1.RunFunctionResponse
	}{
		"AgentReportStale": {
			reason: "A report that reads but has not advanced for three of the agent's intervals (it stopped, or its cluster stopped answering and the read returns the last one) is the last, as an unreachable one: DataAvailable Unknown (#54).",
			req: fntest.Request(xr, with(map[string]string{
				"ceph-cluster":   observedObject("storage-st-pool-a-ceph-cluster", "True", healthy),
				"ceph-mgr-pool":  observedObject("storage-st-pool-a-ceph-mgr-pool", "True", `{"phase": "Ready"}`),
				"storage-report": observedReport(`{` + okReport + `, "staleSince": "2026-11-22T08:08:29Z"}`),
			})),
			want: countedRsp(fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--st-pool-a", "health": "HEALTH_OK",
			    "capacity": {"asked": "500Ti", "total": "500Ti", "usable": "170666Gi", "available": "372Ti", "used": "128Ti"}, "osds": {"total": 4, "up": 4, "in": 4},
			    "unreachable": "the storage agent's last report is from 2026-11-22T08:08:29Z, and it reports every 30s: the agent or the pool's cluster does not answer"}`,
				accessResources(map[string]*fnv1.Resource{"ceph-cluster": fntest.Composed(cephClusterObject, true), "ceph-mgr-pool": fntest.Composed(mgrPoolObject, true),
					"ceph-admin": fntest.Composed(cephAdminObject, false), "ceph-provider-config": fntest.Composed(cephProviderConfig, false)}),
				fntest.ShootAvailable, fntest.AccessAvailable("storage-st-pool-a"), fntest.LayerApplied("storage-st-pool-a", layerRevision),
				fntest.Condition("AgentsReporting", fnv1.Status_STATUS_CONDITION_FALSE, "Stale",
					"the storage agent's last report is from 2026-11-22T08:08:29Z, and it reports every 30s: the agent or the pool's cluster does not answer; health, capacity and OSDs are its last report (HEALTH_OK: 4 OSDs (4 up, 4 in), 3 of 3 monitors in quorum), which says nothing of now"),
				fntest.Condition("DataAvailable", fnv1.Status_STATUS_CONDITION_UNKNOWN, "Unreachable",
					"whether the pool serves its data is unknown while its Ceph cannot be read: the storage agent's last report is from 2026-11-22T08:08:29Z, and it reports every 30s: the agent or the pool's cluster does not answer"),
				fntest.Condition("CephReady", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "Ceph reports HEALTH_OK"))),
		},
		"AgentReportCurrent": {
			reason: "A report the provider does not call stale is current; the StorageReport says when it goes stale, so the response keeps its TTL (no look again of its own).",
			req: fntest.Request(xr, with(map[string]string{
				"ceph-cluster":   observedObject("storage-st-pool-a-ceph-cluster", "True", healthy),
				"ceph-mgr-pool":  observedObject("storage-st-pool-a-ceph-mgr-pool", "True", `{"phase": "Ready"}`),
				"storage-report": observedReport(`{` + okReport + `}`),
			})),
			want: countedRsp(fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--st-pool-a", "health": "HEALTH_OK",
			    "capacity": {"asked": "500Ti", "total": "500Ti", "usable": "170666Gi", "available": "372Ti", "used": "128Ti"}, "osds": {"total": 4, "up": 4, "in": 4}}`,
				accessResources(map[string]*fnv1.Resource{"ceph-cluster": fntest.Composed(cephClusterObject, true), "ceph-mgr-pool": fntest.Composed(mgrPoolObject, true),
					"ceph-admin": fntest.Composed(cephAdminObject, false), "ceph-provider-config": fntest.Composed(cephProviderConfig, false)}),
				fntest.ShootAvailable, fntest.AccessAvailable("storage-st-pool-a"), fntest.LayerApplied("storage-st-pool-a", layerRevision),
				fntest.Condition("AgentsReporting", fnv1.Status_STATUS_CONDITION_TRUE, "Reporting",
					"the storage agent reports HEALTH_OK: 4 OSDs (4 up, 4 in), 3 of 3 monitors in quorum"),
				fntest.Condition("DataAvailable", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "every placement group is active and nothing is full"),
				fntest.Condition("CephReady", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "Ceph reports HEALTH_OK"))),
		},
		"NewPool": {
			reason: "A new pool composes only its ServerInventory: nothing is asked of Gardener before the servers are known to exist.",
			req:    fntest.Request(xr, nil),
			want: fntest.Withheld(fntest.Response(`{"phase": "Provisioning"}`, map[string]*fnv1.Resource{"inventory": fntest.Composed(fntest.Inventory("storage-st-pool-a",
				map[string]string{"c5c3.io/machine-pool": "st-pool-a"}, ""), false)},
				fntest.Condition("InventorySufficient", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting",
					"ServerInventory storage-st-pool-a is being created to count the servers labelled c5c3.io/machine-pool=st-pool-a"),
				fntest.Condition("CapacitySized", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting",
					"500Ti of raw capacity is sized once the IronCore inventory is counted: ServerInventory storage-st-pool-a is being created to count the servers labelled c5c3.io/machine-pool=st-pool-a"),
				fntest.Condition("ShootReady", fnv1.Status_STATUS_CONDITION_FALSE, "Creating",
					"the Shoot is not created yet: ServerInventory storage-st-pool-a is being created to count the servers labelled c5c3.io/machine-pool=st-pool-a"),
				fntest.AccessNoShoot, cephNoAccess)),
		},
		"UnderProvisioned": {
			reason: "A storage pool needing more servers than its machine pool holds gets no Shoot and says how many are missing.",
			req: fntest.Request(xr, map[string]string{"inventory": fntest.ObservedInventory("storage-st-pool-a", ironcorev1alpha1.ServerInventoryObservation{
				Servers: 4, Available: 3, Failed: 1, Usable: 3, UsableCapacity: ironcorev1alpha1.ServerCapacity{CPUs: 96, MemoryGiB: 768},
			})}),
			want: func() *fnv1.RunFunctionResponse {
				msg := "spec.workers 5 exceeds the 3 servers the IronCore inventory can provide (4 servers labelled c5c3.io/machine-pool=st-pool-a: 3 available, 0 claimed by another pool, 1 failed): 2 more are needed before the pool's Shoot is created"
				return fntest.Withheld(fntest.Response(`{"phase": "Provisioning", "inventory": {"servers": 4, "available": 3, "usable": 3, "claimedByOthers": 0, "failed": 1, "capacity": {"vcpus": 96, "memoryGB": 768}}}`,
					map[string]*fnv1.Resource{"inventory": fntest.Composed(fntest.Inventory("storage-st-pool-a", map[string]string{"c5c3.io/machine-pool": "st-pool-a"}, ""), true)},
					fntest.Condition("InventorySufficient", fnv1.Status_STATUS_CONDITION_FALSE, "UnderProvisioned", msg),
					fntest.Condition("CapacitySized", fnv1.Status_STATUS_CONDITION_FALSE, "DrivesUnknown",
						"500Ti of raw capacity cannot be sized yet: a usable server of the pool reports no drives (the metal-operator discovers them); the pool keeps spec.workers 5"),
					fntest.Condition("ShootReady", fnv1.Status_STATUS_CONDITION_FALSE, "Creating", "the Shoot is not created yet: "+msg),
					fntest.AccessNoShoot, cephNoAccess))
			}(),
		},
		"DocsFlowDefaults": {
			reason: "A storage pool claim as the C5C3 docs' flow writes it, without spec.name and spec.ironcore.machinePool, is the claim's name on servers labelled with it: the same pool.",
			req: fntest.Request(fntest.EditSpec(xr, func(s map[string]any) {
				delete(s, "name")
				delete(fntest.Map(s, "ironcore"), "machinePool")
			}), map[string]string{"shoot": fntest.ShootReady("st-pool-a"), "inventory": sufficient}),
			want: countedRsp(fntest.Response(`{"phase": "Provisioning", "clusterName": "shoot--c5c3--st-pool-a"}`,
				map[string]*fnv1.Resource{"shoot": fntest.Composed(shoot, true), "kubeconfig": fntest.Composed(kubeconfig, false), "provider-config": fntest.Composed(providerConfig, false), "secrets-provider-config": fntest.Composed(secretsProviderConfig, false)},
				fntest.ShootAvailable, fntest.AccessCreating, cephNoAccess)),
		},
		"ShootReady": {
			reason: "A ready Shoot gets access objects; Ceph still waits for access.",
			req:    fntest.Request(xr, map[string]string{"shoot": fntest.ShootReady("st-pool-a"), "inventory": sufficient}),
			want: countedRsp(fntest.Response(`{"phase": "Provisioning", "clusterName": "shoot--c5c3--st-pool-a"}`,
				map[string]*fnv1.Resource{"shoot": fntest.Composed(shoot, true), "kubeconfig": fntest.Composed(kubeconfig, false), "provider-config": fntest.Composed(providerConfig, false), "secrets-provider-config": fntest.Composed(secretsProviderConfig, false)},
				fntest.ShootAvailable, fntest.AccessCreating, cephNoAccess)),
		},
		"LayerNotApplied": {
			reason: "Once the cluster can be reached, Flux is asked to apply its layer; Rook's objects wait for the CRDs it brings.",
			req:    fntest.Request(xr, map[string]string{"shoot": fntest.ShootReady("st-pool-a"), "kubeconfig": kubeconfigReady, "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig, "inventory": sufficient}),
			want: countedRsp(fntest.Response(`{"phase": "Provisioning", "clusterName": "shoot--c5c3--st-pool-a"}`,
				withoutRook(layerResources(nil, false)),
				fntest.ShootAvailable, fntest.AccessAvailable("storage-st-pool-a"), fntest.LayerPending("storage-st-pool-a"), agentsWaiting,
				fntest.Condition("CephReady", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting", "waiting for Flux to apply the pool's layer, which brings Rook's CRDs (see LayerApplied)"))),
		},
		"AccessReady": {
			reason: "Once the cluster can be reached and Flux applied its layer, the CephCluster and the .mgr pool are placed in it.",
			req:    fntest.Request(xr, accessible),
			want: countedRsp(fntest.Response(`{"phase": "Provisioning", "clusterName": "shoot--c5c3--st-pool-a"}`,
				accessResources(map[string]*fnv1.Resource{"ceph-cluster": fntest.Composed(cephClusterObject, false), "ceph-mgr-pool": fntest.Composed(mgrPoolObject, false)}),
				fntest.ShootAvailable, fntest.AccessAvailable("storage-st-pool-a"), fntest.LayerApplied("storage-st-pool-a", layerRevision), agentsWaiting, fntest.Condition("CephReady", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting", "the CephCluster is being created"))),
		},
		"CephCreating": {
			reason: "A CephCluster Rook is still creating keeps the pool Provisioning, naming Rook's phase.",
			req: fntest.Request(xr, with(map[string]string{
				"ceph-cluster": observedObject("storage-st-pool-a-ceph-cluster", "False", `{"phase": "Progressing"}`),
			})),
			want: countedRsp(fntest.Response(`{"phase": "Provisioning", "clusterName": "shoot--c5c3--st-pool-a"}`,
				accessResources(map[string]*fnv1.Resource{"ceph-cluster": fntest.Composed(cephClusterObject, false), "ceph-mgr-pool": fntest.Composed(mgrPoolObject, false)}),
				fntest.ShootAvailable, fntest.AccessAvailable("storage-st-pool-a"), fntest.LayerApplied("storage-st-pool-a", layerRevision), agentsWaiting, fntest.Condition("CephReady", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting", `the CephCluster is not ready yet (phase "Progressing")`))),
		},
		"CephReady": {
			reason: "A ready CephCluster makes the pool Ready with Ceph's health and capacity in its status, and gives the provider access to it.",
			req: fntest.Request(xr, with(map[string]string{
				"ceph-cluster":  observedObject("storage-st-pool-a-ceph-cluster", "True", healthy),
				"ceph-mgr-pool": observedObject("storage-st-pool-a-ceph-mgr-pool", "True", `{"phase": "Ready"}`),
			})),
			want: countedRsp(fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--st-pool-a", "health": "HEALTH_OK",
			    "capacity": {"asked": "500Ti", "total": "500Ti", "usable": "170666Gi", "available": "375Ti", "used": "125Ti"}}`,
				accessResources(map[string]*fnv1.Resource{"ceph-cluster": fntest.Composed(cephClusterObject, true), "ceph-mgr-pool": fntest.Composed(mgrPoolObject, true),
					"ceph-admin": fntest.Composed(cephAdminObject, false), "ceph-provider-config": fntest.Composed(cephProviderConfig, false)}),
				fntest.ShootAvailable, fntest.AccessAvailable("storage-st-pool-a"), fntest.LayerApplied("storage-st-pool-a", layerRevision), agentsWaiting, fntest.Condition("CephReady", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "Ceph reports HEALTH_OK"))),
		},
		"AgentReporting": {
			reason: "Once the storage agent reports, health, capacity, OSDs and failing checks come from it; Rook's CephCluster still decides readiness.",
			req: fntest.Request(xr, with(map[string]string{
				"ceph-cluster":  observedObject("storage-st-pool-a-ceph-cluster", "True", healthy),
				"ceph-mgr-pool": observedObject("storage-st-pool-a-ceph-mgr-pool", "True", `{"phase": "Ready"}`),
				"storage-report": observedReport(`{"health": "HEALTH_WARN",
				  "checks": [{"name": "OSD_DOWN", "severity": "HEALTH_WARN", "summary": "1 osds down"}],
				  "totalBytes": 549755813888000, "usedBytes": 140737488355328, "availableBytes": 409018325532672,
				  "osds": 30, "osdsUp": 29, "osdsIn": 30, "monitors": 3, "monitorsInQuorum": 3}`),
			})),
			want: countedRsp(fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--st-pool-a", "health": "HEALTH_WARN",
			    "capacity": {"asked": "500Ti", "total": "500Ti", "usable": "170666Gi", "available": "372Ti", "used": "128Ti"}, "osds": {"total": 30, "up": 29, "in": 30},
			    "healthChecks": ["HEALTH_WARN OSD_DOWN: 1 osds down"]}`,
				accessResources(map[string]*fnv1.Resource{"ceph-cluster": fntest.Composed(cephClusterObject, true), "ceph-mgr-pool": fntest.Composed(mgrPoolObject, true),
					"ceph-admin": fntest.Composed(cephAdminObject, false), "ceph-provider-config": fntest.Composed(cephProviderConfig, false)}),
				fntest.ShootAvailable, fntest.AccessAvailable("storage-st-pool-a"), fntest.LayerApplied("storage-st-pool-a", layerRevision),
				fntest.Condition("AgentsReporting", fnv1.Status_STATUS_CONDITION_TRUE, "Reporting",
					"the storage agent reports HEALTH_WARN: 30 OSDs (29 up, 30 in), 3 of 3 monitors in quorum; HEALTH_WARN OSD_DOWN: 1 osds down"),
				fntest.Condition("DataAvailable", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "every placement group is active and nothing is full"),
				fntest.Condition("CephReady", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "Ceph reports HEALTH_OK"))),
		},
		"AgentUnreachable": {
			reason: "A StorageReport whose read fails now (the pool's cluster unreachable) keeps the agent's last report: the pool shows it as the last, and its DataAvailable is Unknown, not what that report said (#54).",
			req: fntest.Request(xr, with(map[string]string{
				"ceph-cluster":  observedObject("storage-st-pool-a-ceph-cluster", "True", healthy),
				"ceph-mgr-pool": observedObject("storage-st-pool-a-ceph-mgr-pool", "True", `{"phase": "Ready"}`),
				"storage-report": observedReport(`{`+okReport+`}`, `{"type": "Synced", "status": "False", "reason": "ReconcileError",
				  "message": "observe failed: cannot read CephStatus ceph: the API of the storage pool's cluster at https://10.0.0.9:443 has not answered since 2026-11-22T08:04:40Z", "lastTransitionTime": "2026-11-22T08:05:00Z"}`),
			})),
			want: countedRsp(fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--st-pool-a", "health": "HEALTH_OK",
			    "capacity": {"asked": "500Ti", "total": "500Ti", "usable": "170666Gi", "available": "372Ti", "used": "128Ti"}, "osds": {"total": 4, "up": 4, "in": 4},
			    "unreachable": "the storage agent's CephStatus ceph cannot be read now: observe failed: cannot read CephStatus ceph: the API of the storage pool's cluster at https://10.0.0.9:443 has not answered since 2026-11-22T08:04:40Z"}`,
				accessResources(map[string]*fnv1.Resource{"ceph-cluster": fntest.Composed(cephClusterObject, true), "ceph-mgr-pool": fntest.Composed(mgrPoolObject, true),
					"ceph-admin": fntest.Composed(cephAdminObject, false), "ceph-provider-config": fntest.Composed(cephProviderConfig, false)}),
				fntest.ShootAvailable, fntest.AccessAvailable("storage-st-pool-a"), fntest.LayerApplied("storage-st-pool-a", layerRevision),
				fntest.Condition("AgentsReporting", fnv1.Status_STATUS_CONDITION_FALSE, "Unreachable",
					"the storage agent's CephStatus ceph cannot be read now: observe failed: cannot read CephStatus ceph: the API of the storage pool's cluster at https://10.0.0.9:443 has not answered since 2026-11-22T08:04:40Z; health, capacity and OSDs are its last report (HEALTH_OK: 4 OSDs (4 up, 4 in), 3 of 3 monitors in quorum), which says nothing of now"),
				fntest.Condition("DataAvailable", fnv1.Status_STATUS_CONDITION_UNKNOWN, "Unreachable",
					"whether the pool serves its data is unknown while its Ceph cannot be read: the storage agent's CephStatus ceph cannot be read now: observe failed: cannot read CephStatus ceph: the API of the storage pool's cluster at https://10.0.0.9:443 has not answered since 2026-11-22T08:04:40Z"),
				fntest.Condition("CephReady", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "Ceph reports HEALTH_OK"))),
		},
		"AgentReportsInactivePlacementGroups": {
			reason: "Inactive placement groups (a stretched pool's zone lost, its PGs left peered) say on the pool and its claim that the tenants' reads and writes block, whatever Rook says (#54 §2).",
			req: fntest.Request(xr, with(map[string]string{
				"ceph-cluster":  observedObject("storage-st-pool-a-ceph-cluster", "True", healthy),
				"ceph-mgr-pool": observedObject("storage-st-pool-a-ceph-mgr-pool", "True", `{"phase": "Ready"}`),
				"storage-report": observedReport(`{"health": "HEALTH_WARN",
				  "checks": [{"name": "DEGRADED_STRETCH_MODE", "severity": "HEALTH_WARN", "summary": "only requiring 1 of 2 buckets to peer"},
				             {"name": "PG_AVAILABILITY", "severity": "HEALTH_WARN", "summary": "Reduced data availability: 25 pgs inactive"}],
				  "totalBytes": 549755813888000, "usedBytes": 140737488355328, "availableBytes": 409018325532672,
				  "osds": 4, "osdsUp": 2, "osdsIn": 4, "monitors": 3, "monitorsInQuorum": 2}`),
			})),
			want: countedRsp(fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--st-pool-a", "health": "HEALTH_WARN",
			    "capacity": {"asked": "500Ti", "total": "500Ti", "usable": "170666Gi", "available": "372Ti", "used": "128Ti"}, "osds": {"total": 4, "up": 2, "in": 4},
			    "healthChecks": ["HEALTH_WARN DEGRADED_STRETCH_MODE: only requiring 1 of 2 buckets to peer", "HEALTH_WARN PG_AVAILABILITY: Reduced data availability: 25 pgs inactive"]}`,
				accessResources(map[string]*fnv1.Resource{"ceph-cluster": fntest.Composed(cephClusterObject, true), "ceph-mgr-pool": fntest.Composed(mgrPoolObject, true),
					"ceph-admin": fntest.Composed(cephAdminObject, false), "ceph-provider-config": fntest.Composed(cephProviderConfig, false)}),
				fntest.ShootAvailable, fntest.AccessAvailable("storage-st-pool-a"), fntest.LayerApplied("storage-st-pool-a", layerRevision),
				fntest.Condition("AgentsReporting", fnv1.Status_STATUS_CONDITION_TRUE, "Reporting",
					"the storage agent reports HEALTH_WARN: 4 OSDs (2 up, 4 in), 2 of 3 monitors in quorum; HEALTH_WARN DEGRADED_STRETCH_MODE: only requiring 1 of 2 buckets to peer; HEALTH_WARN PG_AVAILABILITY: Reduced data availability: 25 pgs inactive"),
				fntest.Condition("DataAvailable", fnv1.Status_STATUS_CONDITION_FALSE, "Inactive",
					"placement groups are inactive: reads and writes of the data in them block (HEALTH_WARN PG_AVAILABILITY: Reduced data availability: 25 pgs inactive)"),
				fntest.Condition("CephReady", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "Ceph reports HEALTH_OK"))),
		},
		"AgentNotPublished": {
			reason: "A report not read yet leaves Rook's figures and passes on what the StorageReport says.",
			req: fntest.Request(xr, with(map[string]string{
				"storage-report": `{"apiVersion": "kubernetes.provider.c5c3.io/v1alpha1", "kind": "StorageReport", "metadata": {"name": "storage-st-pool-a"},
				  "status": {"conditions": [{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "connect failed: cannot list the CephStatuses (storage.c5c3.io/v1alpha1) of the storage pool's cluster within 30s", "lastTransitionTime": "2026-11-22T08:00:00Z"}]}}`,
			})),
			want: countedRsp(fntest.Response(`{"phase": "Provisioning", "clusterName": "shoot--c5c3--st-pool-a"}`,
				accessResources(map[string]*fnv1.Resource{"ceph-cluster": fntest.Composed(cephClusterObject, false), "ceph-mgr-pool": fntest.Composed(mgrPoolObject, false)}),
				fntest.ShootAvailable, fntest.AccessAvailable("storage-st-pool-a"), fntest.LayerApplied("storage-st-pool-a", layerRevision),
				fntest.Condition("AgentsReporting", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting",
					"waiting for the pool's storage agent to publish CephStatus ceph: connect failed: cannot list the CephStatuses (storage.c5c3.io/v1alpha1) of the storage pool's cluster within 30s; until then health and capacity are Rook's CephCluster's"),
				fntest.Condition("CephReady", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting", "the CephCluster is being created"))),
		},
		"Expanding": {
			reason: "A healthy Ceph pool whose Shoot Gardener is changing (new nodes) is Expanding.",
			req: fntest.Request(xr, map[string]string{
				"shoot": fntest.ShootReconciling("st-pool-a", 30), "kubeconfig": kubeconfigReady, "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig, "inventory": sufficient,
				"layer":         fntest.AppliedLayer(poolAccess, layerRevision),
				"ceph-cluster":  observedObject("storage-st-pool-a-ceph-cluster", "True", healthy),
				"ceph-mgr-pool": observedObject("storage-st-pool-a-ceph-mgr-pool", "True", `{"phase": "Ready"}`),
			}),
			want: countedRsp(fntest.Response(`{"phase": "Expanding", "clusterName": "shoot--c5c3--st-pool-a", "health": "HEALTH_OK",
			    "capacity": {"asked": "500Ti", "total": "500Ti", "usable": "170666Gi", "available": "375Ti", "used": "125Ti"}}`,
				accessResources(map[string]*fnv1.Resource{"ceph-cluster": fntest.Composed(cephClusterObject, true), "ceph-mgr-pool": fntest.Composed(mgrPoolObject, true),
					"ceph-admin": fntest.Composed(cephAdminObject, false), "ceph-provider-config": fntest.Composed(cephProviderConfig, false)}),
				fntest.Condition("ShootReady", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "Shoot is ready; Gardener is applying a change: Shoot reconcile processing (30%)"),
				fntest.AccessAvailable("storage-st-pool-a"), fntest.LayerApplied("storage-st-pool-a", layerRevision), agentsWaiting, fntest.Condition("CephReady", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "Ceph reports HEALTH_OK"))),
		},
		"EncryptedDedicatedPool": {
			reason: "An encrypted pool's OSDs encrypt their devices; a dedicated pool's Ceph daemons tolerate its taint.",
			req: fntest.Request(fntest.EditSpec(xr, func(s map[string]any) {
				fntest.Map(s, "ceph")["encrypted"] = true
				s["dedicated"] = true
				s["allowedTenants"] = []any{"finance"}
			}), accessible),
			want: countedRsp(fntest.Response(`{"phase": "Provisioning", "clusterName": "shoot--c5c3--st-pool-a"}`,
				accessResources(map[string]*fnv1.Resource{
					"shoot": fntest.Composed(fntest.Edit(shoot, func(m map[string]any) {
						fntest.Map(m, "metadata", "labels")["c5c3.io/dedicated-pool"] = "st-pool-a"
						w := fntest.Map(m, "spec", "provider")["workers"].([]any)[0].(map[string]any)
						fntest.Map(w, "labels")["c5c3.io/dedicated-pool"] = "st-pool-a"
						fntest.Map(w, "providerConfig", "extraServerLabels")["c5c3.io/dedicated-pool"] = "st-pool-a"
						w["taints"] = []any{map[string]any{"key": "c5c3.io/dedicated", "value": "st-pool-a", "effect": "NoSchedule"}}
					}), true),
					"ceph-cluster": fntest.Composed(fntest.Edit(cephClusterObject, func(m map[string]any) {
						fntest.Map(manifest(m), "spec", "storage", "config")["encryptedDevice"] = "true"
						fntest.Map(manifest(m), "spec", "placement", "all")["tolerations"] = []any{map[string]any{
							"key": "c5c3.io/dedicated", "operator": "Equal", "value": "st-pool-a", "effect": "NoSchedule"}}
					}), false),
					"ceph-mgr-pool": fntest.Composed(mgrPoolObject, false),
				}),
				fntest.ShootAvailable, fntest.AccessAvailable("storage-st-pool-a"), fntest.LayerApplied("storage-st-pool-a", layerRevision), agentsWaiting, fntest.Condition("CephReady", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting", "the CephCluster is being created")), "c5c3.io/dedicated-pool", "st-pool-a"),
		},
		"HDDSingleZone": {
			reason: "Device class reaches the OSDs; with fewer zones than replicas, replicas spread over hosts.",
			req: fntest.Request(fntest.EditSpec(xr, func(s map[string]any) {
				fntest.Map(s, "ceph")["deviceClass"] = "hdd"
				s["zones"] = []any{"eu-de-1a"}
			}), accessible),
			want: countedRsp(fntest.Response(`{"phase": "Provisioning", "clusterName": "shoot--c5c3--st-pool-a"}`,
				accessResources(map[string]*fnv1.Resource{
					"ceph-cluster": fntest.Composed(fntest.Edit(cephClusterObject, func(m map[string]any) {
						fntest.Map(manifest(m), "spec", "storage", "config")["deviceClass"] = "hdd"
					}), false),
					"ceph-mgr-pool": fntest.Composed(fntest.Edit(mgrPoolObject, func(m map[string]any) {
						fntest.Map(manifest(m), "spec")["failureDomain"] = "host"
					}), false),
					"shoot": fntest.Composed(fntest.Edit(shoot, func(m map[string]any) {
						fntest.Map(m, "spec", "provider")["workers"].([]any)[0].(map[string]any)["zones"] = []any{"eu-de-1a"}
					}), true),
				}),
				fntest.ShootAvailable, fntest.AccessAvailable("storage-st-pool-a"), fntest.LayerApplied("storage-st-pool-a", layerRevision), agentsWaiting, fntest.Condition("CephReady", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting", "the CephCluster is being created"))),
		},
		"ReplicationAboveWorkers": {
			reason: "More replicas than nodes can never be placed; the function says so.",
			req: fntest.Request(fntest.EditSpec(xr, func(s map[string]any) {
				fntest.Map(s, "ceph")["replicationFactor"] = 5
				s["workers"] = 4
			}), nil),
			want: fntest.Fatal("spec.ceph.replicationFactor (5) needs as many nodes: spec.workers is 4"),
		},
		"StretchedOverThreeZones": {
			reason: "A stretched pool spans two zones; the arbiter is the third site.",
			req:    fntest.Request(fntest.EditSpec(xr, func(s map[string]any) { s["arbiterCluster"] = "cp-eu-de-3" }), nil),
			want:   fntest.Fatal("spec.zones must name exactly 2 zones for a stretched pool (spec.arbiterCluster is set), one monitor in each; it names 3"),
		},
		"StretchedWithoutZones": {
			reason: "A stretched pool names its two zones: none are taken from the region, even with a CloudProfile at hand.",
			req: fntest.WithRequired(fntest.Request(fntest.EditSpec(xr, func(s map[string]any) {
				s["arbiterCluster"] = "cp-eu-de-3"
				delete(s, "zones")
			}), nil), "cloud-profile", false, `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile", "metadata": {"name": "ironcore-metal"},
			  "spec": {"type": "ironcore-metal", "regions": [{"name": "eu-de-1", "zones": [{"name": "eu-de-1a"}, {"name": "eu-de-1b"}, {"name": "eu-de-1c"}]}]}}`),
			want: fntest.Fatal("spec.zones must name exactly 2 zones for a stretched pool (spec.arbiterCluster is set), one monitor in each; it names 0"),
		},
		"ArbiterNotAClusterName": {
			reason: "The arbiter cluster is named like a ControlPlaneCluster claim.",
			req: fntest.Request(fntest.EditSpec(xr, func(s map[string]any) {
				s["arbiterCluster"], s["zones"] = "Arbiter_1", []any{"eu-de-1a", "eu-de-1b"}
			}), nil),
			want: fntest.Fatal(`spec.arbiterCluster "Arbiter_1" must name a ControlPlaneCluster (its claim's name, a DNS label)`),
		},
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &Function{log: logging.NewNopLogger()}
			got, err := f.RunFunction(context.Background(), tc.req)
			if err != nil {
				t.Fatalf("%s\nf.RunFunction(...): unexpected error: %v", tc.reason, err)
			}
			want := sharesRun(tc.req, fntest.ClusterRun(tc.req, tc.want))
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nf.RunFunction(...): -want rsp, +got rsp:\n%s", tc.reason, diff)
			}
		})
	}
}

// sharesRun adds what every run of a pool adds that gets past its spec
// (fntest.SharesRun): it shares out its targetCapacity.
func sharesRun(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) *fnv1.RunFunctionResponse {
	xr := &v1alpha1.XStorageCluster{}
	if err := function.FromStruct(req.GetObserved().GetComposite().GetResource(), "the XR", xr); err != nil {
		panic(err)
	}
	gb := shareableGB(xr)
	rsp = fntest.SharesRun(req, rsp, pool.Gigabytes, gb, map[string]float64{"allocatedGB": 0, "shareableGB": float64(gb)})
	// Every run says where the data is (TestDataPlacement checks what),
	// and the capacity it is asked for (the cases with Ceph's say it).
	if st := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue(); st != nil {
		if _, ok := st.Fields["dataPlacement"]; !ok {
			st.Fields["dataPlacement"] = jsonValue(placement(&xr.Spec).Status())
		}
		if _, ok := st.Fields["capacity"]; !ok && xr.Spec.TargetCapacity() != "" {
			st.Fields["capacity"] = jsonValue(map[string]any{"asked": string(xr.Spec.TargetCapacity())})
		}
	}
	return rsp
}

// TestStretchedPool walks a pool stretched over two zones: once its cluster
// can be reached and the arbiter cluster is found, the operator's identity
// is placed in the arbiter cluster (a ServiceAccount whose Role reaches
// the monitor's namespace only) and protected by a usage; once it exists a
// ShootKubeconfig issues its token, and only that kubeconfig is copied
// into the pool cluster beside the RemoteCluster and RemoteArbiter; once
// the arbiter is ready the provider is asked for Ceph's stretch mode, and
// the pool is Ready only once Ceph runs in it.
func TestStretchedPool(t *testing.T) {
	stretched := fntest.EditSpec(xr, func(s map[string]any) {
		s["arbiterCluster"], s["zones"] = "cp-eu-de-3", []any{"eu-de-1a", "eu-de-1b"}
		fntest.Map(s, "ceph")["replicationFactor"] = 4
	})
	const arbiterCluster = `{"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "XControlPlaneCluster",
	  "metadata": {"name": "cp-eu-de-3-x7k2p", "creationTimestamp": "2026-11-20T08:00:00Z",
	    "labels": {"crossplane.io/claim-name": "cp-eu-de-3", "crossplane.io/claim-namespace": "infrastructure"}}}`
	observed := map[string]string{"shoot": fntest.ShootReady("st-pool-a"), "kubeconfig": kubeconfigReady, "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig}
	supplied := true
	run := func(t *testing.T) *fnv1.RunFunctionResponse {
		t.Helper()
		req := fntest.Request(stretched, observed)
		if supplied {
			fntest.WithRequired(req, "arbiter-cluster", false, arbiterCluster)
			fntest.WithRequired(req, "arbiter-cluster-composite", false)
		}
		rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rsp.GetResults() {
			t.Fatalf("unexpected result: %s", r.GetMessage())
		}
		return rsp
	}
	cond := func(rsp *fnv1.RunFunctionResponse) *fnv1.Condition { return condition(rsp, "ArbiterReady") }
	has := func(t *testing.T, rsp *fnv1.RunFunctionResponse, want bool, names ...string) {
		t.Helper()
		for _, n := range names {
			if _, ok := rsp.GetDesired().GetResources()[n]; ok != want {
				t.Errorf("composes %s: %t, want %t", n, ok, want)
			}
		}
	}
	ready := func(names ...string) {
		for _, n := range names {
			observed[n] = observedObject("storage-st-pool-a-"+n, "True", `{}`)
		}
	}
	inArbiter := []string{"arbiter-pod-policy", "arbiter-pod-policy-binding", "arbiter-namespace", "arbiter-service-account", "arbiter-role", "arbiter-role-binding"}
	inPool := []string{"arbiter-kubeconfig-copy", "arbiter-remote-cluster", "arbiter"}

	t.Run("looking up the arbiter cluster", func(t *testing.T) {
		supplied = false
		defer func() { supplied = true }()
		rsp := run(t)
		if r := rsp.GetRequirements().GetResources()["arbiter-cluster"]; r.GetKind() != "XControlPlaneCluster" || r.GetMatchLabels().GetLabels()["crossplane.io/claim-name"] != "cp-eu-de-3" {
			t.Errorf("the arbiter cluster is not required by its claim's name: %v", r)
		}
		has(t, rsp, false, append(inArbiter, "arbiter-usage")...)
	})

	t.Run("the arbiter cluster does not exist", func(t *testing.T) {
		req := fntest.Request(stretched, observed)
		fntest.WithRequired(req, "arbiter-cluster", false)
		fntest.WithRequired(req, "arbiter-cluster-composite", false)
		rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		has(t, rsp, false, append(inArbiter, "arbiter-usage")...)
		if c := cond(rsp); c.GetMessage() != "spec.arbiterCluster names the ControlPlaneCluster cp-eu-de-3, which does not exist: create it, or name an existing one" {
			t.Errorf("ArbiterReady = %v: %s", c.GetStatus(), c.GetMessage())
		}
	})

	t.Run("access ready", func(t *testing.T) {
		rsp := run(t)
		res := rsp.GetDesired().GetResources()
		has(t, rsp, true, append(inArbiter, "arbiter-usage")...)
		// Nothing is copied into the pool cluster before the token exists.
		has(t, rsp, false, append(inPool, "arbiter-access")...)
		for _, n := range inArbiter {
			if pc := fntest.Map(res[n].GetResource().AsMap(), "spec", "providerConfigRef")["name"]; pc != "controlplane-cp-eu-de-3" {
				t.Errorf("%s is placed through ProviderConfig %v, want the arbiter cluster's controlplane-cp-eu-de-3", n, pc)
			}
		}
		role := manifest(res["arbiter-role"].GetResource().AsMap())
		if md := fntest.Map(role, "metadata"); md["namespace"] != "ceph-arbiter-st-pool-a" {
			t.Errorf("the arbiter's Role is in namespace %v, want the monitor's ceph-arbiter-st-pool-a", md["namespace"])
		}
		for _, r := range role["rules"].([]any) {
			rule := r.(map[string]any)
			for _, res := range rule["resources"].([]any) {
				if res == "*" || res == "roles" || res == "rolebindings" || res == "pods/exec" {
					t.Errorf("the arbiter's Role grants %v", rule)
				}
			}
		}
		// What may run in the monitor's namespace is bound by a policy of
		// that namespace alone (tools/render's arbiter test enforces it).
		policy := manifest(res["arbiter-pod-policy"].GetResource().AsMap())
		if sel := fntest.Map(policy, "spec", "matchConstraints", "namespaceSelector", "matchLabels"); sel["kubernetes.io/metadata.name"] != "ceph-arbiter-st-pool-a" {
			t.Errorf("the arbiter's pod policy selects namespaces %v, want ceph-arbiter-st-pool-a", sel)
		}
		var pinned bool
		for _, v := range fntest.Map(policy, "spec")["validations"].([]any) {
			pinned = pinned || strings.Contains(v.(map[string]any)["expression"].(string), "'^/var/lib/rook/mon-st-pool-a-[a-z]/data$'")
		}
		if !pinned {
			t.Error("the arbiter's pod policy does not pin hostPaths to st-pool-a's monitor data, /var/lib/rook/mon-st-pool-a-<letter>/data")
		}
		if b := manifest(res["arbiter-pod-policy-binding"].GetResource().AsMap()); fntest.Map(b, "spec")["policyName"] != fntest.Map(policy, "metadata")["name"] {
			t.Errorf("the binding binds %v, not the arbiter's pod policy %v", fntest.Map(b, "spec")["policyName"], fntest.Map(policy, "metadata")["name"])
		}
		usage := res["arbiter-usage"].GetResource().AsMap()["spec"].(map[string]any)
		if of := fntest.Map(usage, "of", "resourceRef")["name"]; of != "cp-eu-de-3-x7k2p" {
			t.Errorf("the usage protects %v, want the arbiter cluster's composite cp-eu-de-3-x7k2p", of)
		}
		if by := fntest.Map(usage, "by", "resourceRef")["name"]; by != "st-pool-a-4hq8z" {
			t.Errorf("the usage is held by %v, want this pool's composite", by)
		}
		if c := cond(rsp); c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE ||
			c.GetMessage() != "creating the arbiter's ServiceAccount ceph-arbiter-st-pool-a/external-arbiter in cluster cp-eu-de-3" {
			t.Errorf("ArbiterReady = %v: %s", c.GetStatus(), c.GetMessage())
		}
	})

	t.Run("ServiceAccount ready", func(t *testing.T) {
		ready(inArbiter...)
		rsp := run(t)
		res := rsp.GetDesired().GetResources()
		has(t, rsp, false, inPool...)
		token := res["arbiter-access"].GetResource().AsMap()
		want := map[string]any{"shootRef": map[string]any{"name": "cp-eu-de-3", "namespace": "garden-c5c3"},
			"serviceAccountRef": map[string]any{"namespace": "ceph-arbiter-st-pool-a", "name": "external-arbiter"}}
		if diff := cmp.Diff(want, fntest.Map(token, "spec", "forProvider")); diff != "" {
			t.Errorf("the arbiter's ShootKubeconfig (-want +got):\n%s", diff)
		}
		if c := cond(rsp); c.GetMessage() != "waiting for ShootKubeconfig storage-st-pool-a-arbiter to write the arbiter's kubeconfig" {
			t.Errorf("ArbiterReady message = %q", c.GetMessage())
		}
	})

	t.Run("token issued, the pool's layer not applied yet", func(t *testing.T) {
		observed["arbiter-access"] = `{"apiVersion": "gardener.provider.c5c3.io/v1alpha1", "kind": "ShootKubeconfig", "metadata": {"name": "storage-st-pool-a-arbiter"},
		  "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-22T08:00:00Z"}]}}`
		rsp := run(t)
		// The arbiter operator's namespace and CRDs in the pool cluster
		// come with the layer; so do Rook's.
		has(t, rsp, false, append(inPool, "ceph-cluster", "ceph-mgr-pool", "ceph-agent-client")...)
		if c := cond(rsp); c.GetMessage() != "waiting for Flux to apply the pool's layer, which brings the arbiter operator's namespace and CRDs (see LayerApplied)" {
			t.Errorf("ArbiterReady message = %q", c.GetMessage())
		}
	})

	t.Run("token issued", func(t *testing.T) {
		observed["layer"] = fntest.AppliedLayer(poolAccess, layerRevision)
		rsp := run(t)
		res := rsp.GetDesired().GetResources()
		has(t, rsp, true, inPool...)
		cc := manifest(res["ceph-cluster"].GetResource().AsMap())
		if got := fntest.Map(cc, "spec", "mon")["count"]; got != float64(2) {
			t.Errorf("mon count = %v, want 2 (one per zone)", got)
		}
		if _, ok := fntest.Map(cc, "spec", "placement")["mon"]; !ok {
			t.Error("monitors are not spread over the zones")
		}
		if a := fntest.Map(cc, "metadata", "annotations")["c5c3.io/arbiter-cluster"]; a != "cp-eu-de-3" {
			t.Errorf("the CephCluster's annotation c5c3.io/arbiter-cluster = %v, want the arbiter's cluster cp-eu-de-3", a)
		}
		ra := manifest(res["arbiter"].GetResource().AsMap())
		// The monitor's ID is the pool's: its data directory on a node
		// of the arbiter cluster is no other pool's.
		want := map[string]any{"cephCluster": map[string]any{"namespace": "rook-ceph", "name": "st-pool-a"}, "remoteCluster": map[string]any{"name": "cp-eu-de-3"}, "monIdPrefix": "st-pool-a-"}
		if diff := cmp.Diff(want, ra["spec"]); diff != "" {
			t.Errorf("RemoteArbiter spec (-want +got):\n%s", diff)
		}
		if ns := manifest(res["arbiter-remote-cluster"].GetResource().AsMap())["spec"].(map[string]any)["namespace"]; ns != "ceph-arbiter-st-pool-a" {
			t.Errorf("the RemoteCluster deploys into %v, want the namespace its Role reaches", ns)
		}
		// The ServiceAccount's kubeconfig, never the control-plane
		// cluster's admin kubeconfig, reaches the pool cluster.
		// It is copied by the provider's SecretCopy, which names the
		// connection secret, never the value.
		kc := res["arbiter-kubeconfig-copy"].GetResource().AsMap()
		if kc["kind"] != "SecretCopy" {
			t.Fatalf("the arbiter's kubeconfig is copied by a %v, want a SecretCopy", kc["kind"])
		}
		wantCopy := map[string]any{
			"source": map[string]any{"namespace": "crossplane-system", "name": "storage-st-pool-a-arbiter-kubeconfig"},
			"keys":   []any{map[string]any{"from": "kubeconfig", "to": "kubeconfig"}},
			"target": map[string]any{"namespace": "arbiter-operator", "name": "arbiter-cp-eu-de-3-kubeconfig"},
		}
		if diff := cmp.Diff(wantCopy, fntest.Map(kc, "spec", "forProvider")); diff != "" {
			t.Errorf("the arbiter's kubeconfig copy (-want +got):\n%s", diff)
		}
		if pc := fntest.Map(kc, "spec", "providerConfigRef")["name"]; pc != "storage-st-pool-a" {
			t.Errorf("the copy goes through ProviderConfig %v, want the pool cluster's storage-st-pool-a", pc)
		}
		if c := cond(rsp); c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetMessage() != "waiting for the arbiter monitor in cluster cp-eu-de-3" {
			t.Errorf("ArbiterReady = %v: %s", c.GetStatus(), c.GetMessage())
		}
	})

	t.Run("Ceph ready, arbiter not yet", func(t *testing.T) {
		observed["ceph-cluster"] = observedObject("storage-st-pool-a-ceph-cluster", "True", healthy)
		observed["ceph-mgr-pool"] = observedObject("storage-st-pool-a-ceph-mgr-pool", "True", `{"phase": "Ready"}`)
		observed["arbiter"] = observedObject("storage-st-pool-a-arbiter", "False", `{"state": "Progressing", "message": "waiting for remote cluster"}`)
		rsp := run(t)
		if got := phase(rsp); got != "Provisioning" {
			t.Errorf("phase = %v, want Provisioning until the arbiter is ready", got)
		}
		if c := cond(rsp); c.GetMessage() != "waiting for the arbiter monitor in cluster cp-eu-de-3: waiting for remote cluster" {
			t.Errorf("ArbiterReady message = %q", c.GetMessage())
		}
	})

	t.Run("arbiter ready", func(t *testing.T) {
		ready("arbiter-kubeconfig-copy", "arbiter-remote-cluster")
		observed["arbiter"] = observedObject("storage-st-pool-a-arbiter", "True", `{"state": "Ready", "monId": "ext-a"}`)
		rsp := run(t)
		if got := phase(rsp); got != "Provisioning" {
			t.Errorf("phase = %v, want Provisioning until Ceph runs in stretch mode", got)
		}
		if c := cond(rsp); c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE || c.GetMessage() != "monitor ext-a runs in cluster cp-eu-de-3" {
			t.Errorf("ArbiterReady = %v: %s", c.GetStatus(), c.GetMessage())
		}
		// Stretch mode is asked of the provider, through the pool's Ceph
		// ProviderConfig, on the pool's device class, with the arbiter's
		// site named after its cluster.
		sm := rsp.GetDesired().GetResources()["ceph-stretch-mode"].GetResource().AsMap()
		if sm["kind"] != "StretchMode" || fntest.Map(sm, "spec", "providerConfigRef")["name"] != "storage-st-pool-a" {
			t.Fatalf("ceph-stretch-mode: %v", sm)
		}
		want := map[string]any{"root": "default", "zoneType": "zone", "deviceClass": "nvme", "tiebreakerZone": "cp-eu-de-3"}
		if diff := cmp.Diff(want, fntest.Map(sm, "spec", "forProvider")); diff != "" {
			t.Errorf("StretchMode spec.forProvider (-want +got):\n%s", diff)
		}
		if c := condition(rsp, "StretchMode"); c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetMessage() != "waiting for the provider to enable Ceph's stretch mode" {
			t.Errorf("StretchMode = %v: %s", c.GetStatus(), c.GetMessage())
		}
	})

	t.Run("the cluster cannot take stretch mode yet", func(t *testing.T) {
		const waiting = "stretch mode is not enabled yet: no tiebreaker monitor yet: every monitor runs on a host of a zone (a (on n1) in eu-de-1a, b (on n3) in eu-de-1b); the arbiter's monitor has not joined"
		observed["ceph-stretch-mode"] = `{"apiVersion": "ceph.provider.c5c3.io/v1alpha1", "kind": "StretchMode", "metadata": {"name": "storage-st-pool-a-stretch-mode"},
		  "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "WaitingForCluster", "message": "` + waiting + `", "lastTransitionTime": "2026-11-27T08:00:00Z"}]}}`
		rsp := run(t)
		if got := phase(rsp); got != "Provisioning" {
			t.Errorf("phase = %v, want Provisioning", got)
		}
		if c := condition(rsp, "StretchMode"); c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetMessage() != waiting {
			t.Errorf("StretchMode = %v: %s", c.GetStatus(), c.GetMessage())
		}
	})

	t.Run("stretch mode enabled", func(t *testing.T) {
		observed["ceph-stretch-mode"] = `{"apiVersion": "ceph.provider.c5c3.io/v1alpha1", "kind": "StretchMode", "metadata": {"name": "storage-st-pool-a-stretch-mode"},
		  "status": {"atProvider": {"enabled": true, "tiebreakerMonitor": "ext-a", "rule": "stretch_zone"},
		    "conditions": [{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-27T08:00:00Z"}]}}`
		rsp := run(t)
		if got := phase(rsp); got != "Ready" {
			t.Errorf("phase = %v, want Ready", got)
		}
		if c := condition(rsp, "StretchMode"); c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE ||
			c.GetMessage() != "Ceph runs in stretch mode: every pool keeps 2 replicas in each zone by rule stretch_zone; monitor ext-a in cp-eu-de-3 is the tiebreaker" {
			t.Errorf("StretchMode = %v: %s", c.GetStatus(), c.GetMessage())
		}
		if r := rsp.GetDesired().GetResources()["ceph-stretch-mode"]; r.GetReady() != fnv1.Ready_READY_TRUE {
			t.Errorf("the StretchMode is not marked ready: %v", r.GetReady())
		}
	})

	t.Run("the arbiter's ServiceAccount and token not ready for a while, the arbiter cluster's Ceph unhealthy", func(t *testing.T) {
		observed["arbiter-service-account"] = observedObject("storage-st-pool-a-arbiter-service-account", "False", `{}`)
		observed["arbiter-access"] = `{"apiVersion": "gardener.provider.c5c3.io/v1alpha1", "kind": "ShootKubeconfig", "metadata": {"name": "storage-st-pool-a-arbiter"},
		  "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "Unavailable", "lastTransitionTime": "2026-11-22T09:00:00Z"}]}}`
		observed["ceph-admin"] = observedObject("storage-st-pool-a-ceph-admin", "True", `{}`)
		observed["ceph-provider-config"] = `{"apiVersion": "ceph.provider.c5c3.io/v1alpha1", "kind": "ProviderConfig", "metadata": {"name": "storage-st-pool-a"}}`
		observed["ceph-cluster"] = observedObject("storage-st-pool-a-ceph-cluster", "False", `{"phase": "Error"}`)
		rsp := run(t)
		// A RemoteArbiter deleted takes the tiebreaker monitor away, and
		// the StretchMode and the provider's access to Ceph are what the
		// tenants' pools are reconciled through.
		has(t, rsp, true, append(inPool, "arbiter-access", "ceph-stretch-mode", "ceph-admin", "ceph-provider-config")...)
	})
}

// phase is the pool's status.phase in a response.
func phase(rsp *fnv1.RunFunctionResponse) any {
	return rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)["phase"]
}

// condition is the response's condition of type t, nil when it has none.
func condition(rsp *fnv1.RunFunctionResponse, t string) *fnv1.Condition {
	for _, c := range rsp.GetConditions() {
		if c.GetType() == t {
			return c
		}
	}
	return nil
}

// storageUsage is a cloud's ClusterUsage of st-pool-a with its share record.
func storageUsage(cloud string, annotations map[string]string) string {
	return fntest.PoolUsage("st-pool-a", "XStorageCluster", "st-pool-a-4hq8z", cloud, annotations)
}

// TestShares: a storage pool shares out 85 % of its raw capacity
// (targetCapacity; the rest is headroom below Ceph's full ratio) among the
// volume pool quotas its clouds record, as a hypervisor pool its
// nodes: what it gave stays, requests are served in their order while they
// fit, and its status and Allocation condition say who has what and who
// waits. Records of another kind of pool are not its.
func TestShares(t *testing.T) {
	small := fntest.EditSpec(xr, func(s map[string]any) { fntest.Map(s, "ceph")["targetCapacity"] = "12Ti" })
	x := fntest.Edit(small, func(m map[string]any) {
		m["status"] = map[string]any{"shares": []any{map[string]any{"cloud": "team-b-x1", "claim": "team-b/staging", "askedGB": 6144, "allocatedGB": 6144}}}
	})
	req := fntest.Request(x, map[string]string{"shoot": fntest.ShootReady("st-pool-a"), "kubeconfig": kubeconfigReady, "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig})
	fntest.WithRequired(req, "shares", false,
		storageUsage("team-b-x1", map[string]string{"c5c3.io/cloud": "team-b/staging", "c5c3.io/asked-gb": "6144", "c5c3.io/allocated-gb": "6144"}),
		storageUsage("team-c-x1", map[string]string{"c5c3.io/cloud": "team-c/prod", "c5c3.io/asked-gb": "3072", "c5c3.io/allocated-gb": "0", "c5c3.io/asked-since": "2026-11-24T10:00:00Z"}),
		storageUsage("team-a-x1", map[string]string{"c5c3.io/cloud": "team-a/prod", "c5c3.io/asked-gb": "3072", "c5c3.io/allocated-gb": "0", "c5c3.io/asked-since": "2026-11-24T09:00:00Z"}),
		fntest.Edit(storageUsage("team-a-x1", map[string]string{"c5c3.io/asked-nodes": "4", "c5c3.io/allocated-nodes": "0"}), func(m map[string]any) {
			fntest.Map(m, "spec", "of")["kind"] = "XHypervisorCluster"
		}),
	)
	rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if msg := fntest.FatalOf(rsp); msg != "" {
		t.Fatal(msg)
	}
	st := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue().AsMap()
	want := []any{
		map[string]any{"cloud": "team-a-x1", "claim": "team-a/prod", "askedGB": float64(3072), "allocatedGB": float64(3072)},
		map[string]any{"cloud": "team-b-x1", "claim": "team-b/staging", "askedGB": float64(6144), "allocatedGB": float64(6144)},
		map[string]any{"cloud": "team-c-x1", "claim": "team-c/prod", "askedGB": float64(3072), "allocatedGB": float64(0)},
	}
	if diff := cmp.Diff(want, st["shares"]); diff != "" {
		t.Errorf("status.shares (-want +got):\n%s", diff)
	}
	if st["allocatedGB"] != float64(9216) || st["shareableGB"] != float64(10444) {
		t.Errorf("status.allocatedGB = %v, shareableGB = %v; want 9216 of 10444 (85 %% of 12Ti)", st["allocatedGB"], st["shareableGB"])
	}
	var got *fnv1.Condition
	for _, c := range rsp.GetConditions() {
		if c.GetType() == "Allocation" {
			got = c
		}
	}
	wantCond := fntest.Condition("Allocation", fnv1.Status_STATUS_CONDITION_FALSE, "RequestsWaiting",
		"9216 of 10444 GB allocated to 3 cloud(s); waiting for free GB: team-c/prod asks for 3072, has 0")
	if diff := cmp.Diff(wantCond, got, protocmp.Transform()); diff != "" {
		t.Errorf("the Allocation condition (-want +got):\n%s", diff)
	}

	// Without a targetCapacity the pool shares out what Ceph reports.
	reported := fntest.Edit(fntest.EditSpec(xr, func(s map[string]any) { delete(fntest.Map(s, "ceph"), "targetCapacity") }), func(m map[string]any) {
		m["status"] = map[string]any{"capacity": map[string]any{"total": "20Ti"}}
	})
	xs := &v1alpha1.XStorageCluster{}
	if err := json.Unmarshal([]byte(reported), xs); err != nil {
		t.Fatal(err)
	}
	if got := shareableGB(xs); got != 17408 {
		t.Errorf("a pool without targetCapacity shares out %d GB, want 17408, 85 %% of the 20480 Ceph reports", got)
	}

	// The C5C3 docs write spec.capacity: it sizes the pool as targetCapacity does.
	docs := fntest.EditSpec(xr, func(s map[string]any) {
		delete(fntest.Map(s, "ceph"), "targetCapacity")
		s["capacity"] = "10Ti"
	})
	xd := &v1alpha1.XStorageCluster{}
	if err := json.Unmarshal([]byte(docs), xd); err != nil {
		t.Fatal(err)
	}
	if got := shareableGB(xd); got != 8704 {
		t.Errorf("a pool with the docs' spec.capacity 10Ti shares out %d GB, want 8704 (85 %%)", got)
	}

	// A pool that shrinks (OSDs out, a smaller target) keeps the shares it
	// gave, which hold data, and grants nothing more until they fit.
	shrunk := fntest.Edit(fntest.EditSpec(x, func(s map[string]any) { fntest.Map(s, "ceph")["targetCapacity"] = "6Ti" }), func(m map[string]any) {
		m["status"] = map[string]any{"shares": []any{
			map[string]any{"cloud": "team-b-x1", "claim": "team-b/staging", "askedGB": 6144, "allocatedGB": 6144},
			map[string]any{"cloud": "team-a-x1", "claim": "team-a/prod", "askedGB": 3072, "allocatedGB": 3072},
		}}
	})
	req.Observed.Composite.Resource = resource.MustStructJSON(shrunk)
	if rsp, err = (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	st = rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue().AsMap()
	if diff := cmp.Diff(want, st["shares"]); diff != "" {
		t.Errorf("a pool shrunk to 6Ti (5222 GB shareable): status.shares (-want +got):\n%s", diff)
	}
	if st["allocatedGB"] != float64(9216) || st["shareableGB"] != float64(5222) {
		t.Errorf("a pool shrunk to 6Ti: allocatedGB %v of shareableGB %v, want 9216 of 5222 (kept, none granted)", st["allocatedGB"], st["shareableGB"])
	}
}

// TestCapacityAsTheDocsWriteIt: spec.capacity is accepted as the docs write
// it, and refused with a message naming both fields when it contradicts
// spec.ceph.targetCapacity or is no size.
func TestCapacityAsTheDocsWriteIt(t *testing.T) {
	cases := map[string]struct {
		mutate  func(s map[string]any)
		wantErr string
	}{
		"DocsCapacityOnly": {mutate: func(s map[string]any) {
			delete(fntest.Map(s, "ceph"), "targetCapacity")
			s["capacity"] = "500Ti"
		}},
		"BothTheSame": {mutate: func(s map[string]any) { s["capacity"] = "500Ti" }},
		"BothDiffer": {mutate: func(s map[string]any) { s["capacity"] = "400Ti" },
			wantErr: "spec.capacity (400Ti) and spec.ceph.targetCapacity (500Ti) both size the pool: set one of them, or the same size in both"},
		"DocsCapacityNoSize": {mutate: func(s map[string]any) {
			delete(fntest.Map(s, "ceph"), "targetCapacity")
			s["capacity"] = "lots"
		}, wantErr: `spec.capacity "lots" is not a size such as 500Ti`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x := &v1alpha1.XStorageCluster{}
			if err := json.Unmarshal([]byte(fntest.EditSpec(xr, tc.mutate)), x); err != nil {
				t.Fatal(err)
			}
			err := validate(&x.Spec)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Errorf("validate(...) = %q, want %q", got, tc.wantErr)
			}
		})
	}
}

// jsonValue is v as a protobuf value, through its JSON.
func jsonValue(v any) *structpb.Value {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var m any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	pv, err := structpb.NewValue(m)
	if err != nil {
		panic(err)
	}
	return pv
}

// TestDataPlacement: a pool says where its clouds' data is
// (status.dataPlacement: over hosts, by Ceph's default rule) and spreads
// its own .mgr pool over zones when it has one per replica; a stretched
// pool keeps 2 replicas of each in each of its 2 zones on its device
// class, and refuses a replication factor that cannot be placed so,
// saying what would work (#42).
func TestDataPlacement(t *testing.T) {
	cases := map[string]struct {
		edit      func(s map[string]any)
		placement string
		mgr       string
		fatal     string
	}{
		"ThreeZones": {
			edit:      func(map[string]any) {},
			placement: `{"failureDomain": "host", "replicas": 3, "minReplicas": 2, "survives": "the loss of 1 host(s), not of a zone: replicas are spread over hosts, which may share one of eu-de-1a, eu-de-1b, eu-de-1c"}`,
			mgr:       `{"name": ".mgr", "failureDomain": "zone", "replicated": {"size": 3, "requireSafeReplicaSize": true}, "parameters": {"compression_mode": "none"}}`,
		},
		"TwoZonesThreeReplicas": {
			edit:      func(s map[string]any) { s["zones"] = []any{"eu-de-1a", "eu-de-1b"} },
			placement: `{"failureDomain": "host", "replicas": 3, "minReplicas": 2, "survives": "the loss of 1 host(s), not of a zone: replicas are spread over hosts, which may share one of eu-de-1a, eu-de-1b"}`,
			mgr:       `{"name": ".mgr", "failureDomain": "host", "replicated": {"size": 3, "requireSafeReplicaSize": true}, "parameters": {"compression_mode": "none"}}`,
		},
		"Stretched": {
			edit: func(s map[string]any) {
				s["arbiterCluster"], s["zones"] = "cp-eu-de-3", []any{"eu-de-1a", "eu-de-1b"}
				fntest.Map(s, "ceph")["replicationFactor"] = 4
			},
			placement: `{"failureDomain": "zone", "replicas": 4, "minReplicas": 2, "stretched": true, "crushRule": "stretch_zone",
			  "survives": "the loss of a whole zone (eu-de-1a or eu-de-1b): 2 copies stay in the other, and the arbiter's monitor keeps quorum; or of the arbiter site; or of a host in each zone"}`,
			mgr: `{"name": ".mgr", "failureDomain": "zone",
			  "replicated": {"size": 4, "requireSafeReplicaSize": true, "replicasPerFailureDomain": 2, "subFailureDomain": "host"},
			  "parameters": {"compression_mode": "none", "min_size": "2"}}`,
		},
		"StretchedThreeReplicas": {
			edit: func(s map[string]any) {
				s["arbiterCluster"], s["zones"] = "cp-eu-de-3", []any{"eu-de-1a", "eu-de-1b"}
			},
			fatal: "spec.ceph.replicationFactor is 3: a stretched pool (spec.arbiterCluster is set) keeps 2 replicas in each of its 2 zones, so that either zone holds the data alone; set it to 4",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := fntest.Request(fntest.EditSpec(xr, tc.edit), map[string]string{"shoot": fntest.ShootReady("st-pool-a"), "kubeconfig": kubeconfigReady,
				"provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig, "inventory": fntest.ObservedInventory("storage-st-pool-a", counted),
				"layer": fntest.AppliedLayer(poolAccess, layerRevision)})
			if tc.fatal != "" {
				fntest.WithRequired(req, "arbiter-cluster", false)
			}
			got, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if f := fntest.FatalOf(got); f != tc.fatal {
				t.Fatalf("fatal %q, want %q", f, tc.fatal)
			}
			if tc.fatal != "" {
				return
			}
			st := got.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue().GetFields()["dataPlacement"]
			if diff := cmp.Diff(jsonValue(jsonOf(t, tc.placement)), st, protocmp.Transform()); diff != "" {
				t.Errorf("status.dataPlacement: -want +got:\n%s", diff)
			}
			mgr := got.GetDesired().GetResources()["ceph-mgr-pool"].GetResource().GetFields()["spec"].GetStructValue().GetFields()["forProvider"].
				GetStructValue().GetFields()["manifest"].GetStructValue().GetFields()["spec"]
			if diff := cmp.Diff(jsonValue(jsonOf(t, tc.mgr)), mgr, protocmp.Transform()); diff != "" {
				t.Errorf("the .mgr CephBlockPool's spec: -want +got:\n%s", diff)
			}
		})
	}
}

func jsonOf(t *testing.T, j string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(j), &v); err != nil {
		t.Fatalf("%v: %s", err, j)
	}
	return v
}

// TestMachineTypeOfTheCloudProfile: a pool's machine class (the XRD's
// default baremetal-storage included) must be a usable machine type of the
// landscape's CloudProfile; else no Shoot is made, and the claim says which
// field is at fault and which types there are (#53 §2). A Shoot that exists
// is kept whatever the CloudProfile says later.
func TestMachineTypeOfTheCloudProfile(t *testing.T) {
	profile := func(types ...string) string {
		mts := []string{`{"name": "baremetal-old", "cpu": "8", "gpu": "0", "memory": "64Gi", "usable": false}`}
		for _, n := range types {
			mts = append(mts, `{"name": "`+n+`", "cpu": "64", "gpu": "0", "memory": "512Gi"}`)
		}
		return `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile", "metadata": {"name": "ironcore-metal"},
		  "spec": {"type": "ironcore-metal", "machineTypes": [` + strings.Join(mts, ", ") + `],
		  "regions": [{"name": "eu-de-1", "zones": [{"name": "eu-de-1a"}, {"name": "eu-de-1b"}, {"name": "eu-de-1c"}]}]}}`
	}
	inventory := fntest.ObservedInventory("storage-st-pool-a", counted)
	cases := map[string]struct {
		observed map[string]string
		profile  string
		// refused is ShootReady's message; empty: the Shoot is composed.
		refused string
	}{
		"the default baremetal-storage, not offered": {
			observed: map[string]string{"inventory": inventory},
			profile:  profile("baremetal-storage-nvme", "baremetal-kvm", "baremetal-storage-hdd"),
			refused:  `the Shoot is not created: spec.ironcore.machineClass: machine type "baremetal-storage" is not offered by CloudProfile ironcore-metal: name one of baremetal-kvm, baremetal-storage-hdd, baremetal-storage-nvme`,
		},
		"offered but not usable": {
			observed: map[string]string{"inventory": inventory},
			profile:  strings.Replace(profile("baremetal-kvm"), "baremetal-old", "baremetal-storage", 1),
			refused:  `the Shoot is not created: spec.ironcore.machineClass: machine type "baremetal-storage" is not offered by CloudProfile ironcore-metal: name one of baremetal-kvm`,
		},
		"offered": {
			observed: map[string]string{"inventory": inventory},
			profile:  profile("baremetal-storage", "baremetal-kvm"),
		},
		"a Shoot that exists stays": {
			observed: map[string]string{"inventory": inventory, "shoot": fntest.ShootReady("st-pool-a")},
			profile:  profile("baremetal-kvm"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := fntest.WithRequired(fntest.Request(xr, tc.observed), "cloud-profile", false, tc.profile)
			rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var shootReady *fnv1.Condition
			for _, c := range rsp.GetConditions() {
				if c.GetType() == "ShootReady" {
					shootReady = c
				}
			}
			_, composed := rsp.GetDesired().GetResources()["shoot"]
			phase := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue().GetFields()["phase"].GetStringValue()
			if tc.refused == "" {
				if !composed || shootReady.GetReason() == "Refused" {
					t.Errorf("the Shoot composed: %v; ShootReady %s %q", composed, shootReady.GetReason(), shootReady.GetMessage())
				}
				return
			}
			if composed {
				t.Error("a Shoot of a machine type the CloudProfile does not offer was composed")
			}
			if shootReady.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || shootReady.GetReason() != "Refused" || shootReady.GetMessage() != tc.refused || shootReady.GetTarget() != fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
				t.Errorf("ShootReady = %v %s %q (target %v), want False Refused on the claim:\n%q", shootReady.GetStatus(), shootReady.GetReason(), shootReady.GetMessage(), shootReady.GetTarget(), tc.refused)
			}
			if phase != "Failed" {
				t.Errorf("phase %q, want Failed", phase)
			}
		})
	}
}

// poolAccess is how the example pool's cluster is reached; layerRevision
// the revision of its layer Flux applied.
var poolAccess = pool.Access{Kind: pool.KindStorage, Name: "st-pool-a"}

const layerRevision = "main@sha1:abc"

// withoutRook drops the Rook objects a pool composes once its layer is
// applied.
func withoutRook(resources map[string]*fnv1.Resource) map[string]*fnv1.Resource {
	delete(resources, "ceph-agent-client")
	return resources
}

// TestUnhealthyShootKeepsThePool: a running pool whose Shoot turns
// unhealthy (a node NotReady, Gardener reconciling a failed node) keeps
// every object it composed, in the management cluster and in the pool's
// cluster: what a function stops composing, Crossplane deletes, and the
// pool's CephCluster and access are what every tenant's data depends on.
func TestUnhealthyShootKeepsThePool(t *testing.T) {
	observed := map[string]string{"shoot": fntest.ShootUnhealthy("st-pool-a"), "kubeconfig": kubeconfigReady, "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig,
		"inventory":     fntest.ObservedInventory("storage-st-pool-a", counted),
		"layer":         fntest.AppliedLayer(poolAccess, layerRevision),
		"ceph-cluster":  observedObject("storage-st-pool-a-ceph-cluster", "True", `{"phase": "Ready", "ceph": {"health": "HEALTH_OK"}}`),
		"ceph-mgr-pool": observedObject("storage-st-pool-a-ceph-mgr-pool", "True", `{"phase": "Ready"}`),
	}
	rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), fntest.Request(xr, observed))
	if err != nil {
		t.Fatal(err)
	}
	if f := fntest.FatalOf(rsp); f != "" {
		t.Fatal(f)
	}
	for _, n := range []string{"shoot", "kubeconfig", "provider-config", "secrets-provider-config", "layer", "layer-access", "ceph-cluster", "ceph-mgr-pool", "ceph-agent-client", "storage-report"} {
		if _, ok := rsp.GetDesired().GetResources()[n]; !ok {
			t.Errorf("a running pool whose Shoot is unhealthy stops composing %s: Crossplane would delete it", n)
		}
	}
	if c := condition(rsp, "ShootReady"); c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || !strings.Contains(c.GetMessage(), "EveryNodeReady") {
		t.Errorf("ShootReady = %v %q, want False naming EveryNodeReady", c.GetStatus(), c.GetMessage())
	}
}

// TestComposedStagesAreKept: a stage of a pool is kept once composed,
// whatever the stage before it says now. A CephCluster composed before its
// pool's layer condition existed (an upgrade) stays; the provider's access
// to a Ceph that turned unhealthy stays; a stretched pool's arbiter objects
// stay while the arbiter's ServiceAccount is briefly not ready.
func TestComposedStagesAreKept(t *testing.T) {
	base := map[string]string{"shoot": fntest.ShootReady("st-pool-a"), "kubeconfig": kubeconfigReady, "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig,
		"inventory": fntest.ObservedInventory("storage-st-pool-a", counted)}
	with := func(more map[string]string) map[string]string {
		m := map[string]string{}
		for _, o := range []map[string]string{base, more} {
			for k, v := range o {
				m[k] = v
			}
		}
		return m
	}
	for name, tc := range map[string]struct {
		observed map[string]string
		want     []string
	}{
		"CephClusterBeforeTheLayer": {
			observed: with(map[string]string{"ceph-cluster": observedObject("storage-st-pool-a-ceph-cluster", "True", `{"phase": "Ready", "ceph": {"health": "HEALTH_OK"}}`)}),
			want:     []string{"ceph-cluster", "ceph-mgr-pool", "ceph-agent-client", "layer", "layer-access"},
		},
		"CephUnhealthy": {
			observed: with(map[string]string{"layer": fntest.AppliedLayer(poolAccess, layerRevision),
				"ceph-cluster":         observedObject("storage-st-pool-a-ceph-cluster", "False", `{"phase": "Error", "ceph": {"health": "HEALTH_ERR"}}`),
				"ceph-admin":           observedObject("storage-st-pool-a-ceph-admin", "True", `{}`),
				"ceph-provider-config": `{"apiVersion": "ceph.provider.c5c3.io/v1alpha1", "kind": "ProviderConfig", "metadata": {"name": "storage-st-pool-a"}}`}),
			want: []string{"ceph-cluster", "ceph-admin", "ceph-provider-config"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), fntest.Request(xr, tc.observed))
			if err != nil {
				t.Fatal(err)
			}
			if f := fntest.FatalOf(rsp); f != "" {
				t.Fatal(f)
			}
			for _, n := range tc.want {
				if _, ok := rsp.GetDesired().GetResources()[n]; !ok {
					t.Errorf("%s is no longer composed: Crossplane would delete it", n)
				}
			}
		})
	}
}

// TestCapacitySizesThePool: a pool asked for more raw capacity than its
// spec.workers hold gets a Shoot whose worker minimum holds it, from the
// smallest usable server's drives (#53 §3), and says so; once its Ceph
// reports, its status shows asked, raw and usable side by side, and it
// shares out what Ceph really has when that is less than asked.
func TestCapacitySizesThePool(t *testing.T) {
	run := func(t *testing.T, xr string, observed map[string]string) *fnv1.RunFunctionResponse {
		t.Helper()
		rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), fntest.Request(xr, observed))
		if err != nil {
			t.Fatal(err)
		}
		if f := fntest.FatalOf(rsp); f != "" {
			t.Fatal(f)
		}
		return rsp
	}
	// 1Pi of servers with 100Ti each takes 11 of them; spec.workers is 5.
	asksMore := fntest.EditSpec(xr, func(s map[string]any) { fntest.Map(s, "ceph")["targetCapacity"] = "1Pi" })
	t.Run("the Shoot's worker minimum holds the capacity", func(t *testing.T) {
		rsp := run(t, asksMore, map[string]string{"inventory": fntest.ObservedInventory("storage-st-pool-a", counted)})
		shoot := rsp.GetDesired().GetResources()["shoot"].GetResource().AsMap()
		w := fntest.Map(shoot, "spec", "provider")["workers"].([]any)[0].(map[string]any) //nolint:forcetypeassert // the Shoot has one worker
		if w["minimum"] != float64(11) || w["maximum"] != float64(30) {
			t.Errorf("the Shoot's worker is %v to %v, want 11 to 30", w["minimum"], w["maximum"])
		}
		if c := condition(rsp, "CapacitySized"); c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE ||
			c.GetMessage() != "1Pi of raw capacity takes 11 nodes of 100Ti of drives (the smallest of the 32 usable servers): the pool's Shoot keeps at least 11 workers (spec.workers 5)" {
			t.Errorf("CapacitySized = %v %q", c.GetStatus(), c.GetMessage())
		}
	})
	t.Run("more than maxWorkers hold is said on the claim", func(t *testing.T) {
		rsp := run(t, fntest.EditSpec(xr, func(s map[string]any) { fntest.Map(s, "ceph")["targetCapacity"] = "4Pi" }),
			map[string]string{"inventory": fntest.ObservedInventory("storage-st-pool-a", counted)})
		if c := condition(rsp, "CapacitySized"); c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetReason() != "MaxWorkersTooLow" ||
			c.GetMessage() != "4Pi of raw capacity takes 41 nodes of 100Ti of drives (the smallest of the 32 usable servers), more than spec.maxWorkers 30: the pool holds at least 3000Ti; raise spec.maxWorkers or lower spec.capacity" {
			t.Errorf("CapacitySized = %v %s %q", c.GetStatus(), c.GetReason(), c.GetMessage())
		}
	})
	t.Run("shares come from what Ceph has when it is less", func(t *testing.T) {
		for _, tc := range []struct {
			name, asked, total string
			wantGB             int64
		}{
			{"Ceph holds less", "500Ti", "300Ti", 300 << 10 * 85 / 100},
			{"Ceph holds more", "500Ti", "800Ti", 500 << 10 * 85 / 100},
			{"nothing asked", "", "300Ti", 300 << 10 * 85 / 100},
			{"Ceph not reporting yet", "500Ti", "", 500 << 10 * 85 / 100},
		} {
			x := &v1alpha1.XStorageCluster{}
			x.Spec.Ceph.TargetCapacity = v1alpha1.Quantity(tc.asked)
			if tc.total != "" {
				x.Status.Capacity = &v1alpha1.StorageCapacity{Total: tc.total}
			}
			if got := shareableGB(x); got != tc.wantGB {
				t.Errorf("%s: shareableGB = %d, want %d", tc.name, got, tc.wantGB)
			}
		}
	})
	t.Run("asked, raw and usable side by side", func(t *testing.T) {
		rsp := run(t, xr, map[string]string{"shoot": fntest.ShootReady("st-pool-a"), "kubeconfig": kubeconfigReady, "provider-config": providerConfig,
			"secrets-provider-config": secretsProviderConfig, "inventory": fntest.ObservedInventory("storage-st-pool-a", counted),
			"layer":         fntest.AppliedLayer(poolAccess, layerRevision),
			"ceph-cluster":  observedObject("storage-st-pool-a-ceph-cluster", "True", `{"phase": "Ready", "ceph": {"health": "HEALTH_OK", "capacity": {"bytesTotal": 329853488332800, "bytesAvailable": 219902325555200, "bytesUsed": 109951162777600}}}`),
			"ceph-mgr-pool": observedObject("storage-st-pool-a-ceph-mgr-pool", "True", `{"phase": "Ready"}`)})
		got := fntest.Map(rsp.GetDesired().GetComposite().GetResource().AsMap(), "status", "capacity")
		want := map[string]any{"asked": "500Ti", "total": "300Ti", "usable": "100Ti", "available": "200Ti", "used": "100Ti"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("status.capacity: -want, +got:\n%s", diff)
		}
	})
}
