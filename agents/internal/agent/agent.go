// Package agent holds what every node agent shares: its flags (which node it
// runs on, where it serves metrics and probes), a controller-runtime manager
// whose cache sees only the node's own objects, and the publishing helper
// that writes an agent's status without clobbering anyone else's fields.
package agent

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/c5c3/consumer-plane/internal/securemetrics"
)

// Options are the flags every agent takes.
type Options struct {
	// Node is the Kubernetes node the agent runs on (the DaemonSet passes
	// spec.nodeName as NODE_NAME); the agent reads and writes only that
	// node's objects.
	Node string
	// Metrics serves Prometheus metrics at /metrics, over HTTPS to callers
	// allowed to get /metrics unless --metrics-insecure.
	Metrics securemetrics.Flags
	// ProbeAddr serves /healthz and /readyz (plain HTTP: the kubelet
	// probes them, and they say only "ok"). "0" turns it off.
	ProbeAddr string
}

// Bind registers the flags on fs.
func (o *Options) Bind(fs *flag.FlagSet) {
	fs.StringVar(&o.Node, "node-name", os.Getenv("NODE_NAME"), "The node this agent runs on (default $NODE_NAME).")
	o.Metrics.Bind(fs, ":8080")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "Where to serve /healthz and /readyz; 0 turns them off.")
}

// Validate says what is missing.
func (o *Options) Validate() error {
	if o.Node == "" {
		return errors.New("--node-name (or $NODE_NAME) must name the node this agent runs on")
	}
	return nil
}

// NewManager returns a manager whose cache holds, for each of the given
// cluster-scoped types, only the object named after the node: an agent
// never lists (or is allowed to list) its neighbours' objects.
func NewManager(o Options, scheme *runtime.Scheme, own ...client.Object) (manager.Manager, error) {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("cannot find a kubeconfig: %w", err)
	}
	return NewManagerFor(cfg, o, scheme, own...)
}

// NewManagerFor is NewManager with an explicit REST config (tests).
func NewManagerFor(cfg *rest.Config, o Options, scheme *runtime.Scheme, own ...client.Object) (manager.Manager, error) {
	return ctrl.NewManager(cfg, ManagerOptions(o, scheme, own...))
}

// ManagerOptions are the manager options NewManager uses, for an agent that
// adds its own (the storage agent's leader election).
func ManagerOptions(o Options, scheme *runtime.Scheme, own ...client.Object) ctrl.Options {
	byObject := map[client.Object]cache.ByObject{}
	for _, obj := range own {
		byObject[obj] = cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", o.Node)}
	}
	return ctrl.Options{
		Scheme:                 scheme,
		Metrics:                o.Metrics.Options(),
		HealthProbeBindAddress: o.ProbeAddr,
		Cache:                  cache.Options{ByObject: byObject},
	}
}

// Runnable adapts a function to a manager runnable that runs on every
// replica (agents are per node: no leader election).
type Runnable func(ctx context.Context) error

// Start runs the function.
func (r Runnable) Start(ctx context.Context) error { return r(ctx) }

// NeedLeaderElection is false: every node's agent works for its node.
func (Runnable) NeedLeaderElection() bool { return false }
