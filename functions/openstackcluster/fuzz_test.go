package main

import (
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/c5c3/consumer-plane/internal/function/fntest"
)

// FuzzRunFunction feeds arbitrary specs to the function with the eu-de-1
// landscape supplied, so that they reach the pool policy; go test runs the
// seeds (every example cloud's spec), go test -fuzz=FuzzRunFunction explores.
func FuzzRunFunction(f *testing.F) {
	w := allReady()
	w.clouds = []string{cloudXR("team-b-staging-1", "team-b", "2026-11-02T00:00:00Z", spec(), "Ready", map[string]int{"hv-pool-a": 5})}
	fntest.FuzzExamples(f, "tenants/*/openstack-clusters/*.yaml", "XOpenStackCluster", &Function{log: logging.NewNopLogger()},
		func(req *fnv1.RunFunctionRequest) {
			full := w.request(`{"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "XOpenStackCluster", "metadata": {"name": "fuzz"}}`)
			req.Input, req.RequiredResources = full.GetInput(), full.GetRequiredResources()
			req.Observed.Resources = full.GetObserved().GetResources()
		})
}
