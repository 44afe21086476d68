package fntest

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// ShootReady is a Shoot named name as Gardener reports it once its cluster is
// healthy: the last operation succeeded and every health condition is True.
func ShootReady(name string) string {
	cond := func(t string) string {
		return `{"type": "` + t + `", "status": "True", "lastTransitionTime": "2026-11-22T08:00:00Z", "lastUpdateTime": "2026-11-22T08:00:00Z", "reason": "r", "message": "m"}`
	}
	return `{
  "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot", "metadata": {"name": "` + name + `", "namespace": "garden-c5c3"},
  "status": {
    "technicalID": "shoot--c5c3--` + name + `",
    "lastOperation": {"type": "Create", "state": "Succeeded", "progress": 100, "description": "done", "lastUpdateTime": "2026-11-22T08:00:00Z"},
    "conditions": [` + cond("APIServerAvailable") + `, ` + cond("ControlPlaneHealthy") + `, ` + cond("EveryNodeReady") + `, ` + cond("SystemComponentsHealthy") + `]
  }
}`
}

// Conditions internal/pool sets on the composite and its claim.
var (
	ShootCreating  = Condition("ShootReady", fnv1.Status_STATUS_CONDITION_FALSE, "Creating", "the Shoot is being created")
	ShootAvailable = Condition("ShootReady", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "Shoot is ready")
	AccessNoShoot  = Condition("AccessReady", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting", "waiting for the Shoot")
	AccessCreating = Condition("AccessReady", fnv1.Status_STATUS_CONDITION_FALSE, "Waiting", "the ShootKubeconfig is being created")
)

// AccessAvailable is the AccessReady condition of a reachable cluster.
func AccessAvailable(providerConfig string) *fnv1.Condition {
	return Condition("AccessReady", fnv1.Status_STATUS_CONDITION_TRUE, "Available", "ProviderConfig "+providerConfig+" reaches the cluster")
}

// ShootReconciling is a healthy Shoot named name that Gardener is
// reconciling (a change to an existing cluster) at progress percent.
func ShootReconciling(name string, progress int) string {
	return Edit(ShootReady(name), func(m map[string]any) {
		Map(m, "status")["lastOperation"] = map[string]any{
			"type": "Reconcile", "state": "Processing", "progress": progress,
			"description": "reconciling", "lastUpdateTime": "2026-11-22T09:00:00Z",
		}
	})
}
