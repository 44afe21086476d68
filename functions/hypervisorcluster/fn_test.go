package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"

	ironcorev1alpha1 "github.com/c5c3/consumer-plane/apis/ironcore/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function/fntest"
	"github.com/c5c3/consumer-plane/internal/pool"
)

const xr = `{
  "apiVersion": "crossplane.c5c3.io/v1alpha1",
  "kind": "XHypervisorCluster",
  "metadata": {"name": "hv-pool-a-x7k2p", "labels": {"crossplane.io/claim-name": "hv-pool-a", "crossplane.io/claim-namespace": "infrastructure"}},
  "spec": {
    "region": "eu-de-1",
    "name": "hv-pool-a",
    "kubernetesVersion": "1.34",
    "workers": 20,
    "maxWorkers": 100,
    "zones": ["eu-de-1a", "eu-de-1b"],
    "ironcore": {"machinePool": "hv-pool-a", "machineClass": "baremetal-kvm"},
    "labels": {"hardware-gen": "g5"}
  }
}`

// The Shoot the function composes for xr with the default ShootSettings.
const shoot = `{
  "apiVersion": "core.gardener.cloud/v1beta1",
  "kind": "Shoot",
  "metadata": {
    "name": "hv-pool-a",
    "namespace": "garden-c5c3",
    "labels": {"c5c3.io/pool": "hv-pool-a", "c5c3.io/pool-kind": "hypervisor", "hardware-gen": "g5"}
,
    "annotations": {"confirmation.gardener.cloud/deletion": "true"}
  },
  "spec": {
    "cloudProfile": {"kind": "CloudProfile", "name": "ironcore-metal"},
    "credentialsBindingName": "ironcore-metal",
    "kubernetes": {"version": "1.34", "kubeAPIServer": {"admissionPlugins": [{"name": "DenyServiceExternalIPs"}]}},
    "networking": {"type": "calico", "nodes": "10.250.0.0/16"},
    "provider": {
      "type": "ironcore-metal",
      "workers": [{
        "name": "hypervisor",
        "machine": {"type": "baremetal-kvm", "image": {"name": "gardenlinux"}},
        "minimum": 20,
        "maximum": 100,
        "maxSurge": 1,
        "maxUnavailable": 0,
        "zones": ["eu-de-1a", "eu-de-1b"],
        "labels": {"c5c3.io/pool": "hv-pool-a", "c5c3.io/pool-kind": "hypervisor", "hardware-gen": "g5"},
        "providerConfig": {
          "apiVersion": "ironcore-metal.provider.extensions.gardener.cloud/v1alpha1",
          "kind": "WorkerConfig",
          "extraServerLabels": {"c5c3.io/machine-pool": "hv-pool-a"}
        }
      }]
    },
    "purpose": "production",
    "region": "eu-de-1"
  }
}`

const kubeconfig = `{
  "apiVersion": "gardener.provider.c5c3.io/v1alpha1",
  "kind": "ShootKubeconfig",
  "metadata": {"name": "hypervisor-hv-pool-a"},
  "spec": {
    "writeConnectionSecretToRef": {"name": "hypervisor-hv-pool-a-kubeconfig", "namespace": "crossplane-system"},
    "forProvider": {"shootRef": {"name": "hv-pool-a", "namespace": "garden-c5c3"}}
  }
}`

const providerConfig = `{
  "apiVersion": "kubernetes.crossplane.io/v1alpha1",
  "kind": "ProviderConfig",
  "metadata": {"name": "hypervisor-hv-pool-a"},
  "spec": {"credentials": {"source": "Secret", "secretRef": {"namespace": "crossplane-system", "name": "hypervisor-hv-pool-a-kubeconfig", "key": "kubeconfig"}}}
}`

// secretsProviderConfig is this project's provider's ProviderConfig of the
// same cluster and Secret, for SecretCopies.
var secretsProviderConfig = strings.Replace(providerConfig, "kubernetes.crossplane.io/v1alpha1", "kubernetes.provider.c5c3.io/v1alpha1", 1)

// The pool cluster's ProviderConfig and HypervisorInventory of our provider,
// composed once the cluster can be reached.
const (
	hypervisorsConfig = `{
  "apiVersion": "kvm.provider.c5c3.io/v1alpha1",
  "kind": "ProviderConfig",
  "metadata": {"name": "hypervisor-hv-pool-a"},
  "spec": {"credentials": {"source": "Secret", "secretRef": {"namespace": "crossplane-system", "name": "hypervisor-hv-pool-a-kubeconfig", "key": "kubeconfig"}}}
}`
	hypervisorInventory = `{
  "apiVersion": "kvm.provider.c5c3.io/v1alpha1",
  "kind": "HypervisorInventory",
  "metadata": {"name": "hypervisor-hv-pool-a"},
  "spec": {"providerConfigRef": {"name": "hypervisor-hv-pool-a"}}
}`
	// cloudNodes labels the pool's nodes with their clouds: none here.
	cloudNodes = `{
  "apiVersion": "kubernetes.provider.c5c3.io/v1alpha1",
  "kind": "NodeLabel",
  "metadata": {"name": "hypervisor-hv-pool-a-cloud-nodes"},
  "spec": {"providerConfigRef": {"name": "hypervisor-hv-pool-a"}, "forProvider": {"key": "c5c3.io.node-restriction.kubernetes.io/cloud"}}
}`
)

// observedHypervisors is the HypervisorInventory with a Ready condition of
// status and the observation atProvider (JSON).
func observedHypervisors(status, synced, atProvider string) string {
	return `{"apiVersion": "kvm.provider.c5c3.io/v1alpha1", "kind": "HypervisorInventory", "metadata": {"name": "hypervisor-hv-pool-a"},
	  "status": {"atProvider": ` + atProvider + `, "conditions": [
	    {"type": "Ready", "status": "` + status + `", "reason": "r", "lastTransitionTime": "2026-11-22T08:00:00Z"},
	    {"type": "Synced", "status": "` + synced + `", "reason": "r", "message": "connect failed: cannot watch the Hypervisors", "lastTransitionTime": "2026-11-22T08:00:00Z"}]}}`
}

// agentsWaiting is the condition while the HypervisorInventory is created.
var agentsWaiting = fntest.Condition("AgentsReporting", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting",
	"HypervisorInventory hypervisor-hv-pool-a is being created to read the pool's Hypervisors; until then nodeCount and availableCapacity are spec.workers times the machine class of the CloudProfile")

func observedKubeconfig(status string) string {
	return `{"apiVersion": "gardener.provider.c5c3.io/v1alpha1", "kind": "ShootKubeconfig", "metadata": {"name": "hypervisor-hv-pool-a"},
	  "status": {"conditions": [{"type": "Ready", "status": "` + status + `", "reason": "r", "message": "no Shoot access yet", "lastTransitionTime": "2026-11-22T08:00:00Z"}]}}`
}

const shootFailed = `{
  "apiVersion": "core.gardener.cloud/v1beta1",
  "kind": "Shoot",
  "metadata": {"name": "hv-pool-a", "namespace": "garden-c5c3"},
  "status": {
    "technicalID": "shoot--c5c3--hv-pool-a",
    "lastOperation": {"type": "Create", "state": "Failed", "progress": 40, "description": "infrastructure failed", "lastUpdateTime": "2026-11-22T08:00:00Z"},
    "lastErrors": [{"description": "no server matches the machine pool labels"}]
  }
}`

func worker(shoot map[string]any) map[string]any {
	return fntest.Map(shoot, "spec", "provider")["workers"].([]any)[0].(map[string]any)
}

// cloudProfile is a CloudProfile with one machine type of 128 CPUs and 1 TiB,
// region eu-de-1 with three zones and eu-de-2 with none.
func cloudProfile(machineType string) string {
	return `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile", "metadata": {"name": "ironcore-metal"},
	  "spec": {"type": "ironcore-metal", "kubernetes": {"versions": [{"version": "1.34.2"}]},
	    "machineImages": [{"name": "gardenlinux", "versions": [{"version": "1877.3"}]}],
	    "machineTypes": [{"name": "` + machineType + `", "cpu": "128", "gpu": "0", "memory": "1Ti", "usable": true}],
	    "regions": [{"name": "eu-de-1", "zones": [{"name": "eu-de-1a"}, {"name": "eu-de-1b"}, {"name": "eu-de-1c"}]}, {"name": "eu-de-2"}]}}`
}

// counted is what the IronCore inventory holds for hv-pool-a: 120 servers of
// 64 CPUs and 512 GiB, 18 of them the pool's own, 2 failed.
var counted = ironcorev1alpha1.ServerInventoryObservation{
	Servers: 120, Available: 100, Claimed: 18, Failed: 2, Usable: 118,
	UsableCapacity: ironcorev1alpha1.ServerCapacity{CPUs: 118 * 64, MemoryGiB: 118 * 512},
}

var (
	serverLabels = map[string]string{"c5c3.io/machine-pool": "hv-pool-a"}
	// The ServerInventory before and after the Shoot has a technical ID.
	inventoryNew = fntest.Inventory("hypervisor-hv-pool-a", serverLabels, "")
	inventoryOwn = fntest.Inventory("hypervisor-hv-pool-a", serverLabels, "shoot--c5c3--hv-pool-a-")
	sufficient   = fntest.ObservedInventory("hypervisor-hv-pool-a", counted)
	// inventoryOK is the condition of counted.
	inventoryOK = fntest.Condition("InventorySufficient", fnv1.Status_STATUS_CONDITION_TRUE, "Sufficient",
		"118 usable servers (7552 CPUs, 60416 GiB) for 20 to 100 workers (120 servers labelled c5c3.io/machine-pool=hv-pool-a: 100 available, 0 claimed by another pool, 2 failed)")
)

// withMap returns observed with more resources, leaving observed as it is.
func withMap(observed, more map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{observed, more} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// withInventory adds the counted inventory to observed resources.
func withInventory(observed map[string]string) map[string]string {
	out := map[string]string{"inventory": sufficient}
	for k, v := range observed {
		out[k] = v
	}
	return out
}

// countedRsp adds what a counted, sufficient inventory adds to a response.
func countedRsp(inventory string, rsp *fnv1.RunFunctionResponse) *fnv1.RunFunctionResponse {
	return fntest.Counted(rsp, inventory, counted, inventoryOK)
}

func TestRunFunction(t *testing.T) {
	accessReady := withInventory(map[string]string{"shoot": fntest.ShootReady("hv-pool-a"), "kubeconfig": observedKubeconfig("True"), "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig})
	// A fresh map each time: Counted adds the inventory to it.
	// The node agents are placed once the pool's cluster can be reached.
	readyResources := func() map[string]*fnv1.Resource {
		return fntest.Layer(map[string]*fnv1.Resource{
			"shoot": fntest.Composed(shoot, true), "kubeconfig": fntest.Composed(kubeconfig, true), "provider-config": fntest.Composed(providerConfig, true), "secrets-provider-config": fntest.Composed(secretsProviderConfig, true),
			"hypervisors-provider-config": fntest.Composed(hypervisorsConfig, true), "hypervisors": fntest.Composed(hypervisorInventory, true),
			"cloud-nodes": fntest.Composed(cloudNodes, true),
		}, pool.Access{Kind: pool.KindHypervisor, Name: "hv-pool-a"}, false)
	}

	dedicatedShoot := fntest.Edit(shoot, func(m map[string]any) {
		fntest.Map(m, "metadata", "labels")["c5c3.io/dedicated-pool"] = "hv-pool-a"
		w := worker(m)
		fntest.Map(w, "labels")["c5c3.io/dedicated-pool"] = "hv-pool-a"
		fntest.Map(w, "providerConfig", "extraServerLabels")["c5c3.io/dedicated-pool"] = "hv-pool-a"
		w["taints"] = []any{map[string]any{"key": "c5c3.io/dedicated", "value": "hv-pool-a", "effect": "NoSchedule"}}
	})

	// The C5C3 docs mark a dedicated pool with a label: the label goes on
	// the Shoot and the nodes as every pool label does.
	labelDedicatedShoot := fntest.Edit(dedicatedShoot, func(m map[string]any) {
		fntest.Map(m, "metadata", "labels")["dedicated"] = "true"
		fntest.Map(worker(m), "labels")["dedicated"] = "true"
	})

	noZones := fntest.EditSpec(xr, func(s map[string]any) { delete(s, "zones") })
	threeZoneShoot := fntest.Edit(shoot, func(m map[string]any) { worker(m)["zones"] = []any{"eu-de-1a", "eu-de-1b", "eu-de-1c"} })

	cases := map[string]struct {
		reason string
		req    *fnv1.RunFunctionRequest
		want   *fnv1.RunFunctionResponse
	}{
		"NewPool": {
			reason: "A new pool composes only its ServerInventory: no Shoot before the servers are known to exist.",
			req:    fntest.Request(xr, nil),
			want: fntest.Withheld(fntest.Response(`{"phase": "Provisioning"}`, map[string]*fnv1.Resource{"inventory": fntest.Composed(inventoryNew, false)},
				fntest.Condition("InventorySufficient", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting",
					"ServerInventory hypervisor-hv-pool-a is being created to count the servers labelled c5c3.io/machine-pool=hv-pool-a"),
				fntest.Condition("ShootReady", fnv1.Status_STATUS_CONDITION_FALSE, "Creating",
					"the Shoot is not created yet: ServerInventory hypervisor-hv-pool-a is being created to count the servers labelled c5c3.io/machine-pool=hv-pool-a"),
				fntest.AccessNoShoot)),
		},
		"InventoryCounted": {
			reason: "Once the inventory holds the servers the pool may grow to, its Shoot is composed, with the default settings, and the inventory is in the pool's status.",
			req:    fntest.Request(xr, withInventory(nil)),
			want: countedRsp(inventoryNew, fntest.Response(`{"phase": "Provisioning"}`, map[string]*fnv1.Resource{"shoot": fntest.Composed(shoot, false)},
				fntest.ShootCreating, fntest.AccessNoShoot)),
		},
		"DocsFlowDefaults": {
			reason: "A pool claim as the C5C3 docs' flow writes it, without spec.name and spec.ironcore.machinePool, is the claim's name on servers labelled with it: the same pool.",
			req: fntest.Request(fntest.EditSpec(xr, func(s map[string]any) {
				delete(s, "name")
				delete(fntest.Map(s, "ironcore"), "machinePool")
			}), withInventory(nil)),
			want: countedRsp(inventoryNew, fntest.Response(`{"phase": "Provisioning"}`, map[string]*fnv1.Resource{"shoot": fntest.Composed(shoot, false)},
				fntest.ShootCreating, fntest.AccessNoShoot)),
		},
		"DocsFlowNameNotAPoolName": {
			reason: "A claim whose metadata.name is no pool name (a dot, here), with spec.name omitted, is refused naming both: the schema never saw the name.",
			req: fntest.Request(fntest.Edit(xr, func(m map[string]any) {
				fntest.Map(m, "metadata", "labels")["crossplane.io/claim-name"] = "hv.pool-a"
				delete(fntest.Map(m, "spec"), "name")
			}), nil),
			want: fntest.Fatal(`spec.name "hv.pool-a" (or the claim's metadata.name it defaults to) must be a DNS label of at most 40 characters that starts with a letter: clouds, Shoots and namespaces in other clusters are named after it`),
		},
		"InventoryNotReady": {
			reason: "An inventory that cannot count (its metal cluster is unreachable) holds the Shoot back and passes on why.",
			req: fntest.Request(xr, map[string]string{"inventory": `{"apiVersion": "ironcore.provider.c5c3.io/v1alpha1", "kind": "ServerInventory", "metadata": {"name": "hypervisor-hv-pool-a"},
			  "status": {"conditions": [{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "connect failed: ProviderConfig \"ironcore-metal\": cannot reach the metal cluster", "lastTransitionTime": "2026-11-22T08:00:00Z"}]}}`}),
			want: func() *fnv1.RunFunctionResponse {
				msg := `waiting for ServerInventory hypervisor-hv-pool-a to count the servers labelled c5c3.io/machine-pool=hv-pool-a: connect failed: ProviderConfig "ironcore-metal": cannot reach the metal cluster`
				return fntest.Withheld(fntest.Response(`{"phase": "Provisioning"}`, map[string]*fnv1.Resource{"inventory": fntest.Composed(inventoryNew, false)},
					fntest.Condition("InventorySufficient", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting", msg),
					fntest.Condition("ShootReady", fnv1.Status_STATUS_CONDITION_FALSE, "Creating", "the Shoot is not created yet: "+msg),
					fntest.AccessNoShoot))
			}(),
		},
		"UnderProvisioned": {
			reason: "A pool whose minimum exceeds what the inventory can ever provide gets no Shoot (it would wait forever) and says by how much it falls short.",
			req: fntest.Request(xr, map[string]string{"inventory": fntest.ObservedInventory("hypervisor-hv-pool-a", ironcorev1alpha1.ServerInventoryObservation{
				Servers: 16, Available: 10, ClaimedByOthers: 3, Failed: 1, Maintenance: 2, Usable: 12, UsableCapacity: ironcorev1alpha1.ServerCapacity{CPUs: 768, MemoryGiB: 6144},
				ClaimedByOthersServers: []ironcorev1alpha1.ClaimedServer{{Server: "s-1", Claim: "garden/shoot--c5c3--hv-pool-b-hypervisor-z1-abc"}},
			})}),
			want: func() *fnv1.RunFunctionResponse {
				msg := "spec.workers 20 exceeds the 12 servers the IronCore inventory can provide (16 servers labelled c5c3.io/machine-pool=hv-pool-a: 10 available, 3 claimed by another pool, 1 failed): 8 more are needed before the pool's Shoot is created"
				return fntest.Withheld(fntest.Response(`{"phase": "Provisioning", "inventory": {"servers": 16, "available": 10, "usable": 12, "claimedByOthers": 3, "failed": 1, "capacity": {"vcpus": 768, "memoryGB": 6144}}}`,
					map[string]*fnv1.Resource{"inventory": fntest.Composed(inventoryNew, true)},
					fntest.Condition("InventorySufficient", fnv1.Status_STATUS_CONDITION_FALSE, "UnderProvisioned", msg),
					fntest.Condition("ShootReady", fnv1.Status_STATUS_CONDITION_FALSE, "Creating", "the Shoot is not created yet: "+msg),
					fntest.AccessNoShoot))
			}(),
		},
		"UnderProvisionedKeepsShoot": {
			reason: "Servers lost after the Shoot exists never withdraw it: the pool keeps it and reports the shortfall.",
			req: fntest.Request(xr, map[string]string{"shoot": fntest.ShootReady("hv-pool-a"), "inventory": fntest.ObservedInventory("hypervisor-hv-pool-a", ironcorev1alpha1.ServerInventoryObservation{
				Servers: 20, Claimed: 15, Failed: 5, Usable: 15, UsableCapacity: ironcorev1alpha1.ServerCapacity{CPUs: 960, MemoryGiB: 7680},
			})}),
			want: fntest.Response(`{"phase": "Provisioning", "clusterName": "shoot--c5c3--hv-pool-a", "nodeCount": 20, "inventory": {"servers": 20, "available": 0, "usable": 15, "claimedByOthers": 0, "failed": 5, "capacity": {"vcpus": 960, "memoryGB": 7680}}}`,
				map[string]*fnv1.Resource{"inventory": fntest.Composed(inventoryOwn, true), "shoot": fntest.Composed(shoot, true), "kubeconfig": fntest.Composed(kubeconfig, false), "provider-config": fntest.Composed(providerConfig, false), "secrets-provider-config": fntest.Composed(secretsProviderConfig, false)},
				fntest.Condition("InventorySufficient", fnv1.Status_STATUS_CONDITION_FALSE, "UnderProvisioned",
					"spec.workers 20 exceeds the 15 servers the IronCore inventory can provide (20 servers labelled c5c3.io/machine-pool=hv-pool-a: 0 available, 0 claimed by another pool, 5 failed): 5 more are needed before the pool's Shoot is created"),
				fntest.ShootAvailable, fntest.AccessCreating),
		},
		"MaxWorkersUnreachable": {
			reason: "A pool that can start but never reach maxWorkers gets its Shoot and a condition saying how far it can grow.",
			req: fntest.Request(xr, map[string]string{"inventory": fntest.ObservedInventory("hypervisor-hv-pool-a", ironcorev1alpha1.ServerInventoryObservation{
				Servers: 60, Available: 60, Usable: 60, UsableCapacity: ironcorev1alpha1.ServerCapacity{CPUs: 3840, MemoryGiB: 30720},
			})}),
			want: fntest.Response(`{"phase": "Provisioning", "inventory": {"servers": 60, "available": 60, "usable": 60, "claimedByOthers": 0, "failed": 0, "capacity": {"vcpus": 3840, "memoryGB": 30720}}}`,
				map[string]*fnv1.Resource{"inventory": fntest.Composed(inventoryNew, true), "shoot": fntest.Composed(shoot, false)},
				fntest.Condition("InventorySufficient", fnv1.Status_STATUS_CONDITION_FALSE, "MaxWorkersUnreachable",
					"spec.maxWorkers 100 exceeds the 60 servers the IronCore inventory can provide (60 servers labelled c5c3.io/machine-pool=hv-pool-a: 60 available, 0 claimed by another pool, 0 failed): the pool cannot grow beyond 60 nodes, 40 short"),
				fntest.ShootCreating, fntest.AccessNoShoot),
		},
		"DedicatedLabelOverlap": {
			reason: "A dedicated pool whose server labels match servers another pool claimed gets no Shoot; the condition names the servers and claims.",
			req: fntest.Request(fntest.EditSpec(xr, func(s map[string]any) {
				s["dedicated"] = true
				s["allowedTenants"] = []any{"finance"}
			}), map[string]string{"inventory": fntest.ObservedInventory("hypervisor-hv-pool-a", ironcorev1alpha1.ServerInventoryObservation{
				Servers: 120, Available: 118, ClaimedByOthers: 2, Usable: 118, UsableCapacity: ironcorev1alpha1.ServerCapacity{CPUs: 7552, MemoryGiB: 60416},
				ClaimedByOthersServers: []ironcorev1alpha1.ClaimedServer{
					{Server: "s-7", Claim: "garden/shoot--c5c3--hv-pool-b-hypervisor-z1-abc"}, {Server: "s-9", Claim: "garden/shoot--c5c3--hv-pool-b-hypervisor-z2-def"},
				},
			})}),
			want: func() *fnv1.RunFunctionResponse {
				msg := "the dedicated pool's server labels c5c3.io/dedicated-pool=hv-pool-a,c5c3.io/machine-pool=hv-pool-a match 2 servers another pool has claimed " +
					"(s-7 by ServerClaim garden/shoot--c5c3--hv-pool-b-hypervisor-z1-abc, s-9 by ServerClaim garden/shoot--c5c3--hv-pool-b-hypervisor-z2-def): " +
					"a dedicated pool's servers must be its own; relabel them or choose another spec.ironcore.machinePool"
				return fntest.Withheld(fntest.Response(`{"phase": "Provisioning", "inventory": {"servers": 120, "available": 118, "usable": 118, "claimedByOthers": 2, "failed": 0, "capacity": {"vcpus": 7552, "memoryGB": 60416}}}`,
					map[string]*fnv1.Resource{"inventory": fntest.Composed(fntest.Inventory("hypervisor-hv-pool-a",
						map[string]string{"c5c3.io/machine-pool": "hv-pool-a", "c5c3.io/dedicated-pool": "hv-pool-a"}, ""), true)},
					fntest.Condition("InventorySufficient", fnv1.Status_STATUS_CONDITION_FALSE, "LabelOverlap", msg),
					fntest.Condition("ShootReady", fnv1.Status_STATUS_CONDITION_FALSE, "Creating", "the Shoot is not created yet: "+msg),
					fntest.AccessNoShoot))
			}(),
		},
		"ShootFailed": {
			reason: "A Shoot whose last operation failed makes the pool Failed, saying why, and composes no access.",
			req:    fntest.Request(xr, withInventory(map[string]string{"shoot": shootFailed})),
			want: countedRsp(inventoryOwn, fntest.Response(`{"phase": "Failed", "clusterName": "shoot--c5c3--hv-pool-a"}`, map[string]*fnv1.Resource{"shoot": fntest.Composed(shoot, false)},
				fntest.Condition("ShootReady", fnv1.Status_STATUS_CONDITION_FALSE, "Failed", "Shoot create failed: infrastructure failed; no server matches the machine pool labels"),
				fntest.AccessNoShoot),
			),
		},
		"ShootReady": {
			reason: "Once the Shoot is ready, access to it is composed and its minimum counts as the pool's nodes; the pool waits for the kubeconfig.",
			req:    fntest.Request(xr, withInventory(map[string]string{"shoot": fntest.ShootReady("hv-pool-a")})),
			want: countedRsp(inventoryOwn, fntest.Response(`{"phase": "Provisioning", "clusterName": "shoot--c5c3--hv-pool-a", "nodeCount": 20}`,
				map[string]*fnv1.Resource{"shoot": fntest.Composed(shoot, true), "kubeconfig": fntest.Composed(kubeconfig, false), "provider-config": fntest.Composed(providerConfig, false), "secrets-provider-config": fntest.Composed(secretsProviderConfig, false)},
				fntest.ShootAvailable, fntest.AccessCreating),
			),
		},
		"KubeconfigNotReady": {
			reason: "A ShootKubeconfig that has not written its Secret yet keeps the pool Provisioning and says what it waits for.",
			req:    fntest.Request(xr, withInventory(map[string]string{"shoot": fntest.ShootReady("hv-pool-a"), "kubeconfig": observedKubeconfig("False"), "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig})),
			want: countedRsp(inventoryOwn, fntest.Response(`{"phase": "Provisioning", "clusterName": "shoot--c5c3--hv-pool-a", "nodeCount": 20}`,
				map[string]*fnv1.Resource{"shoot": fntest.Composed(shoot, true), "kubeconfig": fntest.Composed(kubeconfig, false), "provider-config": fntest.Composed(providerConfig, true), "secrets-provider-config": fntest.Composed(secretsProviderConfig, true)},
				fntest.ShootAvailable, fntest.Condition("AccessReady", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting",
					"waiting for ShootKubeconfig hypervisor-hv-pool-a to write Secret crossplane-system/hypervisor-hv-pool-a-kubeconfig: no Shoot access yet")),
			),
		},
		"AccessReady": {
			reason: "With the Shoot ready and its kubeconfig kept fresh the pool is Ready.",
			req:    fntest.Request(xr, withInventory(map[string]string{"shoot": fntest.ShootReady("hv-pool-a"), "kubeconfig": observedKubeconfig("True"), "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig})),
			want: countedRsp(inventoryOwn, fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--hv-pool-a", "nodeCount": 20}`,
				readyResources(),
				fntest.ShootAvailable, fntest.AccessAvailable("hypervisor-hv-pool-a"), fntest.LayerPending("hypervisor-hv-pool-a"), agentsWaiting),
			),
		},
		"Capacity": {
			reason: "With the CloudProfile supplied (Crossplane 2.x), the capacity is the node count times the machine class's CPUs and memory.",
			req:    fntest.WithRequired(fntest.Request(xr, accessReady), "cloud-profile", false, cloudProfile("baremetal-kvm")),
			want: countedRsp(inventoryOwn, fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--hv-pool-a", "nodeCount": 20, "availableCapacity": {"vcpus": 2560, "memoryGB": 20480}, "capacitySource": "CloudProfile"}`,
				readyResources(), fntest.ShootAvailable, fntest.AccessAvailable("hypervisor-hv-pool-a"), fntest.LayerPending("hypervisor-hv-pool-a"), agentsWaiting)),
		},
		"CapacityLegacy": {
			reason: "Crossplane 1.x supplies the CloudProfile as an extra resource.",
			req:    fntest.WithRequired(fntest.Request(xr, accessReady), "cloud-profile", true, cloudProfile("baremetal-kvm")),
			want: countedRsp(inventoryOwn, fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--hv-pool-a", "nodeCount": 20, "availableCapacity": {"vcpus": 2560, "memoryGB": 20480}, "capacitySource": "CloudProfile"}`,
				readyResources(), fntest.ShootAvailable, fntest.AccessAvailable("hypervisor-hv-pool-a"), fntest.LayerPending("hypervisor-hv-pool-a"), agentsWaiting)),
		},
		"UnknownMachineClass": {
			reason: "A machine class the CloudProfile lacks leaves the capacity unknown, with a warning naming the field; the pool stays composed.",
			req:    fntest.WithRequired(fntest.Request(xr, accessReady), "cloud-profile", false, cloudProfile("baremetal-kvm-g7")),
			want: func() *fnv1.RunFunctionResponse {
				r := countedRsp(inventoryOwn, fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--hv-pool-a", "nodeCount": 20}`,
					readyResources(), fntest.ShootAvailable, fntest.AccessAvailable("hypervisor-hv-pool-a"), fntest.LayerPending("hypervisor-hv-pool-a"), agentsWaiting))
				r.Results = []*fnv1.Result{{
					Severity: fnv1.Severity_SEVERITY_WARNING,
					Message:  `spec.ironcore.machineClass "baremetal-kvm" is not a machine type of CloudProfile ironcore-metal: the pool's capacity is unknown`,
					Target:   fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum(),
				}}
				return r
			}(),
		},
		"Scaling": {
			reason: "A ready pool whose Shoot Gardener is changing stays usable and is Scaling.",
			req: fntest.Request(xr, withInventory(map[string]string{
				"shoot": fntest.ShootReconciling("hv-pool-a", 50), "kubeconfig": observedKubeconfig("True"), "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig,
			})),
			want: countedRsp(inventoryOwn, fntest.Response(`{"phase": "Scaling", "clusterName": "shoot--c5c3--hv-pool-a", "nodeCount": 20}`, readyResources(),
				fntest.Condition("ShootReady", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "Shoot is ready; Gardener is applying a change: Shoot reconcile processing (50%)"),
				fntest.AccessAvailable("hypervisor-hv-pool-a"), fntest.LayerPending("hypervisor-hv-pool-a"), agentsWaiting),
			),
		},
		"AgentsReporting": {
			reason: "Once the agents report Hypervisors, the pool's nodes are those in service and its capacity what they can still hold; the condition says who is out of service.",
			req: fntest.WithRequired(fntest.Request(xr, withMap(accessReady, map[string]string{"hypervisors": observedHypervisors("True", "True", `{
			  "hypervisors": 21, "inService": 19, "maintenance": 1, "disconnected": 1, "notReady": 0, "instances": 310,
			  "capacity": {"vcpus": 2432, "memoryGiB": 19456}, "effectiveCapacity": {"vcpus": 4864, "memoryGiB": 19456},
			  "allocation": {"vcpus": 1200, "memoryGiB": 4800}, "available": {"vcpus": 3664, "memoryGiB": 14656},
			  "notInService": [{"name": "node-7", "reason": "Maintenance", "message": "manual maintenance"}, {"name": "node-9", "reason": "LibvirtDisconnected"}]}`)})),
				"cloud-profile", false, cloudProfile("baremetal-kvm")),
			want: countedRsp(inventoryOwn, fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--hv-pool-a", "nodeCount": 19,
			  "availableCapacity": {"vcpus": 3664, "memoryGB": 14656}, "capacitySource": "Agents",
			  "hypervisors": {"total": 21, "inService": 19, "maintenance": 1, "disconnected": 1, "notReady": 0, "instances": 310,
			    "capacity": {"vcpus": 4864, "memoryGB": 19456}, "allocated": {"vcpus": 1200, "memoryGB": 4800}}}`,
				readyResources(), fntest.ShootAvailable, fntest.AccessAvailable("hypervisor-hv-pool-a"), fntest.LayerPending("hypervisor-hv-pool-a"),
				fntest.Condition("AgentsReporting", fnv1.Status_STATUS_CONDITION_TRUE, "Reporting",
					"19 of 21 Hypervisors in service (1 in maintenance, 1 disconnected, 0 not ready), 310 instances; 3664 vCPUs and 14656 GiB free; not in service: node-7 (Maintenance), node-9 (LibvirtDisconnected)"))),
		},
		"AgentsUnreachable": {
			reason: "A HypervisorInventory whose reads fail now (the pool's cluster unreachable) keeps its last report: the pool shows it as the last, says why it is not of now, and binds no node anew.",
			req: fntest.WithRequired(fntest.Request(xr, withMap(accessReady, map[string]string{"hypervisors": observedHypervisors("True", "False", `{
			  "hypervisors": 21, "inService": 19, "maintenance": 1, "disconnected": 1, "notReady": 0, "instances": 310,
			  "capacity": {"vcpus": 2432, "memoryGiB": 19456}, "effectiveCapacity": {"vcpus": 4864, "memoryGiB": 19456},
			  "allocation": {"vcpus": 1200, "memoryGiB": 4800}, "available": {"vcpus": 3664, "memoryGiB": 14656}}`)})),
				"cloud-profile", false, cloudProfile("baremetal-kvm")),
			want: countedRsp(inventoryOwn, fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--hv-pool-a", "nodeCount": 19,
			  "availableCapacity": {"vcpus": 3664, "memoryGB": 14656}, "capacitySource": "Agents",
			  "hypervisors": {"total": 21, "inService": 19, "maintenance": 1, "disconnected": 1, "notReady": 0, "instances": 310,
			    "capacity": {"vcpus": 4864, "memoryGB": 19456}, "allocated": {"vcpus": 1200, "memoryGB": 4800}},
			  "unreachable": "HypervisorInventory hypervisor-hv-pool-a cannot read the pool's Hypervisors now: connect failed: cannot watch the Hypervisors"}`,
				readyResources(), fntest.ShootAvailable, fntest.AccessAvailable("hypervisor-hv-pool-a"), fntest.LayerPending("hypervisor-hv-pool-a"),
				fntest.Condition("AgentsReporting", fnv1.Status_STATUS_CONDITION_FALSE, "Unreachable",
					"HypervisorInventory hypervisor-hv-pool-a cannot read the pool's Hypervisors now: connect failed: cannot watch the Hypervisors; nodeCount, availableCapacity and hypervisors are the agents' last report, and every cloud keeps the nodes it holds until they report again"))),
		},
		"AgentsNoneInService": {
			reason: "A pool whose every node is out of service reports zero nodes and zero free, not an empty capacity (which the XRD would refuse).",
			req: fntest.Request(xr, withMap(accessReady, map[string]string{"hypervisors": observedHypervisors("True", "True", `{
			  "hypervisors": 1, "inService": 0, "maintenance": 1, "disconnected": 0, "notReady": 0, "instances": 0,
			  "capacity": {"vcpus": 0, "memoryGiB": 0}, "effectiveCapacity": {"vcpus": 0, "memoryGiB": 0}, "allocation": {"vcpus": 0, "memoryGiB": 0}, "available": {"vcpus": 0, "memoryGiB": 0},
			  "notInService": [{"name": "node-1", "reason": "Maintenance", "message": "manual maintenance: e2e"}]}`)})),
			want: countedRsp(inventoryOwn, fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--hv-pool-a", "nodeCount": 0,
			  "availableCapacity": {"vcpus": 0, "memoryGB": 0}, "capacitySource": "Agents",
			  "hypervisors": {"total": 1, "inService": 0, "maintenance": 1, "disconnected": 0, "notReady": 0, "instances": 0,
			    "capacity": {"vcpus": 0, "memoryGB": 0}, "allocated": {"vcpus": 0, "memoryGB": 0}}}`,
				readyResources(), fntest.ShootAvailable, fntest.AccessAvailable("hypervisor-hv-pool-a"), fntest.LayerPending("hypervisor-hv-pool-a"),
				fntest.Condition("AgentsReporting", fnv1.Status_STATUS_CONDITION_TRUE, "Reporting",
					"0 of 1 Hypervisors in service (1 in maintenance, 0 disconnected, 0 not ready), 0 instances; 0 vCPUs and 0 GiB free; not in service: node-1 (Maintenance)"))),
		},
		"AgentsNoHypervisors": {
			reason: "A pool cluster without Hypervisors (no agent has reported, or no hypervisor operator) keeps the CloudProfile's figures and says so.",
			req: fntest.WithRequired(fntest.Request(xr, withMap(accessReady, map[string]string{"hypervisors": observedHypervisors("True", "True", `{
			  "hypervisors": 0, "inService": 0, "maintenance": 0, "disconnected": 0, "notReady": 0, "instances": 0,
			  "capacity": {"vcpus": 0, "memoryGiB": 0}, "effectiveCapacity": {"vcpus": 0, "memoryGiB": 0}, "allocation": {"vcpus": 0, "memoryGiB": 0}, "available": {"vcpus": 0, "memoryGiB": 0}}`)})),
				"cloud-profile", false, cloudProfile("baremetal-kvm")),
			want: countedRsp(inventoryOwn, fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--hv-pool-a", "nodeCount": 20, "availableCapacity": {"vcpus": 2560, "memoryGB": 20480}, "capacitySource": "CloudProfile"}`,
				readyResources(), fntest.ShootAvailable, fntest.AccessAvailable("hypervisor-hv-pool-a"), fntest.LayerPending("hypervisor-hv-pool-a"),
				fntest.Condition("AgentsReporting", fnv1.Status_STATUS_CONDITION_FALSE, "NoHypervisors",
					"the pool's cluster has no Hypervisor yet: the hypervisor operator creates one per node, which the pool's hypervisor agents fill from libvirt; until then nodeCount and availableCapacity are spec.workers times the machine class of the CloudProfile"))),
		},
		"AgentsUnreadable": {
			reason: "A HypervisorInventory that cannot read the pool's cluster passes on why, and the pool stays Ready on the CloudProfile's figures.",
			req:    fntest.Request(xr, withMap(accessReady, map[string]string{"hypervisors": observedHypervisors("False", "False", `{}`)})),
			want: countedRsp(inventoryOwn, fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--hv-pool-a", "nodeCount": 20}`,
				readyResources(), fntest.ShootAvailable, fntest.AccessAvailable("hypervisor-hv-pool-a"), fntest.LayerPending("hypervisor-hv-pool-a"),
				fntest.Condition("AgentsReporting", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting",
					"waiting for HypervisorInventory hypervisor-hv-pool-a to read the pool's Hypervisors: connect failed: cannot watch the Hypervisors; until then nodeCount and availableCapacity are spec.workers times the machine class of the CloudProfile"))),
		},
		"KeepsEarlierSteps": {
			reason: "Resources that earlier pipeline steps desire are kept.",
			req: func() *fnv1.RunFunctionRequest {
				r := fntest.Request(xr, withInventory(nil))
				r.Desired = &fnv1.State{Resources: map[string]*fnv1.Resource{"earlier": fntest.Composed(`{"apiVersion": "v1", "kind": "ConfigMap"}`, false)}}
				return r
			}(),
			want: countedRsp(inventoryNew, fntest.Response(`{"phase": "Provisioning"}`, map[string]*fnv1.Resource{
				"earlier": fntest.Composed(`{"apiVersion": "v1", "kind": "ConfigMap"}`, false),
				"shoot":   fntest.Composed(shoot, false),
			}, fntest.ShootCreating, fntest.AccessNoShoot)),
		},
		"DedicatedPool": {
			reason: "A dedicated pool's servers need a label of their own and its nodes carry the pool's label and a NoSchedule taint.",
			req: fntest.Request(fntest.EditSpec(xr, func(s map[string]any) {
				s["dedicated"] = true
				s["allowedTenants"] = []any{"finance"}
			}), withInventory(nil)),
			want: fntest.Counted(fntest.Response(`{"phase": "Provisioning"}`, map[string]*fnv1.Resource{"shoot": fntest.Composed(dedicatedShoot, false)}, fntest.ShootCreating, fntest.AccessNoShoot),
				fntest.Inventory("hypervisor-hv-pool-a", map[string]string{"c5c3.io/machine-pool": "hv-pool-a", "c5c3.io/dedicated-pool": "hv-pool-a"}, ""), counted,
				fntest.Condition("InventorySufficient", fnv1.Status_STATUS_CONDITION_TRUE, "Sufficient",
					"118 usable servers (7552 CPUs, 60416 GiB) for 20 to 100 workers (120 servers labelled c5c3.io/dedicated-pool=hv-pool-a,c5c3.io/machine-pool=hv-pool-a: 100 available, 0 claimed by another pool, 2 failed)")),
		},
		"DedicatedByLabel": {
			reason: "spec.labels.dedicated: \"true\", the C5C3 docs' way, makes the pool dedicated (servers, nodes, taint, status.dedicated), with no tenant named yet.",
			req: fntest.Request(fntest.EditSpec(xr, func(s map[string]any) {
				fntest.Map(s, "labels")["dedicated"] = "true"
			}), withInventory(nil)),
			want: fntest.Counted(fntest.Response(`{"phase": "Provisioning", "dedicated": true}`, map[string]*fnv1.Resource{"shoot": fntest.Composed(labelDedicatedShoot, false)}, fntest.ShootCreating, fntest.AccessNoShoot),
				fntest.Inventory("hypervisor-hv-pool-a", map[string]string{"c5c3.io/machine-pool": "hv-pool-a", "c5c3.io/dedicated-pool": "hv-pool-a"}, ""), counted,
				fntest.Condition("InventorySufficient", fnv1.Status_STATUS_CONDITION_TRUE, "Sufficient",
					"118 usable servers (7552 CPUs, 60416 GiB) for 20 to 100 workers (120 servers labelled c5c3.io/dedicated-pool=hv-pool-a,c5c3.io/machine-pool=hv-pool-a: 100 available, 0 claimed by another pool, 2 failed)")),
		},
		"DedicatedLabelNotABool": {
			reason: "spec.labels.dedicated is \"true\" or \"false\"; anything else is refused, naming the label (as the XRD does).",
			req:    fntest.Request(fntest.EditSpec(xr, func(s map[string]any) { fntest.Map(s, "labels")["dedicated"] = "yes" }), nil),
			want:   fntest.Fatal(`spec.labels.dedicated "yes" marks a dedicated pool, as spec.dedicated does: it must be "true" or "false"`),
		},
		"DedicatedWithoutTenants": {
			reason: "A dedicated pool that names no tenant is refused, naming the field.",
			req:    fntest.Request(fntest.EditSpec(xr, func(s map[string]any) { s["dedicated"] = true }), nil),
			want:   fntest.Fatal("spec.allowedTenants must name the tenant namespace(s) a dedicated pool is for"),
		},
		"NameNotTheClaims": {
			reason: "Clouds find a pool by its claim's name: a pool whose spec.name is another is refused, naming both.",
			req:    fntest.Request(fntest.EditSpec(xr, func(s map[string]any) { s["name"] = "hv-pool-z" }), nil),
			want:   fntest.Fatal(`spec.name "hv-pool-z" must be the claim's metadata.name ("hv-pool-a"): clouds find a pool by its claim's name`),
		},
		"UnclaimedNameNotTheComposites": {
			reason: "A pool created as a composite is found by its name: its spec.name must be that name.",
			req: fntest.Request(fntest.Edit(xr, func(m map[string]any) {
				m["metadata"] = map[string]any{"name": "hv-pool-a-x7k2p"}
			}), nil),
			want: fntest.Fatal(`spec.name "hv-pool-a" must be the composite's metadata.name ("hv-pool-a-x7k2p"): clouds find a pool created without a claim by its name`),
		},
		"WorkersExceedMaxWorkers": {
			reason: "A pool asking for more workers than it may grow to is refused, naming both fields, and composes nothing.",
			req:    fntest.Request(fntest.EditSpec(xr, func(s map[string]any) { s["workers"] = 120 }), nil),
			want:   fntest.Fatal("spec.workers (120) must not exceed spec.maxWorkers (100)"),
		},
		"NoZonesWaitsForTheCloudProfile": {
			reason: "A pool without zones takes its region's from the CloudProfile: until Crossplane supplies it, the run only asks for it.",
			req:    fntest.Request(noZones, withInventory(nil)),
			want:   &fnv1.RunFunctionResponse{Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(response.DefaultTTL)}},
		},
		"NoZonesTakesTheRegions": {
			reason: "A pool without zones spreads its Shoot's workers over every zone of its region in the CloudProfile, and records them in status.",
			req:    fntest.WithRequired(fntest.Request(noZones, withInventory(nil)), "cloud-profile", false, cloudProfile("baremetal-kvm")),
			want: countedRsp(inventoryNew, fntest.Response(`{"phase": "Provisioning", "zones": ["eu-de-1a", "eu-de-1b", "eu-de-1c"]}`,
				map[string]*fnv1.Resource{"shoot": fntest.Composed(threeZoneShoot, false)}, fntest.ShootCreating, fntest.AccessNoShoot)),
		},
		"NoZonesKeepsTheRecorded": {
			reason: "Zones once taken are kept from status: a CloudProfile that gains a zone (or goes) never moves a running pool's workers.",
			req: fntest.Request(fntest.Edit(noZones, func(m map[string]any) {
				m["status"] = map[string]any{"zones": []any{"eu-de-1a", "eu-de-1b", "eu-de-1c"}}
			}), withInventory(nil)),
			want: countedRsp(inventoryNew, fntest.Response(`{"phase": "Provisioning", "zones": ["eu-de-1a", "eu-de-1b", "eu-de-1c"]}`,
				map[string]*fnv1.Resource{"shoot": fntest.Composed(threeZoneShoot, false)}, fntest.ShootCreating, fntest.AccessNoShoot)),
		},
		"NoZonesRegionWithout": {
			reason: "A pool without zones in a region the CloudProfile has no zones for is refused, naming the field, the region and the CloudProfile.",
			req: fntest.WithRequired(fntest.Request(fntest.EditSpec(noZones, func(s map[string]any) { s["region"] = "eu-de-2" }), nil),
				"cloud-profile", false, cloudProfile("baremetal-kvm")),
			want: fntest.Fatal(`spec.zones is empty and region "eu-de-2" has no zones in CloudProfile ironcore-metal: name the zones in spec.zones, or use a region of the CloudProfile`),
		},
		"NoZonesNoCloudProfile": {
			reason: "A pool without zones whose CloudProfile does not exist is refused, saying what to do.",
			req:    fntest.WithRequired(fntest.Request(noZones, nil), "cloud-profile", false),
			want:   fntest.Fatal(`spec.zones is empty and CloudProfile ironcore-metal (the Composition's cloudProfile) does not exist to take the zones of region "eu-de-1" from: name the zones in spec.zones`),
		},
		"InvalidInput": {
			reason: "Invalid ShootSettings in the Composition are refused, naming the input field and what is valid.",
			req:    fntest.WithInput(fntest.Request(xr, nil), `{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "ShootSettings", "purpose": "fun"}`),
			want:   fntest.Fatal(`invalid ShootSettings in the Composition: input.purpose "fun" is invalid: want one of evaluation, testing, development, production`),
		},
		"InvalidLayerPath": {
			reason: "A layer path that leaves the source is refused before anything is composed, naming the input field and what is valid.",
			req:    fntest.WithInput(fntest.Request(xr, nil), `{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "ShootSettings", "clusterLayers": {"hypervisorPath": "../other-team/agents"}}`),
			want:   fntest.Fatal(`invalid ShootSettings in the Composition: input.clusterLayers.hypervisorPath "../other-team/agents" is invalid: want a path inside the source, such as ./clusters/pools/hypervisor`),
		},
		"InvalidLayerSource": {
			reason: "A layer source of a kind Flux's Kustomization cannot name is refused, naming the kinds it can.",
			req:    fntest.WithInput(fntest.Request(xr, nil), `{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "ShootSettings", "clusterLayers": {"sourceKind": "HelmRepository"}}`),
			want:   fntest.Fatal(`invalid ShootSettings in the Composition: input.clusterLayers.sourceKind "HelmRepository" is invalid: want GitRepository, OCIRepository or Bucket`),
		},
		"InputOverridesDefaults": {
			reason: "ShootSettings from the Composition replace the defaults they set.",
			req: fntest.WithInput(fntest.Request(xr, withInventory(nil)), `{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "ShootSettings",
			  "projectNamespace": "garden-lab", "purpose": "development", "machineImage": {"name": "gardenlinux", "version": "1877.3"}}`),
			want: countedRsp(inventoryNew, fntest.Response(`{"phase": "Provisioning"}`, map[string]*fnv1.Resource{"shoot": fntest.Composed(fntest.Edit(shoot, func(m map[string]any) {
				fntest.Map(m, "metadata")["namespace"] = "garden-lab"
				fntest.Map(m, "spec")["purpose"] = "development"
				fntest.Map(worker(m), "machine", "image")["version"] = "1877.3"
			}), false)}, fntest.ShootCreating, fntest.AccessNoShoot)),
		},
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &Function{log: logging.NewNopLogger()}
			got, err := f.RunFunction(context.Background(), tc.req)
			if err != nil {
				t.Fatalf("%s\nf.RunFunction(...): unexpected error: %v", tc.reason, err)
			}
			// Every run asks for the CloudProfile, so that Crossplane
			// supplies it by the time the pool is ready.
			want := sharesRun(tc.req, fntest.ClusterRun(tc.req, tc.want))
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nf.RunFunction(...): -want rsp, +got rsp:\n%s", tc.reason, diff)
			}
		})
	}
}

// sharesRun adds what every run of hv-pool-a adds that gets past its spec
// (fntest.SharesRun).
func sharesRun(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) *fnv1.RunFunctionResponse {
	workers := req.GetObserved().GetComposite().GetResource().GetFields()["spec"].GetStructValue().GetFields()["workers"].GetNumberValue()
	rsp = fntest.SharesRun(req, rsp, pool.Nodes, int64(workers), map[string]float64{"allocatedNodes": 0})
	// Once the pool's cluster is reached (its HypervisorInventory is
	// desired), the pool says whether its shares have their nodes; these
	// cases have no cloud, so every share (none) is bound once the agents
	// report (TestNodeBinding tests the binding itself).
	if _, reached := rsp.GetDesired().GetResources()[string(resourceHypervisors)]; reached && fntest.FatalOf(rsp) == "" {
		c := fntest.Condition(conditionNodesBound, fnv1.Status_STATUS_CONDITION_UNKNOWN, reasonNotReported,
			"the pool's agents do not report its nodes yet: each cloud keeps the nodes it had, and new shares are named once they do")
		fields := rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue().GetFields()
		if _, reporting := fields["hypervisors"]; reporting {
			c = fntest.Condition(conditionNodesBound, fnv1.Status_STATUS_CONDITION_TRUE, reasonBound, "0 node(s) bound to 0 cloud(s), each share in full")
		}
		if why := fields["unreachable"].GetStringValue(); why != "" {
			c = fntest.Condition(conditionNodesBound, fnv1.Status_STATUS_CONDITION_UNKNOWN, reasonUnreachable,
				why+": each cloud keeps the nodes it had until the pool's agents can be read again")
		}
		rsp.Conditions = append(rsp.Conditions, c)
	}
	return rsp
}

// usage is a cloud's ClusterUsage of hv-pool-a with its share record.
func usage(cloud string, annotations map[string]string) string {
	return fntest.PoolUsage("hv-pool-a", "XHypervisorCluster", "hv-pool-a-x7k2p", cloud, annotations)
}

// TestShares: the pool decides the shares of the clouds whose usages of it
// record what they ask for: what it gave before stays, requests are served
// in the order they were made while they fit, and its status and
// Allocation condition say who has what and who waits.
func TestShares(t *testing.T) {
	x := fntest.Edit(xr, func(m map[string]any) {
		m["status"] = map[string]any{"shares": []any{map[string]any{"cloud": "team-b-x1", "claim": "team-b/staging", "asked": 10, "allocated": 10}}}
	})
	req := fntest.WithRequired(fntest.Request(x, nil), "cloud-profile", false, cloudProfile("baremetal-kvm"))
	fntest.WithRequired(req, "shares", false,
		usage("team-b-x1", map[string]string{"c5c3.io/cloud": "team-b/staging", "c5c3.io/asked-nodes": "10", "c5c3.io/allocated-nodes": "10"}),
		usage("team-c-x1", map[string]string{"c5c3.io/cloud": "team-c/prod", "c5c3.io/asked-nodes": "6", "c5c3.io/allocated-nodes": "0", "c5c3.io/asked-since": "2026-11-24T10:00:00Z"}),
		usage("team-a-x1", map[string]string{"c5c3.io/cloud": "team-a/prod", "c5c3.io/asked-nodes": "6", "c5c3.io/allocated-nodes": "0", "c5c3.io/asked-since": "2026-11-24T09:00:00Z"}),
		// Usages of other composites, and of no cloud, are no shares.
		fntest.Edit(usage("team-a-x1", nil), func(m map[string]any) { fntest.Map(m, "spec", "of")["kind"] = "XStorageCluster" }),
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
		map[string]any{"cloud": "team-a-x1", "claim": "team-a/prod", "asked": float64(6), "allocated": float64(6)},
		map[string]any{"cloud": "team-b-x1", "claim": "team-b/staging", "asked": float64(10), "allocated": float64(10)},
		map[string]any{"cloud": "team-c-x1", "claim": "team-c/prod", "asked": float64(6), "allocated": float64(0)},
	}
	if diff := cmp.Diff(want, st["shares"]); diff != "" {
		t.Errorf("status.shares (-want +got):\n%s", diff)
	}
	if st["allocatedNodes"] != float64(16) {
		t.Errorf("status.allocatedNodes = %v, want 16", st["allocatedNodes"])
	}
	var got *fnv1.Condition
	for _, c := range rsp.GetConditions() {
		if c.GetType() == "Allocation" {
			got = c
		}
	}
	wantCond := fntest.Condition("Allocation", fnv1.Status_STATUS_CONDITION_FALSE, "RequestsWaiting",
		"16 of 20 nodes allocated to 3 cloud(s); waiting for free nodes: team-c/prod asks for 6, has 0")
	if diff := cmp.Diff(wantCond, got, protocmp.Transform()); diff != "" {
		t.Errorf("the Allocation condition (-want +got):\n%s", diff)
	}
}

// TestASecondPoolOfANameIsRefused: clouds find a pool by its name, so of
// two pools that go by one name (claims in two namespaces) the newer is
// refused, saying on its claim which pool has the name, and composes
// nothing; the older goes on.
func TestASecondPoolOfANameIsRefused(t *testing.T) {
	at := func(name, ns, created string) string {
		return fntest.Edit(xr, func(m map[string]any) {
			md := fntest.Map(m, "metadata")
			md["name"], md["creationTimestamp"] = name, created
			md["labels"] = map[string]any{"crossplane.io/claim-name": "hv-pool-a", "crossplane.io/claim-namespace": ns}
		})
	}
	older := at("hv-pool-a-x7k2p", "infrastructure", "2026-11-01T00:00:00Z")
	newer := at("hv-pool-a-q2w3e", "team-x", "2026-11-20T00:00:00Z")
	request := func(self string) *fnv1.RunFunctionRequest {
		req := fntest.WithRequired(fntest.Request(self, nil), "cloud-profile", false, cloudProfile("baremetal-kvm"))
		fntest.WithRequired(req, pool.RequirementNamesakes, false, older, newer)
		return fntest.WithRequired(req, pool.RequirementNamesakeComposite, false)
	}
	f := &Function{log: logging.NewNopLogger()}

	rsp, err := f.RunFunction(context.Background(), request(newer))
	if err != nil {
		t.Fatal(err)
	}
	want := "the name hv-pool-a is taken by the older XHypervisorCluster claim infrastructure/hv-pool-a (composite hv-pool-a-x7k2p): clouds find a cluster by its name, which must be unique in the landscape; name this one otherwise (its claim, and spec.name for a pool)"
	if got := fntest.FatalOf(rsp); got != want {
		t.Errorf("Fatal result:\n got %q\nwant %q", got, want)
	}
	if n := len(rsp.GetDesired().GetResources()); n != 0 {
		t.Errorf("the newer pool composes %d resources", n)
	}
	var cond *fnv1.Condition
	for _, c := range rsp.GetConditions() {
		if c.GetType() == "ShootReady" {
			cond = c
		}
	}
	if cond.GetReason() != "NameTaken" || cond.GetMessage() != want || cond.GetTarget() != fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
		t.Errorf("ShootReady = %v, want False NameTaken on the composite and its claim, saying %q", cond, want)
	}

	rsp, err = f.RunFunction(context.Background(), request(older))
	if err != nil {
		t.Fatal(err)
	}
	if got := fntest.FatalOf(rsp); got != "" {
		t.Errorf("the older pool is refused: %s", got)
	}
	if len(rsp.GetDesired().GetResources()) == 0 {
		t.Error("the older pool composes nothing")
	}
}

// TestAgentImagesFromTheInput: a landscape that relocates the agents'
// images names its registry (and, if it pins one, the tag) in the
// Composition's input, and keeps its layers where it chooses; the pool's
// layer Kustomization applies that path of that source with those images.
func TestAgentImagesFromTheInput(t *testing.T) {
	observed := withInventory(map[string]string{"shoot": fntest.ShootReady("hv-pool-a"), "kubeconfig": observedKubeconfig("True"), "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig})
	req := fntest.WithInput(fntest.Request(xr, observed), `{"apiVersion": "input.crossplane.c5c3.io/v1alpha1", "kind": "ShootSettings",
	  "accessSecretNamespace": "landscape-access",
	  "agentImages": {"registry": "registry.landscape.example/cobaltcore", "tag": "v0.2.0"},
	  "clusterLayers": {"sourceKind": "OCIRepository", "sourceName": "layers", "hypervisorPath": "./eu/hypervisor"}}`)
	fntest.WithRequired(req, "cloud-profile", false, cloudProfile("baremetal-kvm"))
	rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if msg := fntest.FatalOf(rsp); msg != "" {
		t.Fatal(msg)
	}
	layer, ok := rsp.GetDesired().GetResources()[string(pool.ResourceLayer)]
	if !ok {
		t.Fatal("no layer Kustomization composed for a reachable pool")
	}
	m := layer.GetResource().AsMap()
	spec := m["spec"].(map[string]any)
	var images []string
	for _, i := range spec["images"].([]any) {
		i := i.(map[string]any)
		images = append(images, i["newName"].(string)+":"+i["newTag"].(string))
	}
	slices.Sort(images)
	want := []string{"registry.landscape.example/cobaltcore/ha-agent:v0.2.0", "registry.landscape.example/cobaltcore/hypervisor-agent:v0.2.0", "registry.landscape.example/cobaltcore/ovs-agent:v0.2.0"}
	if !slices.Equal(images, want) {
		t.Errorf("the agents' images %v, want %v", images, want)
	}
	got := map[string]any{"namespace": m["metadata"].(map[string]any)["namespace"], "path": spec["path"], "sourceRef": spec["sourceRef"]}
	wantLayer := map[string]any{"namespace": "landscape-access", "path": "./eu/hypervisor", "sourceRef": map[string]any{"kind": "OCIRepository", "name": "layers"}}
	if d := cmp.Diff(wantLayer, got); d != "" {
		t.Errorf("layer Kustomization -want +got:\n%s", d)
	}
}

// TestNodeBinding: once the pool's agents report its nodes, each share is
// a set of named nodes in the pool's status: a cloud keeps the usable nodes
// it held, an empty node out of service is replaced from the free ones
// before new shares are named,
// new nodes are spread over the zones, the nodes carry their cloud's
// label, and NodesBound says so. While the agents do not report, every
// share keeps the nodes it had.
func TestNodeBinding(t *testing.T) {
	x := fntest.Edit(xr, func(m map[string]any) {
		m["status"] = map[string]any{"shares": []any{map[string]any{"cloud": "team-b-x1", "claim": "team-b/staging", "asked": 2, "allocated": 2,
			"nodes": []any{"a-1", "b-1"}}}}
	})
	nodes := `[
	  {"name": "a-1", "zone": "eu-de-1a", "inService": true, "instances": 4},
	  {"name": "a-2", "zone": "eu-de-1a", "inService": true},
	  {"name": "a-3", "zone": "eu-de-1a", "inService": true},
	  {"name": "b-1", "zone": "eu-de-1b", "inService": false},
	  {"name": "b-2", "zone": "eu-de-1b", "inService": true},
	  {"name": "b-3", "zone": "eu-de-1b", "inService": true}]`
	// synced is the HypervisorInventory's Synced: "False" when its reads
	// fail now (the pool's cluster unreachable), its report the last.
	synced := "True"
	request := func(reporting bool) *fnv1.RunFunctionRequest {
		observed := withInventory(map[string]string{"shoot": fntest.ShootReady("hv-pool-a"), "kubeconfig": observedKubeconfig("True"), "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig})
		if reporting {
			observed["hypervisors"] = observedHypervisors("True", synced, `{"hypervisors": 6, "inService": 5, "notReady": 1, "instances": 4,
			  "capacity": {"vcpus": 640, "memoryGiB": 5120}, "effectiveCapacity": {"vcpus": 640, "memoryGiB": 5120},
			  "allocation": {"vcpus": 8, "memoryGiB": 16}, "available": {"vcpus": 632, "memoryGiB": 5104}, "nodes": `+nodes+`}`)
		}
		req := fntest.WithRequired(fntest.Request(x, observed), "cloud-profile", false, cloudProfile("baremetal-kvm"))
		return fntest.WithRequired(req, "shares", false,
			usage("team-b-x1", map[string]string{"c5c3.io/cloud": "team-b/staging", "c5c3.io/asked-nodes": "2", "c5c3.io/allocated-nodes": "2"}),
			usage("team-a-x1", map[string]string{"c5c3.io/cloud": "team-a/prod", "c5c3.io/asked-nodes": "3", "c5c3.io/allocated-nodes": "0", "c5c3.io/asked-since": "2026-11-24T09:00:00Z"}),
		)
	}
	var labelled any // the last run's NodeLabel values
	run := func(t *testing.T, req *fnv1.RunFunctionRequest) (shares any, bound *fnv1.Condition) {
		t.Helper()
		rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if msg := fntest.FatalOf(rsp); msg != "" {
			t.Fatal(msg)
		}
		for _, c := range rsp.GetConditions() {
			if c.GetType() == conditionNodesBound {
				bound = c
			}
		}
		labelled = rsp.GetDesired().GetResources()[string(resourceNodeLabels)].GetResource().AsMap()["spec"].(map[string]any)["forProvider"].(map[string]any)["values"]
		return rsp.GetDesired().GetComposite().GetResource().GetFields()["status"].GetStructValue().AsMap()["shares"], bound
	}

	t.Run("named from the reported nodes", func(t *testing.T) {
		shares, bound := run(t, request(true))
		want := []any{
			// New, served after replacements: one node per zone in turn,
			// the zone with most free first.
			map[string]any{"cloud": "team-a-x1", "claim": "team-a/prod", "asked": float64(3), "allocated": float64(3), "nodes": []any{"a-2", "a-3", "b-3"}},
			// Keeps a-1 (which runs its 4 instances); b-1, out of service
			// and empty, is replaced first, in the zone where it has fewest.
			map[string]any{"cloud": "team-b-x1", "claim": "team-b/staging", "asked": float64(2), "allocated": float64(2), "nodes": []any{"a-1", "b-2"}, "instances": float64(4)},
		}
		if diff := cmp.Diff(want, shares); diff != "" {
			t.Errorf("status.shares (-want +got):\n%s", diff)
		}
		// The nodes themselves say which cloud they serve.
		wantLabels := map[string]any{"a-1": "team-b-x1", "b-2": "team-b-x1", "a-2": "team-a-x1", "a-3": "team-a-x1", "b-3": "team-a-x1"}
		if diff := cmp.Diff(wantLabels, labelled); diff != "" {
			t.Errorf("the NodeLabel's values (-want +got):\n%s", diff)
		}
		wantCond := fntest.Condition(conditionNodesBound, fnv1.Status_STATUS_CONDITION_TRUE, reasonBound, "5 node(s) bound to 2 cloud(s), each share in full")
		if diff := cmp.Diff(wantCond, bound, protocmp.Transform()); diff != "" {
			t.Errorf("the NodesBound condition (-want +got):\n%s", diff)
		}
	})

	t.Run("a share that cannot be named in full says what it waits for", func(t *testing.T) {
		req := request(true)
		fntest.WithRequired(req, "shares", false,
			usage("team-b-x1", map[string]string{"c5c3.io/cloud": "team-b/staging", "c5c3.io/asked-nodes": "2", "c5c3.io/allocated-nodes": "2"}),
			usage("team-a-x1", map[string]string{"c5c3.io/cloud": "team-a/prod", "c5c3.io/asked-nodes": "5", "c5c3.io/allocated-nodes": "0", "c5c3.io/asked-since": "2026-11-24T09:00:00Z"}),
		)
		_, bound := run(t, req)
		// Four usable nodes are free: team-b gets its replacement for b-1
		// first, then team-a takes the other three and waits for two.
		wantCond := fntest.Condition(conditionNodesBound, fnv1.Status_STATUS_CONDITION_FALSE, reasonNodesWait,
			"team-a/prod: 2 node(s) of its share are not free yet (other clouds' nodes drain, or nodes are out of service)")
		if diff := cmp.Diff(wantCond, bound, protocmp.Transform()); diff != "" {
			t.Errorf("the NodesBound condition (-want +got):\n%s", diff)
		}
	})

	t.Run("a cloud that leaves the pool keeps the node that runs its instances", func(t *testing.T) {
		// team-b removed the pool from its claim: its record asks for 0.
		req := request(true)
		fntest.WithRequired(req, "shares", false,
			usage("team-b-x1", map[string]string{"c5c3.io/cloud": "team-b/staging", "c5c3.io/asked-nodes": "0", "c5c3.io/allocated-nodes": "2"}),
			usage("team-a-x1", map[string]string{"c5c3.io/cloud": "team-a/prod", "c5c3.io/asked-nodes": "3", "c5c3.io/allocated-nodes": "0", "c5c3.io/asked-since": "2026-11-24T09:00:00Z"}),
		)
		shares, bound := run(t, req)
		want := []any{
			map[string]any{"cloud": "team-a-x1", "claim": "team-a/prod", "asked": float64(3), "allocated": float64(3), "nodes": []any{"a-2", "a-3", "b-2"}},
			// b-1 is out of service and empty: let go at once.
			map[string]any{"cloud": "team-b-x1", "claim": "team-b/staging", "asked": float64(0), "allocated": float64(0), "draining": []any{"a-1"}, "instances": float64(4)},
		}
		if diff := cmp.Diff(want, shares); diff != "" {
			t.Errorf("status.shares (-want +got):\n%s", diff)
		}
		if labelled.(map[string]any)["a-1"] != "team-b-x1" {
			t.Errorf("a-1, draining, is labelled %v, want team-b-x1", labelled.(map[string]any)["a-1"])
		}
		if !strings.Contains(bound.GetMessage(), "team-b/staging: the share shrank: it holds [a-1] until their instances are gone") {
			t.Errorf("NodesBound says %q, not that team-b still holds a-1", bound.GetMessage())
		}
	})

	t.Run("a lost node running a cloud's instances stays its, out of service, and is replaced", func(t *testing.T) {
		// a-1, team-b's node with its 4 instances, stops answering.
		nodes = strings.Replace(nodes, `{"name": "a-1", "zone": "eu-de-1a", "inService": true, "instances": 4}`, `{"name": "a-1", "zone": "eu-de-1a", "inService": false, "instances": 4}`, 1)
		t.Cleanup(func() {
			nodes = strings.Replace(nodes, `"inService": false, "instances": 4`, `"inService": true, "instances": 4`, 1)
		})
		shares, bound := run(t, request(true))
		want := []any{
			map[string]any{"cloud": "team-a-x1", "claim": "team-a/prod", "asked": float64(3), "allocated": float64(3), "nodes": []any{"a-3", "b-3"}},
			map[string]any{"cloud": "team-b-x1", "claim": "team-b/staging", "asked": float64(2), "allocated": float64(2), "nodes": []any{"a-2", "b-2"},
				"draining": []any{"a-1"}, "outOfService": []any{"a-1"}, "instances": float64(4)},
		}
		if diff := cmp.Diff(want, shares); diff != "" {
			t.Errorf("status.shares (-want +got):\n%s", diff)
		}
		if labelled.(map[string]any)["a-1"] != "team-b-x1" {
			t.Errorf("a-1, lost with team-b's instances, is labelled %v, want team-b-x1", labelled.(map[string]any)["a-1"])
		}
		if !strings.Contains(bound.GetMessage(), "team-b/staging: [a-1] out of service with its instances on them: held until the instances are gone") {
			t.Errorf("NodesBound says %q, not that team-b's a-1 is out of service", bound.GetMessage())
		}
	})

	t.Run("kept while the agents' report cannot be read now", func(t *testing.T) {
		// The last report says b-1 is out of service; the pool's cluster
		// cannot be reached now: nothing is bound anew from it.
		synced = "False"
		t.Cleanup(func() { synced = "True" })
		shares, bound := run(t, request(true))
		want := []any{
			map[string]any{"cloud": "team-a-x1", "claim": "team-a/prod", "asked": float64(3), "allocated": float64(3)},
			map[string]any{"cloud": "team-b-x1", "claim": "team-b/staging", "asked": float64(2), "allocated": float64(2), "nodes": []any{"a-1", "b-1"}},
		}
		if diff := cmp.Diff(want, shares); diff != "" {
			t.Errorf("status.shares (-want +got):\n%s", diff)
		}
		if bound.GetStatus() != fnv1.Status_STATUS_CONDITION_UNKNOWN || bound.GetReason() != reasonUnreachable {
			t.Errorf("NodesBound %v %s %q, want Unknown, %s", bound.GetStatus(), bound.GetReason(), bound.GetMessage(), reasonUnreachable)
		}
	})

	t.Run("kept while the agents do not report", func(t *testing.T) {
		shares, bound := run(t, request(false))
		want := []any{
			map[string]any{"cloud": "team-a-x1", "claim": "team-a/prod", "asked": float64(3), "allocated": float64(3)},
			map[string]any{"cloud": "team-b-x1", "claim": "team-b/staging", "asked": float64(2), "allocated": float64(2), "nodes": []any{"a-1", "b-1"}},
		}
		if diff := cmp.Diff(want, shares); diff != "" {
			t.Errorf("status.shares (-want +got):\n%s", diff)
		}
		if bound.GetStatus() != fnv1.Status_STATUS_CONDITION_UNKNOWN || bound.GetReason() != reasonNotReported {
			t.Errorf("NodesBound = %v %s, want Unknown %s", bound.GetStatus(), bound.GetReason(), reasonNotReported)
		}
	})
}

// TestUnhealthyShootKeepsThePool: a running hypervisor pool whose Shoot
// turns unhealthy keeps its access, its layer (the node agents) and its
// HypervisorInventory: what a function stops composing, Crossplane deletes.
func TestUnhealthyShootKeepsThePool(t *testing.T) {
	observed := withInventory(map[string]string{"shoot": fntest.ShootUnhealthy("hv-pool-a"), "kubeconfig": observedKubeconfig("True"), "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig,
		"layer": fntest.AppliedLayer(pool.Access{Kind: pool.KindHypervisor, Name: "hv-pool-a"}, "main@sha1:abc"), "hypervisors": observedHypervisors("True", "True", `{}`)})
	rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), fntest.Request(xr, observed))
	if err != nil {
		t.Fatal(err)
	}
	if f := fntest.FatalOf(rsp); f != "" {
		t.Fatal(f)
	}
	for _, n := range []string{"shoot", "kubeconfig", "provider-config", "secrets-provider-config", "layer", "layer-access", "hypervisors-provider-config", "hypervisors", "cloud-nodes"} {
		if _, ok := rsp.GetDesired().GetResources()[n]; !ok {
			t.Errorf("a running pool whose Shoot is unhealthy stops composing %s: Crossplane would delete it", n)
		}
	}
}
