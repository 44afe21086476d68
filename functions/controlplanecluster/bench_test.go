package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/c5c3/consumer-plane/internal/function/fntest"
)

// BenchmarkRunFunction measures a first reconcile of every example pool,
// beside a no-op function's RunFunction as the floor (docs/benchmarks.md).
func BenchmarkRunFunction(b *testing.B) {
	fn := &Function{log: logging.NewNopLogger()}
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "infrastructure/*/control-plane/*.yaml"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no example claims: %v", err)
	}
	b.Run("noop-floor", func(b *testing.B) {
		fntest.Bench(b, fntest.Noop{}, fntest.Request(xr, nil))
	})
	for _, file := range files {
		xr, err := fntest.CompositeOf(file, "XControlPlaneCluster")
		if err != nil {
			b.Fatal(err)
		}
		region := filepath.Base(filepath.Dir(filepath.Dir(file)))
		b.Run(region+"/"+strings.TrimSuffix(filepath.Base(file), ".yaml"), func(b *testing.B) {
			fntest.Bench(b, fn, fntest.Request(xr, nil))
		})
	}
}
