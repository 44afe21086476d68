package main

import (
	"testing"

	"github.com/crossplane/function-sdk-go/logging"

	"github.com/c5c3/consumer-plane/internal/function/fntest"
)

// FuzzRunFunction feeds arbitrary specs to the function; go test runs the
// seeds (every example pool's spec), go test -fuzz=FuzzRunFunction explores.
func FuzzRunFunction(f *testing.F) {
	fntest.FuzzExamples(f, "infrastructure/*/pools/hypervisor/*.yaml", "XHypervisorCluster", &Function{log: logging.NewNopLogger()})
}
