// Package function holds what every CobaltCore composition function shares:
// its command line, and typed access to the request and response.
package function

import (
	"time"

	function "github.com/crossplane/function-sdk-go"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// CLI is the command line of a composition function, as Crossplane's function
// runtime calls it (see function-template-go).
type CLI struct {
	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	Network        string `default:"tcp"   help:"Network on which to listen for gRPC connections."`
	Address        string `default:":9443" help:"Address at which to listen for gRPC connections."`
	MetricsAddress string `default:":8080" help:"Address at which to serve Prometheus metrics, plain HTTP without authentication (the shipped NetworkPolicy admits only scrapers); empty disables them."`
	TLSCertsDir    string `env:"TLS_SERVER_CERTS_DIR" help:"Directory containing server certs (tls.key, tls.crt) and the CA used to verify client certificates (ca.crt)."`
	Insecure       bool   `help:"Run without mTLS credentials. If you supply this flag --tls-server-certs-dir will be ignored."`
	// A request carries what the function requires: for a cloud, its own
	// pools (BenchmarkLandscape: 17 KB at 5,000 clouds); for a hypervisor
	// pool, the share records of the clouds on it (about 2 KB each, so
	// gRPC's 4 MiB default would hold some 2,000). Responses stay bounded
	// by core's 4 MiB client default.
	MaxRecvMessageSize int `default:"16" help:"Maximum size of a request in MiB; from 75% of it the function warns on the composite, naming the request's largest parts."`
}

// Serve runs the function built by newFunction until the server stops.
func (c *CLI) Serve(newFunction func(logging.Logger) fnv1.FunctionRunnerServiceServer) error {
	log, err := function.NewLogger(c.Debug)
	if err != nil {
		return err
	}
	limit := c.MaxRecvMessageSize * 1024 * 1024
	paced := paceGuard{FunctionRunnerServiceServer: shardGuard{newFunction(log)}, now: time.Now}
	guarded := secretGuard{FunctionRunnerServiceServer: paced, log: log}
	return function.Serve(sizeGuard{FunctionRunnerServiceServer: guarded, limit: limit, log: log},
		function.Listen(c.Network, c.Address),
		function.WithMetricsServer(c.MetricsAddress),
		function.MTLSCertificates(c.TLSCertsDir),
		function.Insecure(c.Insecure),
		function.MaxRecvMessageSize(limit))
}
