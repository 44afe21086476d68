// Command function-storage-cluster is the composition function of the
// XStorageCluster composite: it composes the storage pool's Gardener Shoot,
// then access to it, then the pool's Rook CephCluster inside it.
package main

import (
	"github.com/alecthomas/kong"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/c5c3/consumer-plane/internal/function"
)

func main() {
	cli := &function.CLI{}
	ctx := kong.Parse(cli, kong.Description("Composes XStorageClusters: a Gardener Shoot of Ceph storage nodes on IronCore bare metal with a Rook CephCluster."))
	ctx.FatalIfErrorf(cli.Serve(func(log logging.Logger) fnv1.FunctionRunnerServiceServer {
		return &Function{log: log}
	}))
}
