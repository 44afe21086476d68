package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/c5c3/consumer-plane/internal/function/fntest"
)

// BenchmarkRunFunction measures a first reconcile of every example pool,
// beside a no-op function's RunFunction as the floor (docs/benchmarks.md).
func BenchmarkRunFunction(b *testing.B) {
	fntest.BenchExamples(b, "infrastructure/*/pools/hypervisor/*.yaml", "XHypervisorCluster", &Function{log: logging.NewNopLogger()})
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

// BenchmarkShares measures a ready 1,000-node pool deciding the shares of
// 30, 300 and 3,000 clouds (one new request among them), each beside the
// no-op floor given the same request, reporting the request's size: a
// pool's reconcile reads the records of the clouds on it, so its cost
// grows with them, not with the landscape (docs/benchmarks.md).
func BenchmarkShares(b *testing.B) {
	observed := map[string]string{"shoot": fntest.ShootReady("hv-pool-a"), "kubeconfig": observedKubeconfig("True"), "provider-config": providerConfig}
	for _, n := range []int{30, 300, 3000} {
		var given []any
		var records []string
		for i := range n {
			cloud := fmt.Sprintf("tenant-%04d-x1", i)
			a := map[string]string{"c5c3.io/cloud": fmt.Sprintf("tenant-%04d/prod", i), "c5c3.io/asked-nodes": "0", "c5c3.io/allocated-nodes": "0"}
			if i == n-1 {
				a["c5c3.io/asked-nodes"], a["c5c3.io/asked-since"] = "1", "2026-11-25T00:00:00Z"
			} else {
				given = append(given, map[string]any{"cloud": cloud, "claim": a["c5c3.io/cloud"], "asked": 0, "allocated": 0})
			}
			records = append(records, usage(cloud, a))
		}
		x := fntest.EditSpec(xr, func(s map[string]any) { s["workers"], s["maxWorkers"] = 1000, 1000 })
		x = fntest.Edit(x, func(m map[string]any) { m["status"] = map[string]any{"shares": given} })
		req := fntest.WithRequired(fntest.Request(x, observed), "shares", false, records...)
		fntest.BenchSized(b, fmt.Sprintf("clouds=%d", n), &Function{log: logging.NewNopLogger()}, req)
	}
}

// BenchmarkNodeBinding measures a ready pool of 1,000 nodes in 3 zones
// whose agents report them, shared by 200 clouds of 5 nodes each, every
// share named from the run before (the steady state of a pool reconcile:
// its inventory's nodes, the clouds' records and its status's node lists
// all in the request), beside the no-op floor, reporting the request's
// size (#38, docs/benchmarks.md).
func BenchmarkNodeBinding(b *testing.B) {
	const nodes, clouds, each = 1000, 200, 5
	zones := []string{"eu-de-1a", "eu-de-1b", "eu-de-1c"}
	inventory := make([]map[string]any, 0, nodes)
	for i := range nodes {
		inventory = append(inventory, map[string]any{"name": fmt.Sprintf("node-%04d", i), "zone": zones[i%len(zones)], "inService": true, "instances": i % 7})
	}
	var shares []any
	var records []string
	for c := range clouds {
		cloud := fmt.Sprintf("tenant-%03d-x1", c)
		held := make([]any, 0, each)
		for n := range each {
			held = append(held, fmt.Sprintf("node-%04d", c*each+n))
		}
		a := map[string]string{"c5c3.io/cloud": fmt.Sprintf("tenant-%03d/prod", c), "c5c3.io/asked-nodes": fmt.Sprint(each), "c5c3.io/allocated-nodes": fmt.Sprint(each)}
		shares = append(shares, map[string]any{"cloud": cloud, "claim": a["c5c3.io/cloud"], "asked": each, "allocated": each, "nodes": held})
		records = append(records, usage(cloud, a))
	}
	at, err := json.Marshal(map[string]any{"hypervisors": nodes, "inService": nodes, "notReady": 0, "instances": 0, "nodes": inventory,
		"capacity": map[string]any{"vcpus": 64 * nodes, "memoryGiB": 512 * nodes}, "effectiveCapacity": map[string]any{"vcpus": 64 * nodes, "memoryGiB": 512 * nodes}})
	if err != nil {
		b.Fatal(err)
	}
	observed := withInventory(map[string]string{"shoot": fntest.ShootReady("hv-pool-a"), "kubeconfig": observedKubeconfig("True"), "provider-config": providerConfig,
		"secrets-provider-config": secretsProviderConfig, "hypervisors": observedHypervisors("True", "True", string(at))})
	x := fntest.EditSpec(xr, func(s map[string]any) { s["workers"], s["maxWorkers"] = nodes, nodes })
	x = fntest.Edit(x, func(m map[string]any) { m["status"] = map[string]any{"shares": shares} })
	req := fntest.WithRequired(fntest.Request(x, observed), "cloud-profile", false, cloudProfile("baremetal-kvm"))
	req = fntest.WithRequired(req, "shares", false, records...)
	// The steady state: every share named in full, nothing moves.
	rsp, err := (&Function{log: logging.NewNopLogger()}).RunFunction(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range rsp.GetConditions() {
		if c.GetType() == conditionNodesBound && c.GetStatus() != fnv1.Status_STATUS_CONDITION_TRUE {
			b.Fatalf("NodesBound is %v: %s", c.GetStatus(), c.GetMessage())
		}
	}
	fntest.BenchSized(b, fmt.Sprintf("nodes=%d,clouds=%d", nodes, clouds), &Function{log: logging.NewNopLogger()}, req)
}
