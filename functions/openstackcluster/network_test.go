package main

import (
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
)

// TestNetwork checks what the cloud gets in its OVN: the ProviderConfig from
// the published endpoints, the pool's ChassisSet and the HA chassis group
// of its chassis, and what a wrong or missing ConfigMap does.
func TestNetwork(t *testing.T) {
	t.Run("endpoints, chassis set and ranked gateway group", func(t *testing.T) {
		w := allReady()
		w.chassisRegistered(map[string]any{"name": "node-b"}, map[string]any{"name": "node-c", "gateway": true}, map[string]any{"name": "node-a"})
		rsp := run(t, w.request(teamA()))
		mustNotFail(t, rsp)

		pc := desired(t, rsp, "ovn-provider-config")
		if diff := cmp.Diff([]any{"tcp:10.0.0.1:6641", "tcp:10.0.0.2:6641", "tcp:10.0.0.3:6641"}, get(pc, "spec", "northbound", "endpoints")); diff != "" {
			t.Errorf("northbound endpoints (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]any{"tcp:10.0.0.1:6642"}, get(pc, "spec", "southbound", "endpoints")); diff != "" {
			t.Errorf("southbound endpoints (-want +got):\n%s", diff)
		}
		if got := get(pc, "spec", "tlsSecretRef"); got != nil {
			t.Errorf("tlsSecretRef = %v for tcp: endpoints", got)
		}

		cs := desired(t, rsp, "chassis-hv-pool-a")
		if diff := cmp.Diff([]any{"hv-pool-a"}, get(cs, "spec", "forProvider", "availabilityZones")); diff != "" {
			t.Errorf("ChassisSet zones (-want +got):\n%s", diff)
		}
		if got := get(cs, "spec", "providerConfigRef", "name"); got != "team-a-prod-7xk2p" {
			t.Errorf("ChassisSet providerConfigRef = %v", got)
		}

		g := desired(t, rsp, "gateways-hv-pool-a")
		want := []any{
			map[string]any{"name": "node-c", "priority": float64(32767)},
			map[string]any{"name": "node-a", "priority": float64(32766)},
			map[string]any{"name": "node-b", "priority": float64(32765)},
		}
		if diff := cmp.Diff(want, get(g, "spec", "forProvider", "chassis")); diff != "" {
			t.Errorf("members: gateway chassis first, then by name (-want +got):\n%s", diff)
		}
		if got := get(g, "spec", "forProvider", "name"); got != "team-a-prod-7xk2p-hv-pool-a" {
			t.Errorf("group name = %v", got)
		}
		if got := get(g, "spec", "forProvider", "externalIDs", "c5c3.io_pool"); got != "hv-pool-a" {
			t.Errorf("externalIDs c5c3.io_pool = %v", got)
		}

		st := status(rsp)
		if diff := cmp.Diff([]any{"node-c", "node-a", "node-b"}, get(st, "network", "gateways", 0, "chassis")); diff != "" {
			t.Errorf("status.network.gateways[0].chassis (-want +got):\n%s", diff)
		}
		if got := get(st, "network", "gateways", 0, "status"); got != "Ready" {
			t.Errorf("status.network.gateways[0].status = %v", got)
		}
		if got := get(st, "network", "northbound", 2); got != "tcp:10.0.0.3:6641" {
			t.Errorf("status.network.northbound[2] = %v", got)
		}
	})

	t.Run("members are capped at what a group takes", func(t *testing.T) {
		w := allReady()
		var many []map[string]any
		for i := range 70 {
			many = append(many, map[string]any{"name": "node-" + string(rune('a'+i/26)) + string(rune('a'+i%26))})
		}
		w.chassisRegistered(many...)
		rsp := run(t, w.request(teamA()))
		mustNotFail(t, rsp)
		members, _ := get(desired(t, rsp, "gateways-hv-pool-a"), "spec", "forProvider", "chassis").([]any)
		if len(members) != 64 || get(members[63], "priority") != float64(32767-63) {
			t.Errorf("got %d members (last %v), want 64 counting down from 32767", len(members), members[len(members)-1])
		}
	})

	t.Run("a group whose chassis all went keeps its members", func(t *testing.T) {
		w := allReady()
		w.chassisRegistered()
		w.observed["gateways-hv-pool-a"] = `{"apiVersion": "` + ovn + `", "kind": "HAChassisGroup", "metadata": {"name": "team-a-prod-7xk2p-hv-pool-a"},
			"spec": {"forProvider": {"name": "team-a-prod-7xk2p-hv-pool-a", "chassis": [{"name": "node-a", "priority": 32767}]}},
			"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-22T08:00:00Z"}]}}`
		rsp := run(t, w.request(teamA()))
		mustNotFail(t, rsp)
		if diff := cmp.Diff([]any{map[string]any{"name": "node-a", "priority": float64(32767)}}, get(desired(t, rsp, "gateways-hv-pool-a"), "spec", "forProvider", "chassis")); diff != "" {
			t.Errorf("members (-want +got):\n%s", diff)
		}
	})

	bad := map[string]struct {
		data map[string]any
		msg  string
	}{
		"southbound missing": {map[string]any{"northbound": "tcp:10.0.0.1:6641"},
			"data.southbound is missing: it lists the database's ovsdb endpoints (tcp:HOST:PORT, ssl:HOST:PORT or unix:PATH), separated by commas"},
		"not an endpoint": {map[string]any{"northbound": "10.0.0.1:6641", "southbound": "tcp:10.0.0.1:6642"},
			`data.northbound: "10.0.0.1:6641" is not an ovsdb endpoint: use tcp:HOST:PORT, ssl:HOST:PORT or unix:PATH`},
		"too many members": {map[string]any{"northbound": strings.Repeat("tcp:h:1 ", 8), "southbound": "tcp:10.0.0.1:6642"},
			"data.northbound lists 8 endpoints: at most 7 (the members of one Raft cluster)"},
	}
	for name, b := range bad {
		t.Run("a wrong ConfigMap is named and composes nothing: "+name, func(t *testing.T) {
			w := allReady()
			for _, k := range []string{"ovn-provider-config", "chassis-hv-pool-a", "gateways-hv-pool-a"} {
				delete(w.observed, k)
			}
			w.ovnPublished(b.data)
			rsp := run(t, w.request(teamA()))
			mustNotFail(t, rsp)
			if _, ok := rsp.GetDesired().GetResources()["ovn-provider-config"]; ok {
				t.Errorf("composed an OVN ProviderConfig from a wrong ConfigMap")
			}
			want := "ConfigMap openstack-team-a-prod-7xk2p/ovn-databases in control-plane cluster cp-eu-de-1: " + b.msg
			if c := condition(rsp, conditionNetworkReady); c.GetStatus() != fnv1.Status_STATUS_CONDITION_FALSE || c.GetMessage() != want {
				t.Errorf("NetworkReady = %v %q\nwant False %q", c.GetStatus(), c.GetMessage(), want)
			}
			if got := get(status(rsp), "phase"); got != "Provisioning" {
				t.Errorf("phase = %v, want Provisioning", got)
			}
		})
	}

	t.Run("a ConfigMap gone wrong later keeps the ProviderConfig's endpoints", func(t *testing.T) {
		w := allReady()
		w.ovnPublished(map[string]any{"northbound": "nonsense"})
		xr := cloudXR("team-a-prod-7xk2p", "team-a", "2026-11-10T00:00:00Z", spec(), "Ready", map[string]int{"hv-pool-a": 20})
		rsp := run(t, w.request(xr))
		mustNotFail(t, rsp)
		if diff := cmp.Diff([]any{"tcp:10.0.0.1:6641"}, get(desired(t, rsp, "ovn-provider-config"), "spec", "northbound", "endpoints")); diff != "" {
			t.Errorf("northbound endpoints (-want +got):\n%s", diff)
		}
		if _, ok := rsp.GetDesired().GetResources()["gateways-hv-pool-a"]; !ok {
			t.Errorf("the gateway group is no longer desired (Crossplane would delete it)")
		}
		if got := get(status(rsp), "phase"); got != "Degraded" {
			t.Errorf("phase = %v, want Degraded", got)
		}
		if m := condition(rsp, conditionNetworkReady).GetMessage(); !strings.Contains(m, "keeping the endpoints the ProviderConfig has") {
			t.Errorf("NetworkReady message = %q", m)
		}
	})

	t.Run("ssl endpoints read the client certificate first", func(t *testing.T) {
		w := allReady()
		delete(w.observed, "ovn-provider-config")
		w.ovnPublished(map[string]any{"northbound": "ssl:ovn-nb.example:6641", "southbound": "ssl:ovn-sb.example:6642"})
		rsp := run(t, w.request(teamA()))
		mustNotFail(t, rsp)
		if _, ok := rsp.GetDesired().GetResources()["ovn-provider-config"]; ok {
			t.Errorf("composed the ProviderConfig before the client certificate was read")
		}
		o := desired(t, rsp, "ovn-client-tls")
		if got := get(manifestOf(o), "metadata", "name"); got != "ovn-client-tls" {
			t.Errorf("reads Secret %v", got)
		}
		if got := get(o, "spec", "writeConnectionSecretToRef", "name"); got != "team-a-prod-7xk2p-ovn-client-tls" {
			t.Errorf("publishes to %v", got)
		}

		w.observed["ovn-client-tls"] = readyObject("team-a-prod-7xk2p-ovn-client-tls", nil)
		rsp = run(t, w.request(teamA()))
		mustNotFail(t, rsp)
		if got := get(desired(t, rsp, "ovn-provider-config"), "spec", "tlsSecretRef", "name"); got != "team-a-prod-7xk2p-ovn-client-tls" {
			t.Errorf("tlsSecretRef.name = %v", got)
		}

		// The Secret's Object turning unready later keeps what exists.
		w.observed["ovn-client-tls"] = `{"apiVersion": "kubernetes.crossplane.io/v1alpha2", "kind": "Object", "metadata": {"name": "team-a-prod-7xk2p-ovn-client-tls"}}`
		w.observed["ovn-provider-config"] = `{"apiVersion": "` + ovn + `", "kind": "ProviderConfig", "metadata": {"name": "team-a-prod-7xk2p"}}`
		rsp = run(t, w.request(teamA()))
		mustNotFail(t, rsp)
		for _, k := range []string{"ovn-provider-config", "chassis-hv-pool-a", "gateways-hv-pool-a"} {
			if _, ok := rsp.GetDesired().GetResources()[k]; !ok {
				t.Errorf("%s is no longer desired while the client certificate's Object is unready (Crossplane would delete it)", k)
			}
		}
		if m := condition(rsp, conditionNetworkReady).GetMessage(); !strings.Contains(m, "waiting for the OVN client certificate Secret openstack-team-a-prod-7xk2p/ovn-client-tls") {
			t.Errorf("NetworkReady message = %q", m)
		}
	})

	t.Run("without Neutron the cloud gets no OVN objects", func(t *testing.T) {
		w := allReady()
		for _, k := range []string{"ovn-databases", "ovn-provider-config", "chassis-hv-pool-a", "gateways-hv-pool-a", "network-quota"} {
			delete(w.observed, k)
		}
		xr := cloudXR("team-a-prod-7xk2p", "team-a", "2026-11-10T00:00:00Z", spec(func(s map[string]any) {
			s["services"] = map[string]any{"nova": true, "neutron": false, "cinder": true, "glance": true, "horizon": true}
		}), "", map[string]int{"hv-pool-a": 20})
		rsp := run(t, w.request(xr))
		mustNotFail(t, rsp)
		for _, n := range resourceNames(rsp) {
			if strings.HasPrefix(n, "ovn-") || strings.HasPrefix(n, "chassis-") || strings.HasPrefix(n, "gateways-") {
				t.Errorf("composed %s without Neutron", n)
			}
		}
		if c := condition(rsp, conditionNetworkReady); c != nil {
			t.Errorf("NetworkReady set without Neutron: %v", c)
		}
		if got := get(status(rsp), "phase"); got != "Ready" {
			t.Errorf("phase = %v, want Ready", got)
		}
	})
}
