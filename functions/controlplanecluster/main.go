// Command function-controlplane-cluster is the composition function of the
// XControlPlaneCluster composite: it composes the highly available Gardener
// Shoot that hosts a region's OpenStack control planes, and once it is ready,
// the objects that let later compositions place objects in it.
package main

import (
	"github.com/alecthomas/kong"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/c5c3/consumer-plane/internal/function"
)

func main() {
	cli := &function.CLI{}
	ctx := kong.Parse(cli, kong.Description("Composes XControlPlaneClusters: the HA Gardener Shoot hosting a region's OpenStack control planes."))
	ctx.FatalIfErrorf(cli.Serve(func(log logging.Logger) fnv1.FunctionRunnerServiceServer {
		return &Function{log: log}
	}))
}
