// Command apiserver runs a local management cluster's API server — etcd and
// kube-apiserver from the tool cache (`make tools`), started the way
// controller-runtime's envtest starts them, with its certificates — until it
// is sent SIGTERM or SIGINT, and starts kube-apiserver again whenever it
// dies meanwhile, as kubelet restarts a cluster's. It writes an admin kubeconfig to
// <dir>/kubeconfig and installs the CRDs of the given directories first.
// With -garden it also serves Gardener's API as a garden cluster does: the
// real gardener-apiserver ($GARDENER_APISERVER, `make tools`) on the same
// etcd, aggregated into the kube-apiserver (local/garden); the
// kubeconfig is written once Shoots are served. With -node-ip it serves a
// real node on this machine (local/node): bound on every address,
// advertised at the node's, ServiceAccount admission and the Node
// authorizer on; the PKI the node's components need goes to <dir>/pki and a
// kubeconfig per component (kubelet, kube-proxy, kube-scheduler,
// kube-controller-manager) to <dir>.
//
// Usage: apiserver -dir /tmp/cobaltcore-demo [-garden] [-node-ip 10.244.0.1 -node node-1] [-crds DIR]...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/c5c3/consumer-plane/local/garden"
	"github.com/c5c3/consumer-plane/local/node"
)

type dirs []string

func (d *dirs) String() string     { return strings.Join(*d, ",") }
func (d *dirs) Set(v string) error { *d = append(*d, v); return nil }

func main() {
	dir := flag.String("dir", "", "run directory: the kubeconfig is written there")
	var crds dirs
	flag.Var(&crds, "crds", "a directory of CRDs to install (repeatable)")
	withGarden := flag.Bool("garden", false, "serve Gardener's API from the real gardener-apiserver ($"+garden.EnvBinary+"), aggregated")
	nodeIP := flag.String("node-ip", "", "serve a node at this address (the pods' bridge address of this machine)")
	nodeName := flag.String("node", "node-1", "the node's name (its kubelet's identity)")
	flag.Parse()
	if *dir == "" || os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "apiserver: -dir and KUBEBUILDER_ASSETS (kube-apiserver, etcd; see tools/upstream/build.sh --env) are required")
		os.Exit(2)
	}
	if err := run(*dir, crds, *withGarden, *nodeIP, *nodeName); err != nil {
		fmt.Fprintln(os.Stderr, "apiserver:", err)
		os.Exit(1)
	}
}

func run(dir string, crds []string, withGarden bool, nodeIP, nodeName string) error {
	env := &envtest.Environment{CRDDirectoryPaths: crds, ErrorIfCRDPathMissing: true}
	if nodeIP != "" {
		if _, err := node.Prepare(env.ControlPlane.GetAPIServer(), filepath.Join(dir, "pki"), nodeIP); err != nil {
			return fmt.Errorf("cannot prepare the API server for a node: %w", err)
		}
	}
	var g *garden.Garden
	if withGarden {
		bin, err := garden.Binary()
		if err != nil {
			return err
		}
		if g, err = garden.Prepare(env, bin, filepath.Join(dir, "garden")); err != nil {
			return err
		}
	}
	// kube-controller-manager, kube-scheduler and the node are started by
	// the caller (local/demo/up.sh).
	if _, err := env.Start(); err != nil {
		return fmt.Errorf("cannot start etcd and kube-apiserver: %w", err)
	}
	defer env.Stop() //nolint:errcheck // best effort on the way out
	if g != nil {
		defer g.Stop() //nolint:errcheck // best effort on the way out
		if err := g.StartIn(context.Background(), env); err != nil {
			return err
		}
		fmt.Println("gardener-apiserver serves core.gardener.cloud through the kube-apiserver, on port", g.Port())
	}
	u, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return err
	}
	if nodeIP != "" {
		if err := node.WriteKubeconfigs(env, dir, node.Components(nodeName)); err != nil {
			return err
		}
	}
	// Last: the kubeconfig is the sign that everything is ready.
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), kc, 0o600); err != nil {
		return err
	}
	fmt.Println("kube-apiserver ready at", env.Config.Host)
	// From here on kube-apiserver comes back when it dies, as a cluster's
	// does; stopped before envtest stops etcd.
	r, err := superviseAPIServer(filepath.Join(dir, "kube-apiserver.log"))
	if err != nil {
		return err
	}
	defer r.stop()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	return nil
}
