package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/crossplane/function-sdk-go/logging"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/consumer-plane/internal/function/fntest"
)

// FuzzRunFunction feeds arbitrary specs to the function; go test runs the
// seeds (every example claim's spec), go test -fuzz=FuzzRunFunction explores.
func FuzzRunFunction(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "infrastructure/eu-de-1/storage-pools/*.yaml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no example claims to seed from: %v", err)
	}
	seeds := []string{`{}`, `{"workers": -1, "maxWorkers": 0}`, `{"zones": "eu-de-1a"}`, `{"name": 42}`}
	for _, file := range files {
		b, err := os.ReadFile(file) //nolint:gosec // test data
		if err != nil {
			f.Fatal(err)
		}
		doc := map[string]any{}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, fntest.SpecOf(doc))
	}
	fntest.FuzzSpec(f, "crossplane.c5c3.io/v1alpha1", "XStorageCluster", &Function{log: logging.NewNopLogger()}, seeds...)
}
