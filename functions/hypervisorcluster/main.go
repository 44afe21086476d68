// Command function-hypervisor-cluster is the composition function of the
// XHypervisorCluster composite: it composes the Gardener Shoot whose workers
// are the pool's KVM hypervisors on IronCore bare metal.
package main

import (
	"github.com/alecthomas/kong"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/c5c3/consumer-plane/internal/function"
)

func main() {
	cli := &function.CLI{}
	ctx := kong.Parse(cli, kong.Description("Composes XHypervisorClusters: a Gardener Shoot of KVM hypervisors on IronCore bare metal."))
	ctx.FatalIfErrorf(cli.Serve(func(log logging.Logger) fnv1.FunctionRunnerServiceServer {
		return &Function{log: log}
	}))
}
