package main

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/cephcaps"
	"github.com/c5c3/consumer-plane/internal/cephplacement"
	"github.com/c5c3/consumer-plane/internal/gardener"
	"github.com/c5c3/consumer-plane/internal/pool"
)

// What the pool cluster runs: Rook's operator (installed with the pool's
// agents) watches this namespace, and the Ceph release is pinned so that a
// function upgrade never upgrades Ceph by surprise.
const (
	rookNamespace = "rook-ceph"
	cephImage     = "quay.io/ceph/ceph:v19.2.3"
	monCount      = 3
	mgrCount      = 2
)

// cephCluster is the pool's Rook CephCluster (ceph.rook.io/v1, Rook v1.17).
//
// Rook makes one OSD of every device it may use (useAllDevices); the pool's
// ceph.osdCount is how many devices each server of the machine pool has, which
// the pool's capacity is derived from, not a setting Rook takes. Monitors go
// to distinct nodes, and every Ceph daemon runs only on the pool's nodes.
func cephCluster(s *v1alpha1.StorageClusterParameters) map[string]any {
	config := map[string]any{
		"deviceClass":   string(s.Ceph.DeviceClass),
		"osdsPerDevice": "1",
	}
	if s.Ceph.Encrypted {
		config["encryptedDevice"] = "true"
	}
	all := map[string]any{
		"nodeAffinity": map[string]any{
			"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
				"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{
					"key": gardener.LabelPool, "operator": "In", "values": []any{string(s.Name)},
				}}}},
			},
		},
	}
	if taints := pool.DedicatedTaints(s.PoolPlacement, s.PoolAccess); len(taints) > 0 {
		all["tolerations"] = []any{map[string]any{
			"key": taints[0].Key, "operator": "Equal", "value": taints[0].Value, "effect": string(taints[0].Effect),
		}}
	}
	placement := map[string]any{"all": all}
	mon := map[string]any{"count": int64(monCount), "allowMultiplePerNode": false}
	annotations := map[string]any{"c5c3.io/expected-osds-per-node": strconv.Itoa(int(s.Ceph.OSDCount))}
	if s.ArbiterCluster != "" {
		// Stretched: one monitor per zone, the arbiter is the third; the
		// annotation tells whoever reads the cluster where that one runs.
		annotations[annotationArbiterCluster] = s.ArbiterCluster
		mon["count"] = int64(stretchedZones)
		placement["mon"] = map[string]any{"topologySpreadConstraints": []any{map[string]any{
			"maxSkew": int64(1), "topologyKey": corev1.LabelTopologyZone, "whenUnsatisfiable": "DoNotSchedule",
			"labelSelector": map[string]any{"matchLabels": map[string]any{"app": "rook-ceph-mon"}},
		}}}
	}
	return map[string]any{
		"apiVersion": "ceph.rook.io/v1",
		"kind":       "CephCluster",
		"metadata": map[string]any{
			"name":        string(s.Name),
			"namespace":   rookNamespace,
			"annotations": annotations,
		},
		"spec": map[string]any{
			"cephVersion":     map[string]any{"image": cephImage},
			"dataDirHostPath": "/var/lib/rook",
			"mon":             mon,
			"mgr":             map[string]any{"count": int64(mgrCount), "allowMultiplePerNode": false},
			"dashboard":       map[string]any{"enabled": true, "ssl": true},
			"storage": map[string]any{
				"useAllNodes":   true,
				"useAllDevices": true,
				"config":        config,
			},
			"placement": placement,
		},
	}
}

// mgrPool is Rook's pool for Ceph's own .mgr data, replicated like the
// pool's default (ceph.replicationFactor): over its zones when it has one
// for each replica, else over hosts; in a stretched pool as the clouds'
// pools are, two replicas in each zone (internal/cephplacement).
func mgrPool(s *v1alpha1.StorageClusterParameters) map[string]any {
	p := placement(s)
	if !p.Stretched && len(s.Zones) > 1 && len(s.Zones) >= int(s.Ceph.ReplicationFactor) {
		p.FailureDomain = cephplacement.DomainZone
	}
	spec := p.Rook(map[string]any{"compression_mode": "none"})
	spec["name"] = ".mgr"
	return map[string]any{
		"apiVersion": "ceph.rook.io/v1",
		"kind":       "CephBlockPool",
		"metadata":   map[string]any{"name": "builtin-mgr", "namespace": rookNamespace},
		"spec":       spec,
	}
}

// placement is where the clouds' Ceph pools of the pool's default
// replication keep their replicas, as status.dataPlacement says.
func placement(s *v1alpha1.StorageClusterParameters) cephplacement.Placement {
	return cephplacement.For(s, s.Zones, s.Ceph.ReplicationFactor)
}

// agentClient is the CephX user the pool's storage agent reads Ceph as
// (cluster/agents/storage-agent.yaml reads its key from the Secret Rook
// makes for it, rook-ceph-client-storage-agent): read-only monitor caps
// instead of client.admin on every storage node (#23 §8).
func agentClient() map[string]any {
	caps := map[string]any{}
	for k, v := range cephcaps.StorageAgent() {
		caps[k] = v
	}
	return map[string]any{
		"apiVersion": "ceph.rook.io/v1",
		"kind":       "CephClient",
		"metadata":   map[string]any{"name": cephcaps.StorageAgentUser, "namespace": rookNamespace},
		"spec":       map[string]any{"caps": caps},
	}
}
