package main

import (
	"fmt"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"

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
