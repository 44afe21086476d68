package main

import (
	"fmt"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/c5c3/consumer-plane/internal/function/fntest"
)

// BenchmarkRunFunction measures a reconcile of a ready cloud that consumes
// 10 hypervisor pools and 5 storage pools which 50 other clouds also
// consume, beside a no-op function's RunFunction as the floor, in one run
// (docs/benchmarks.md).
func BenchmarkRunFunction(b *testing.B) {
	w := allReady()
	hvs, sts := []any{}, []any{}
	for i := range 10 {
		name := fmt.Sprintf("hv-pool-%02d", i)
		w.hv = append(w.hv, hvPool(name, "eu-de-1", 600, "Ready"))
		hvs = append(hvs, map[string]any{"name": name, "nodes": 10})
	}
	for i := range 5 {
		name := fmt.Sprintf("st-pool-%02d", i)
		w.st = append(w.st, stPool(name, "eu-de-1", "Ready"))
		sts = append(sts, name)
	}
	consume := func(s map[string]any) { setPools(s, hvs...); s["storageClusters"] = sts }
	holds := map[string]int{}
	for _, h := range hvs {
		holds[h.(map[string]any)["name"].(string)] = 10
	}
	for i := range 50 {
		w.clouds = append(w.clouds, cloudXR(fmt.Sprintf("tenant-%02d-prod", i), fmt.Sprintf("tenant-%02d", i), "2026-11-01T00:00:00Z", spec(consume), "Ready", holds))
	}
	req := w.request(teamA(consume))
	b.Run("noop-floor", func(b *testing.B) { fntest.Bench(b, fntest.Noop{}, req) })
	b.Run("cloud-10-hypervisor-5-storage-pools-50-other-clouds", func(b *testing.B) {
		fntest.Bench(b, &Function{log: logging.NewNopLogger()}, req)
	})
}

// Regions of the benchmark landscape.
var benchRegions = []string{"eu-de-1", "eu-de-2", "eu-nl-1", "us-east-1", "us-west-1"}

// Pools of each region: 200 in all.
const (
	benchHypervisorPools = 32
	benchStoragePools    = 8
)

// benchPool names the i-th pool of a kind in a region; the measured
// cloud's pools (eu-de-1's first) are the tests' hv-pool-a and st-pool-a,
// whose composed resources allReady observes.
func benchPool(kind, region string, i int) string {
	if region == "eu-de-1" && i == 0 {
		return kind + "-pool-a"
	}
	return fmt.Sprintf("%s-%s-%02d", kind, region, i)
}

// BenchmarkLandscape measures the reconcile of a ready cloud in landscapes
// of 50, 500 and 5,000 clouds over 200 pools in 5 regions: each cloud
// consumes one of its region's 32 hypervisor pools and one of its 8
// storage pools, so at 5,000 clouds about 30 others share its hypervisor
// pool. Each size runs beside the no-op floor given the same request, and
// reports the request's size (docs/benchmarks.md).
//
// The request holds what Crossplane supplies for the cloud's requirements,
// answered from the whole landscape as core's fetcher answers them: its
// pools, whose status holds every cloud's share (as function-hypervisor-
// cluster decides them), and its control-plane cluster.
func BenchmarkLandscape(b *testing.B) {
	for _, clouds := range []int{50, 500, 5000} {
		fntest.BenchSized(b, fmt.Sprintf("clouds=%d", clouds), &Function{log: logging.NewNopLogger()}, landscapeRequest(clouds))
	}
}

// landscapeRequest is the request for team-a's ready cloud, which holds 20
// nodes of hv-pool-a, in a landscape of n other clouds holding 2 nodes each.
func landscapeRequest(n int) *fnv1.RunFunctionRequest {
	shares := map[string][]any{"hv-pool-a": {map[string]any{"cloud": "team-a-prod-7xk2p", "claim": "team-a/team-a-prod-7xk2p", "asked": 20, "allocated": 20}}}
	for i := range n {
		r := benchRegions[i%len(benchRegions)]
		hv := benchPool("hv", r, (i/len(benchRegions))%benchHypervisorPools)
		name := fmt.Sprintf("tenant-%04d-prod", i)
		shares[hv] = append(shares[hv], map[string]any{"cloud": name, "claim": fmt.Sprintf("tenant-%04d/%s", i, name), "asked": 2, "allocated": 2})
	}
	w := allReady()
	w.hv, w.st, w.cp, w.undecided = nil, nil, nil, true
	for _, r := range benchRegions {
		for i := range benchHypervisorPools {
			name := benchPool("hv", r, i)
			w.hv = append(w.hv, fntest.Edit(hvPool(name, r, 1000, "Ready"), func(m map[string]any) {
				allocated := 0
				for _, s := range shares[name] {
					allocated += s.(map[string]any)["allocated"].(int)
				}
				fntest.Map(m, "status")["shares"], fntest.Map(m, "status")["allocatedNodes"] = shares[name], allocated
			}))
		}
		for i := range benchStoragePools {
			w.st = append(w.st, stPool(benchPool("st", r, i), r, "Ready"))
		}
		w.cp = append(w.cp, cpCluster("cp-"+r, r, "Ready"))
	}
	return w.request(cloudXR("team-a-prod-7xk2p", "team-a", "2026-11-10T00:00:00Z", spec(), "Ready", map[string]int{"hv-pool-a": 20}))
}
