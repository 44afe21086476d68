//go:build !ceph

package integration

import (
	"os"
	"testing"
)

// TestIntegrationCeph stands for the Ceph tests (ceph_test.go), which need
// librados and are compiled only with -tags ceph,pacific: make
// test-integration passes them.
func TestIntegrationCeph(t *testing.T) {
	msg := "the Ceph tests need -tags ceph,pacific and librados-dev: run `make test-integration`"
	if os.Getenv("REQUIRE_INTEGRATION") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
