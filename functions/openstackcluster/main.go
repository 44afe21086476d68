// Command function-openstack-cluster is the composition function of the
// XOpenStackCluster composite: a tenant's OpenStack cloud whose control plane
// runs in the region's control-plane cluster and whose compute and storage
// come from shared or dedicated pools, isolated per tenant.
package main

import (
	"github.com/alecthomas/kong"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/c5c3/consumer-plane/internal/function"
)

func main() {
	cli := &function.CLI{}
	ctx := kong.Parse(cli, kong.Description("Composes XOpenStackClusters: a tenant's OpenStack cloud on CobaltCore pools."))
	ctx.FatalIfErrorf(cli.Serve(func(log logging.Logger) fnv1.FunctionRunnerServiceServer {
		return &Function{log: log}
	}))
}
