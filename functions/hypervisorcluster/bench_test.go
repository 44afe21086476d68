package main

import (
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/c5c3/consumer-plane/internal/function/fntest"
)

// BenchmarkRunFunction measures a first reconcile of every example pool,
// beside a no-op function's RunFunction as the floor (docs/benchmarks.md).
func BenchmarkRunFunction(b *testing.B) {
	fntest.BenchExamples(b, "infrastructure/*/hypervisor-pools/*.yaml", "XHypervisorCluster", &Function{log: logging.NewNopLogger()})
}

// BenchmarkRunFunction1000Nodes measures a 1,000-node pool whose Shoot and
// access are ready (the longest path through the function), beside a 20-node
// pool on the same path and the no-op floor.
func BenchmarkRunFunction1000Nodes(b *testing.B) {
	observed := map[string]string{"shoot": fntest.ShootReady("hv-pool-a"), "kubeconfig": observedKubeconfig("True"), "provider-config": providerConfig}
	pool := func(nodes int) *fnv1.RunFunctionRequest {
		return fntest.Request(fntest.EditSpec(xr, func(s map[string]any) {
			s["workers"] = nodes
			s["maxWorkers"] = nodes
		}), observed)
	}
	fn := &Function{log: logging.NewNopLogger()}
	b.Run("noop-floor", func(b *testing.B) { fntest.Bench(b, fntest.Noop{}, pool(1000)) })
	b.Run("20-node-pool", func(b *testing.B) { fntest.Bench(b, fn, pool(20)) })
	b.Run("1000-node-pool", func(b *testing.B) { fntest.Bench(b, fn, pool(1000)) })
}
