// Command gardener-standin does, on a local management plane whose
// Gardener API is the real gardener-apiserver (local/garden),
// gardenlet's part for the pool functions' Shoots — and nothing more:
//
//   - every Shoot gets a cluster of its own: a local kube-apiserver (on one
//     etcd shared by all Shoots) trusting a client CA of its own, with the
//     CRDs of -shoot-crds (of its pool kind) and the namespaces of
//     -shoot-namespaces, if any: the demo gives none, since each cluster's
//     layer brings them through Flux, as in a landscape;
//   - once that cluster serves, and not before -delay, it publishes in the
//     garden what gardenlet does (the cluster's CA, its client CA, its
//     advertised address) and reports the Shoot created and healthy, so the
//     real shoots/adminkubeconfig subresource issues kubeconfigs for it;
//   - each cluster's admin kubeconfig is written to -shoot-clusters as
//     <namespace>.<shoot>.kubeconfig, for the stand-in of the operators
//     inside Shoots (cmd/operator-standin);
//   - a deleted Shoot's cluster is stopped (what it published goes with the
//     Shoot, by owner reference);
//   - each cluster gets a Node for each of its first worker pool's first
//     machines (at most -shoot-nodes), labelled as the machine controller
//     labels them: the worker's labels and the machine's zone;
//   - -spare-shoots KIND=N starts N clusters of that kind at once, before
//     any Shoot asks for them (their kube-apiservers enabling
//     -spare-shoot-plugins): a new Shoot of that kind and those admission
//     plugins takes one and is ready in seconds, where a start takes ten
//     or more (the demo starts the stand-in early with a spare for each of
//     its pools, docs/benchmarks.md).
//
// What it does not simulate: machines and ServerClaims (a Node has no
// kubelet, so nothing scheduled there runs), more than -shoot-nodes nodes
// or a second worker pool, reconciliation of changes (a Shoot scaled keeps
// its nodes), hibernation or deletion flows.
//
// Usage: gardener-standin -kubeconfig GARDEN -shoot-clusters DIR [-shoot-address IP] [-shoot-crds [KIND=]DIR]... [-shoot-namespaces a,b] [-shoot-nodes 3] [-spare-shoots KIND=N]... [-spare-shoot-plugins a,b]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/c5c3/consumer-plane/local/garden"
	"github.com/c5c3/consumer-plane/local/gardenerstandin"
)

type crdDirs []gardenerstandin.CRDs

func (l *crdDirs) String() string { return fmt.Sprint(*l) }
func (l *crdDirs) Set(v string) error {
	*l = append(*l, gardenerstandin.ParseCRDs(v))
	return nil
}

// spareCounts are -spare-shoots KIND=N, in their order.
type spareCounts []gardenerstandin.Spare

func (l *spareCounts) String() string { return fmt.Sprint(*l) }
func (l *spareCounts) Set(v string) error {
	s, err := gardenerstandin.ParseSpare(v)
	*l = append(*l, s)
	return err
}

func main() {
	// Its own flag set: controller-runtime (through envtest) registers
	// -kubeconfig on the global one.
	flag := flag.NewFlagSet("gardener-standin", flag.ExitOnError)
	kubeconfig := flag.String("kubeconfig", "", "the garden cluster, whose Gardener API holds the Shoots")
	dir := flag.String("shoot-clusters", "", "directory the Shoot clusters' admin kubeconfigs are written to, as <namespace>.<shoot>.kubeconfig")
	var crds crdDirs
	flag.Var(&crds, "shoot-crds", "[KIND=]DIR: a directory of CRDs every Shoot cluster has, or those of Shoots whose c5c3.io/pool-kind label is KIND (repeatable)")
	namespaces := flag.String("shoot-namespaces", "", "comma-separated namespaces every Shoot cluster has")
	address := flag.String("shoot-address", "", "the address the Shoots' kube-apiservers listen on and advertise (default 127.0.0.1; a local node's address to reach them from its pods)")
	nodes := flag.Int("shoot-nodes", 3, "at most this many Nodes per Shoot cluster (its first worker pool's first machines)")
	delay := flag.Duration("delay", 3*time.Second, "the least time a new Shoot takes to become ready")
	var spares spareCounts
	flag.Var(&spares, "spare-shoots", "KIND=N: start N clusters for Shoots of pool kind KIND at once, which new Shoots of that kind take (repeatable; started in this order)")
	plugins := flag.String("spare-shoot-plugins", "", "comma-separated admission plugins the spare clusters enable: a Shoot enabling others gets its own")
	_ = flag.Parse(os.Args[1:]) //nolint:errcheck // ExitOnError
	if *dir == "" || os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "gardener-standin: -shoot-clusters and KUBEBUILDER_ASSETS (kube-apiserver, etcd; see tools/upstream/build.sh --env) are required")
		os.Exit(2)
	}
	var ns []string
	if *namespaces != "" {
		ns = strings.Split(*namespaces, ",")
	}
	var spared []string
	if *plugins != "" {
		spared = strings.Split(*plugins, ",")
	}
	o := options{kubeconfig: *kubeconfig, dir: *dir, address: *address, crds: crds, namespaces: ns, maxNodes: *nodes, delay: *delay, spares: spares, sparePlugins: spared}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "gardener-standin:", err)
		os.Exit(1)
	}
}

// options are the stand-in's flags.
type options struct {
	kubeconfig, dir, address string
	crds                     []gardenerstandin.CRDs
	namespaces               []string
	maxNodes                 int
	delay                    time.Duration
	spares                   []gardenerstandin.Spare
	sparePlugins             []string
}

func run(o options) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return err
	}
	clusters, err := gardenerstandin.NewClusters(o.dir, o.crds, o.namespaces)
	if err != nil {
		return err
	}
	defer clusters.Stop()
	clusters.Address, clusters.MaxNodes = o.address, o.maxNodes
	clusters.Spares(o.spares, o.sparePlugins)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	fmt.Println("gardenlet stand-in watching the Shoots of", cfg.Host)
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		if err := reconcile(ctx, dyn, clusters, o.delay); err != nil {
			fmt.Fprintln(os.Stderr, "gardener-standin:", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// reconcile starts the cluster of every Shoot not being deleted, publishes
// every Shoot older than delay whose cluster serves and is not published
// yet, and stops the clusters of Shoots that are gone.
func reconcile(ctx context.Context, dyn dynamic.Interface, clusters *gardenerstandin.Clusters, delay time.Duration) error {
	l, err := dyn.Resource(garden.GVRShoots).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("cannot list Shoots: %w", err)
	}
	keep := map[string]bool{}
	for i := range l.Items {
		s := &l.Items[i]
		if s.GetDeletionTimestamp() != nil {
			continue
		}
		keep[gardenerstandin.Key(s.GetNamespace(), s.GetName())] = true
		c, serves, err := clusters.Ensure(s.GetNamespace(), s.GetName(), gardenerstandin.SpecOf(s))
		if err != nil {
			fmt.Fprintf(os.Stderr, "gardener-standin: %v (retrying)\n", err)
		}
		if !serves || gardenerstandin.Published(s, c) || time.Since(s.GetCreationTimestamp().Time) < delay {
			continue
		}
		if err := gardenerstandin.Publish(ctx, dyn, s, c); err != nil {
			fmt.Fprintf(os.Stderr, "gardener-standin: %v\n", err)
			continue
		}
		fmt.Printf("Shoot %s/%s ready at %s, %.0fs after its creation\n", s.GetNamespace(), s.GetName(), c.Server, time.Since(s.GetCreationTimestamp().Time).Seconds())
	}
	for _, k := range clusters.Keep(keep) {
		fmt.Printf("Shoot %s deleted: its cluster is stopped\n", k)
	}
	return nil
}
