// Command gardener-standin does, on a local management plane, what Gardener
// would do for the pool functions' Shoots — and nothing more. It is a
// stand-in for the demo, not a Gardener:
//
//   - every Shoot (a custom resource in the management cluster's API server,
//     cluster/crds/gardener) gets a cluster of its own: a local
//     kube-apiserver (on one etcd shared by all Shoots) with the CRDs of
//     -shoot-crds and the namespaces of -shoot-namespaces, which the
//     landscape's Shoots would have;
//   - once that cluster serves, and not before -delay, the Shoot is reported
//     created and healthy: status.technicalID, a succeeded last operation and
//     the four health conditions Gardener sets;
//   - shoots/adminkubeconfig is served (internal/gardenerstandin) on -listen
//     in front of that API server, and answers with the admin kubeconfig of
//     the Shoot's cluster (also written to -shoot-clusters, for the stand-in
//     of the operators inside Shoots, cmd/operator-standin);
//   - a deleted Shoot's cluster is stopped.
//
// What it does not simulate: machines, ServerClaims, the worker pools'
// nodes (a Shoot's cluster has none, so nothing scheduled there runs),
// short-lived credentials, reconciliation of changes, hibernation or
// deletion flows. Shoots are deleted at once.
//
// Usage: gardener-standin -kubeconfig MGMT -listen 127.0.0.1:18443 -shoot-clusters DIR [-shoot-crds DIR]... [-shoot-namespaces a,b]
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/c5c3/consumer-plane/internal/gardenerstandin"
)

var shoots = schema.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"}

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	// Its own flag set: controller-runtime (through envtest) registers
	// -kubeconfig on the global one.
	flag := flag.NewFlagSet("gardener-standin", flag.ExitOnError)
	kubeconfig := flag.String("kubeconfig", "", "the management cluster, which holds the Shoots")
	listen := flag.String("listen", "127.0.0.1:18443", "where to serve the garden API (plain HTTP, loopback only)")
	dir := flag.String("shoot-clusters", "", "directory the Shoot clusters' admin kubeconfigs are written to, as <namespace>.<shoot>.kubeconfig")
	var crds list
	flag.Var(&crds, "shoot-crds", "a directory of CRDs every Shoot cluster has (repeatable)")
	namespaces := flag.String("shoot-namespaces", "", "comma-separated namespaces every Shoot cluster has")
	delay := flag.Duration("delay", 3*time.Second, "the least time a new Shoot takes to become ready")
	_ = flag.Parse(os.Args[1:]) //nolint:errcheck // ExitOnError
	if *dir == "" || os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "gardener-standin: -shoot-clusters and KUBEBUILDER_ASSETS (kube-apiserver, etcd; see cluster/tools/build.sh --env) are required")
		os.Exit(2)
	}
	var ns []string
	if *namespaces != "" {
		ns = strings.Split(*namespaces, ",")
	}
	if err := run(*kubeconfig, *listen, *dir, crds, ns, *delay); err != nil {
		fmt.Fprintln(os.Stderr, "gardener-standin:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, listen, dir string, crds, namespaces []string, delay time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	clusters, err := gardenerstandin.NewClusters(dir, crds, namespaces)
	if err != nil {
		return err
	}
	defer clusters.Stop()
	garden, err := gardenerstandin.New(cfg, clusters.Kubeconfig)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	srv := &http.Server{Addr: listen, Handler: garden, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close() //nolint:errcheck // shutting down
	}()
	go reconcile(ctx, dyn, clusters, delay)
	fmt.Println("garden stand-in serving on", listen)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}

// reconcile, every 2 seconds, reports ready every Shoot whose cluster
// serves, and stops the clusters of deleted Shoots.
func reconcile(ctx context.Context, dyn dynamic.Interface, clusters *gardenerstandin.Clusters, delay time.Duration) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		if err := markShootsReady(ctx, dyn, clusters, delay); err != nil {
			fmt.Fprintln(os.Stderr, "gardener-standin:", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// markShootsReady starts the cluster of every Shoot not being deleted,
// reports ready every Shoot that is not yet, older than delay, whose cluster
// serves, and stops the clusters of Shoots that are gone.
func markShootsReady(ctx context.Context, dyn dynamic.Interface, clusters *gardenerstandin.Clusters, delay time.Duration) error {
	l, err := dyn.Resource(shoots).List(ctx, metav1.ListOptions{})
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
		serves, err := clusters.Ensure(s.GetNamespace(), s.GetName(), string(s.GetUID()))
		if err != nil {
			fmt.Fprintf(os.Stderr, "gardener-standin: %v (retrying)\n", err)
		}
		if ready(s) || !serves || time.Since(s.GetCreationTimestamp().Time) < delay {
			continue
		}
		markReady(s)
		if _, err := dyn.Resource(shoots).Namespace(s.GetNamespace()).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			fmt.Fprintf(os.Stderr, "gardener-standin: cannot report Shoot %s/%s ready: %v\n", s.GetNamespace(), s.GetName(), err)
			continue
		}
		fmt.Printf("Shoot %s/%s ready\n", s.GetNamespace(), s.GetName())
	}
	for _, k := range clusters.Keep(keep) {
		fmt.Printf("Shoot %s deleted: its cluster is stopped\n", k)
	}
	return nil
}

func ready(s *unstructured.Unstructured) bool {
	st, _, _ := unstructured.NestedString(s.Object, "status", "lastOperation", "state")
	return st == "Succeeded"
}

// markReady sets what Gardener reports of a healthy Shoot. The technical ID
// is shoot--<project>--<name>, the project being the namespace without
// Gardener's "garden-" prefix.
func markReady(s *unstructured.Unstructured) {
	now := time.Now().UTC().Format(time.RFC3339)
	cond := func(t, reason, msg string) any {
		return map[string]any{"type": t, "status": "True", "reason": reason, "message": msg, "lastTransitionTime": now, "lastUpdateTime": now}
	}
	project := strings.TrimPrefix(s.GetNamespace(), "garden-")
	s.Object["status"] = map[string]any{
		// Required by the Shoot schema: who reconciled it, and whether it sleeps.
		"gardener":    map[string]any{"id": "gardener-standin", "name": "gardener-standin", "version": "v1.138.0"},
		"hibernated":  false,
		"uid":         string(s.GetUID()),
		"technicalID": "shoot--" + project + "--" + s.GetName(),
		"lastOperation": map[string]any{
			"type": "Create", "state": "Succeeded", "progress": int64(100),
			"description": "Shoot cluster has been successfully reconciled (gardener-standin).", "lastUpdateTime": now,
		},
		"conditions": []any{
			cond("APIServerAvailable", "HealthzRequestSucceeded", "API server /healthz endpoint responded with success status code."),
			cond("ControlPlaneHealthy", "ControlPlaneRunning", "All control plane components are healthy."),
			cond("EveryNodeReady", "EveryNodeReady", "All nodes are ready."),
			cond("SystemComponentsHealthy", "SystemComponentsRunning", "All system components are healthy."),
		},
	}
}
