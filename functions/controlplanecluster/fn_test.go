package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/c5c3/consumer-plane/internal/function/fntest"
	"github.com/c5c3/consumer-plane/internal/pool"
)

const xr = `{
  "apiVersion": "crossplane.c5c3.io/v1alpha1",
  "kind": "XControlPlaneCluster",
  "metadata": {"name": "cp-eu-de-1-9xk2c", "labels": {"crossplane.io/claim-name": "cp-eu-de-1", "crossplane.io/claim-namespace": "infrastructure"}},
  "spec": {
    "region": "eu-de-1",
    "kubernetesVersion": "1.34",
    "workers": 5,
    "maxWorkers": 10,
    "machineType": "baremetal-control-plane",
    "volumeSize": "200Gi",
    "highAvailability": true,
    "zones": ["eu-de-1a", "eu-de-1b", "eu-de-1c"]
  }
}`

// The Shoot the function composes for xr with the default ShootSettings.
const shoot = `{
  "apiVersion": "core.gardener.cloud/v1beta1",
  "kind": "Shoot",
  "metadata": {
    "name": "cp-eu-de-1",
    "namespace": "garden-c5c3",
    "labels": {"c5c3.io/pool": "cp-eu-de-1", "c5c3.io/pool-kind": "control-plane"}
,
    "annotations": {"confirmation.gardener.cloud/deletion": "true"}
  },
  "spec": {
    "cloudProfile": {"kind": "CloudProfile", "name": "ironcore-metal"},
    "controlPlane": {"highAvailability": {"failureTolerance": {"type": "zone"}}},
    "credentialsBindingName": "ironcore-metal",
    "kubernetes": {"version": "1.34", "kubeAPIServer": {"admissionPlugins": [{"name": "DenyServiceExternalIPs"}]}},
    "networking": {"type": "calico", "nodes": "10.250.0.0/16"},
    "provider": {
      "type": "ironcore-metal",
      "workers": [{
        "name": "control-plane",
        "machine": {"type": "baremetal-control-plane", "image": {"name": "gardenlinux"}},
        "minimum": 5,
        "maximum": 10,
        "maxSurge": 1,
        "maxUnavailable": 0,
        "zones": ["eu-de-1a", "eu-de-1b", "eu-de-1c"],
        "labels": {"c5c3.io/pool": "cp-eu-de-1", "c5c3.io/pool-kind": "control-plane"},
        "providerConfig": {"apiVersion": "ironcore-metal.provider.extensions.gardener.cloud/v1alpha1", "kind": "WorkerConfig"},
        "volume": {"size": "200Gi"}
      }]
    },
    "purpose": "production",
    "region": "eu-de-1"
  }
}`

const kubeconfig = `{
  "apiVersion": "gardener.provider.c5c3.io/v1alpha1", "kind": "ShootKubeconfig",
  "metadata": {"name": "controlplane-cp-eu-de-1"},
  "spec": {
    "writeConnectionSecretToRef": {"name": "controlplane-cp-eu-de-1-kubeconfig", "namespace": "crossplane-system"},
    "forProvider": {"shootRef": {"name": "cp-eu-de-1", "namespace": "garden-c5c3"}}
  }
}`

const providerConfig = `{
  "apiVersion": "kubernetes.crossplane.io/v1alpha1", "kind": "ProviderConfig",
  "metadata": {"name": "controlplane-cp-eu-de-1"},
  "spec": {"credentials": {"source": "Secret", "secretRef": {"namespace": "crossplane-system", "name": "controlplane-cp-eu-de-1-kubeconfig", "key": "kubeconfig"}}}
}`

// secretsProviderConfig is this project's provider's ProviderConfig of the
// same cluster and Secret, for SecretCopies.
var secretsProviderConfig = strings.Replace(providerConfig, "kubernetes.crossplane.io/v1alpha1", "kubernetes.provider.c5c3.io/v1alpha1", 1)

const kubeconfigReady = `{"apiVersion": "gardener.provider.c5c3.io/v1alpha1", "kind": "ShootKubeconfig",
  "metadata": {"name": "controlplane-cp-eu-de-1"},
  "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-22T08:00:00Z"}]}}`

func worker(shoot map[string]any) map[string]any {
	return fntest.Map(shoot, "spec", "provider")["workers"].([]any)[0].(map[string]any)
}

func TestRunFunction(t *testing.T) {
	cases := map[string]struct {
		reason string
		req    *fnv1.RunFunctionRequest
		want   *fnv1.RunFunctionResponse
	}{
		"NewCluster": {
			reason: "A new cluster composes an HA Shoot named after its claim, with workers, machine type, volume and zones.",
			req:    fntest.Request(xr, nil),
			want:   fntest.Response(`{"phase": "Provisioning"}`, map[string]*fnv1.Resource{"shoot": fntest.Composed(shoot, false)}, fntest.ShootCreating, fntest.AccessNoShoot),
		},
		"ShootReady": {
			reason: "Once the Shoot is ready, the kubeconfig Secret it will be reached through is in status and access is composed.",
			req:    fntest.Request(xr, map[string]string{"shoot": fntest.ShootReady("cp-eu-de-1")}),
			want: fntest.Response(`{"phase": "Provisioning", "clusterName": "shoot--c5c3--cp-eu-de-1",
			    "kubeconfig": {"name": "controlplane-cp-eu-de-1-kubeconfig", "namespace": "crossplane-system"}}`,
				map[string]*fnv1.Resource{"shoot": fntest.Composed(shoot, true), "kubeconfig": fntest.Composed(kubeconfig, false), "provider-config": fntest.Composed(providerConfig, false), "secrets-provider-config": fntest.Composed(secretsProviderConfig, false)},
				fntest.ShootAvailable, fntest.AccessCreating),
		},
		"AccessReady": {
			reason: "With its kubeconfig kept fresh the cluster can be reached, and Flux is asked to apply its layer (the ControlPlane CRD): until it did, the cluster is Provisioning and not Ready (clouds wait on the phase).",
			req:    fntest.Request(xr, map[string]string{"shoot": fntest.ShootReady("cp-eu-de-1"), "kubeconfig": kubeconfigReady, "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig}),
			want: fntest.Response(`{"phase": "Provisioning", "clusterName": "shoot--c5c3--cp-eu-de-1",
			    "kubeconfig": {"name": "controlplane-cp-eu-de-1-kubeconfig", "namespace": "crossplane-system"}}`,
				fntest.Layer(map[string]*fnv1.Resource{"shoot": fntest.Composed(shoot, true), "kubeconfig": fntest.Composed(kubeconfig, true), "provider-config": fntest.Composed(providerConfig, true), "secrets-provider-config": fntest.Composed(secretsProviderConfig, true)}, cpAccess, false),
				fntest.ShootAvailable, fntest.AccessAvailable("controlplane-cp-eu-de-1"), fntest.LayerPending("controlplane-cp-eu-de-1")),
		},
		"LayerApplied": {
			reason: "Once Flux applied its layer, the cluster is Ready, and OpenStack clouds can place their control planes through the ProviderConfig.",
			req: fntest.Request(xr, map[string]string{"shoot": fntest.ShootReady("cp-eu-de-1"), "kubeconfig": kubeconfigReady, "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig,
				"layer": fntest.AppliedLayer(cpAccess, "main@sha1:abc")}),
			want: fntest.Response(`{"phase": "Ready", "clusterName": "shoot--c5c3--cp-eu-de-1",
			    "kubeconfig": {"name": "controlplane-cp-eu-de-1-kubeconfig", "namespace": "crossplane-system"}}`,
				fntest.Layer(map[string]*fnv1.Resource{"shoot": fntest.Composed(shoot, true), "kubeconfig": fntest.Composed(kubeconfig, true), "provider-config": fntest.Composed(providerConfig, true), "secrets-provider-config": fntest.Composed(secretsProviderConfig, true)}, cpAccess, true),
				fntest.ShootAvailable, fntest.AccessAvailable("controlplane-cp-eu-de-1"), fntest.LayerApplied("controlplane-cp-eu-de-1", "main@sha1:abc")),
		},
		"NotHighlyAvailable": {
			reason: "Without highAvailability the Shoot's control plane is not spread over zones, and one zone is enough.",
			req: fntest.Request(fntest.EditSpec(xr, func(s map[string]any) {
				s["highAvailability"] = false
				s["zones"] = []any{"eu-de-1a"}
			}), nil),
			want: fntest.Response(`{"phase": "Provisioning"}`, map[string]*fnv1.Resource{"shoot": fntest.Composed(fntest.Edit(shoot, func(m map[string]any) {
				delete(fntest.Map(m, "spec"), "controlPlane")
				worker(m)["zones"] = []any{"eu-de-1a"}
			}), false)}, fntest.ShootCreating, fntest.AccessNoShoot),
		},
		"MachinePool": {
			reason: "A machine pool restricts the workers to its servers through extraServerLabels.",
			req:    fntest.Request(fntest.EditSpec(xr, func(s map[string]any) { s["machinePool"] = "cp-eu-de-1" }), nil),
			want: fntest.Response(`{"phase": "Provisioning"}`, map[string]*fnv1.Resource{"shoot": fntest.Composed(fntest.Edit(shoot, func(m map[string]any) {
				fntest.Map(worker(m), "providerConfig")["extraServerLabels"] = map[string]any{"c5c3.io/machine-pool": "cp-eu-de-1"}
			}), false)}, fntest.ShootCreating, fntest.AccessNoShoot),
		},
		"Unclaimed": {
			reason: "A composite created without a claim is named after itself.",
			req: fntest.Request(fntest.Edit(xr, func(m map[string]any) {
				m["metadata"] = map[string]any{"name": "cp-lab"}
			}), nil),
			want: fntest.Response(`{"phase": "Provisioning"}`, map[string]*fnv1.Resource{"shoot": fntest.Composed(fntest.Edit(shoot, func(m map[string]any) {
				fntest.Map(m, "metadata")["name"] = "cp-lab"
				labels := map[string]any{"c5c3.io/pool": "cp-lab", "c5c3.io/pool-kind": "control-plane"}
				fntest.Map(m, "metadata")["labels"] = labels
				worker(m)["labels"] = labels
			}), false)}, fntest.ShootCreating, fntest.AccessNoShoot),
		},
		"NameLongerThanGardenerAllows": {
			reason: "The C5C3 docs' eu-de-1-control-plane is longer than Gardener allows beside project c5c3: its Shoot gets a derived name, recorded in status; the cluster keeps its name.",
			req: fntest.Request(fntest.Edit(xr, func(m map[string]any) {
				fntest.Map(m, "metadata", "labels")["crossplane.io/claim-name"] = "eu-de-1-control-plane"
			}), nil),
			want: fntest.Response(`{"phase": "Provisioning", "shootName": "eu-de-1-con-c1757"}`, map[string]*fnv1.Resource{"shoot": fntest.Composed(fntest.Edit(shoot, func(m map[string]any) {
				fntest.Map(m, "metadata")["name"] = "eu-de-1-con-c1757"
				labels := map[string]any{"c5c3.io/pool": "eu-de-1-control-plane", "c5c3.io/pool-kind": "control-plane"}
				fntest.Map(m, "metadata")["labels"] = labels
				worker(m)["labels"] = labels
			}), false)}, fntest.ShootCreating, fntest.AccessNoShoot),
		},
		"NameTooLong": {
			reason: "A claim name longer than a cluster's name may be is refused, naming the field and the limit.",
			req: fntest.Request(fntest.Edit(xr, func(m map[string]any) {
				fntest.Map(m, "metadata", "labels")["crossplane.io/claim-name"] = "eu-de-1-openstack-control-plane-for-everyone"
			}), nil),
			want: fntest.Fatal(`the claim's metadata.name "eu-de-1-openstack-control-plane-for-everyone" names the control-plane cluster: it must be a DNS label of at most 40 characters`),
		},
		"HighAvailabilityNeedsThreeZones": {
			reason: "highAvailability with fewer than 3 zones is refused, naming both fields.",
			req:    fntest.Request(fntest.EditSpec(xr, func(s map[string]any) { s["zones"] = []any{"eu-de-1a"} }), nil),
			want:   fntest.Fatal(`spec.zones names 1 zone(s) (eu-de-1a); spec.highAvailability needs at least 3 zones of region "eu-de-1"`),
		},
		"WorkersExceedMaxWorkers": {
			reason: "More workers than the cluster may grow to is refused.",
			req:    fntest.Request(fntest.EditSpec(xr, func(s map[string]any) { s["workers"] = 11 }), nil),
			want:   fntest.Fatal("spec.workers (11) must not exceed spec.maxWorkers (10)"),
		},
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &Function{log: logging.NewNopLogger()}
			got, err := f.RunFunction(context.Background(), tc.req)
			if err != nil {
				t.Fatalf("%s\nf.RunFunction(...): unexpected error: %v", tc.reason, err)
			}
			want := fntest.ClusterRun(tc.req, tc.want)
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("%s\nf.RunFunction(...): -want rsp, +got rsp:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRefusedShoot: Crossplane reports Gardener's refusal of the Shoot only
// in the composite's Synced condition. The function then withholds the
// Shoot, records the refusal and says it on the claim (ShootReady Refused,
// phase Failed, one Warning event), keeps saying it while nothing changed,
// and asks for the Shoot again once the claim changes or after ten minutes.
// Crossplane's own errors are not refusals.
func TestRefusedShoot(t *testing.T) {
	const gardenerMsg = `shoots.core.gardener.cloud "cp-eu-de-1" is forbidden: spec.provider.workers[0].zones[2]: Unsupported value: "eu-de-1d": supported values: "eu-de-1a", "eu-de-1b", "eu-de-1c"`
	withStatus := func(x string, status map[string]any) string {
		return fntest.Edit(x, func(m map[string]any) { m["status"] = status })
	}
	synced := func(msg string) map[string]any {
		return map[string]any{"conditions": []any{map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError",
			"lastTransitionTime": "2026-11-25T08:00:00Z", "message": "cannot compose resources: cannot apply composed resource \"shoot\": " + msg}}}
	}
	run := func(t *testing.T, x string) *fnv1.RunFunctionResponse {
		t.Helper()
		f := &Function{log: logging.NewNopLogger()}
		rsp, err := f.RunFunction(context.Background(), fntest.Request(x, nil))
		if err != nil {
			t.Fatal(err)
		}
		if msg := fntest.FatalOf(rsp); msg != "" {
			t.Fatalf("fatal: %s", msg)
		}
		return rsp
	}
	shootReady := func(rsp *fnv1.RunFunctionResponse) *fnv1.Condition {
		for _, c := range rsp.GetConditions() {
			if c.GetType() == "ShootReady" {
				return c
			}
		}
		return nil
	}
	composesShoot := func(rsp *fnv1.RunFunctionResponse) bool { _, ok := rsp.GetDesired().GetResources()["shoot"]; return ok }
	badZones := fntest.EditSpec(xr, func(s map[string]any) { s["zones"] = []any{"eu-de-1a", "eu-de-1b", "eu-de-1d"} })

	first := run(t, withStatus(badZones, synced(gardenerMsg)))
	if composesShoot(first) {
		t.Fatal("a refused Shoot is composed again at once")
	}
	if c := shootReady(first); c.GetReason() != "Refused" || c.GetMessage() != "Gardener refused the Shoot: "+gardenerMsg || c.GetTarget() != fnv1.Target_TARGET_COMPOSITE_AND_CLAIM {
		t.Fatalf("ShootReady = %v, want reason Refused with Gardener's message, for the claim", c)
	}
	if rs := first.GetResults(); len(rs) != 1 || rs[0].GetSeverity() != fnv1.Severity_SEVERITY_WARNING || rs[0].GetReason() != "Refused" {
		t.Fatalf("results = %v, want one Warning with reason Refused", rs)
	}
	status := first.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)
	if status["phase"] != "Failed" || status["shootRefusal"].(map[string]any)["message"] != gardenerMsg {
		t.Fatalf("status = %v, want phase Failed and the refusal recorded", status)
	}

	// The apply of the next run succeeds (no Shoot), so Synced is True.
	status["conditions"] = []any{map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": "2026-11-25T08:00:01Z"}}
	held := run(t, withStatus(badZones, status))
	if composesShoot(held) || shootReady(held).GetReason() != "Refused" || len(held.GetResults()) != 0 {
		t.Fatalf("while nothing changed the refusal must hold, quietly: shoot composed %v, ShootReady %v, results %v", composesShoot(held), shootReady(held), held.GetResults())
	}
	if !composesShoot(run(t, withStatus(xr, status))) {
		t.Error("a claim changed since the refusal must get its Shoot asked for again")
	}
	stale := fntest.Edit(withStatus(badZones, status), func(m map[string]any) {
		fntest.Map(m, "status", "shootRefusal")["refusedAt"] = time.Now().Add(-11 * time.Minute).UTC().Format(time.RFC3339)
	})
	if !composesShoot(run(t, stale)) {
		t.Error("a refusal older than ten minutes must be tried again")
	}
	for name, msg := range map[string]string{
		"Crossplane's RBAC":  `shoots.core.gardener.cloud "cp-eu-de-1" is forbidden: User "system:serviceaccount:crossplane-system:crossplane" cannot patch resource "shoots"`,
		"an API not serving": `the server is currently unable to handle the request`,
	} {
		if !composesShoot(run(t, withStatus(xr, synced(msg)))) {
			t.Errorf("%s is not Gardener refusing the Shoot: it must be composed", name)
		}
	}
}

// cpAccess is how the example control-plane cluster is reached.
var cpAccess = pool.Access{Kind: pool.KindControlPlane, Name: "cp-eu-de-1"}

// TestUnhealthyShootKeepsTheCluster: a running control-plane cluster whose
// Shoot turns unhealthy keeps its access and its layer: every cloud's
// objects in it go through that ProviderConfig, and its CRDs hold the
// clouds' ControlPlanes.
func TestUnhealthyShootKeepsTheCluster(t *testing.T) {
	observed := map[string]string{"shoot": fntest.ShootUnhealthy("cp-eu-de-1"), "kubeconfig": kubeconfigReady, "provider-config": providerConfig, "secrets-provider-config": secretsProviderConfig,
		"layer": fntest.AppliedLayer(cpAccess, "main@sha1:abc")}
	rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), fntest.Request(xr, observed))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"shoot", "kubeconfig", "provider-config", "secrets-provider-config", "layer", "layer-access"} {
		if _, ok := rsp.GetDesired().GetResources()[n]; !ok {
			t.Errorf("a running cluster whose Shoot is unhealthy stops composing %s: Crossplane would delete it", n)
		}
	}
	if p := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"].(map[string]any)["phase"]; p == "Ready" {
		t.Error("a cluster whose Shoot is unhealthy says phase Ready")
	}
}
