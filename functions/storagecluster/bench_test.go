package main

import (
	"testing"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/c5c3/consumer-plane/internal/function/fntest"
)

// BenchmarkRunFunction measures a first reconcile of every example pool,
// beside a no-op function's RunFunction as the floor (docs/benchmarks.md).
func BenchmarkRunFunction(b *testing.B) {
	fntest.BenchExamples(b, "infrastructure/*/pools/storage/*.yaml", "XStorageCluster", &Function{log: logging.NewNopLogger()})
}
