package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
)

// TestIntegrationSteadyStatePollsIssueNoTokens: once resources are Ready,
// the provider keeps polling them (drift detection) with the token of its
// cached session: the polls reach the cloud, Keystone issues no token.
func TestIntegrationSteadyStatePollsIssueNoTokens(t *testing.T) {
	h := withOpenStack(t)
	var mrs []resource.Managed
	for i, k := range kinds[:4] {
		mg := k.newMR(h.name(fmt.Sprintf("steady-%d", i)), "one")
		h.create(t, mg)
		mrs = append(mrs, mg)
	}
	for _, mg := range mrs {
		h.waitReady(t, mg)
	}
	before := openstack.ReadCounts()
	time.Sleep(4 * pollInterval)
	d := openstack.ReadCounts().Sub(before)
	t.Logf("over %s of steady state: %d API calls, %d tokens", 4*pollInterval, d.Requests, d.Tokens)
	if d.Requests == 0 {
		t.Fatal("no API calls: the resources were not polled, so the measurement says nothing")
	}
	if d.Tokens != 0 {
		t.Fatalf("steady-state polls issued %d Keystone tokens, want 0", d.Tokens)
	}
	for _, mg := range mrs {
		h.delete(t, mg)
	}
	for _, mg := range mrs {
		h.waitGone(t, mg)
	}
}
