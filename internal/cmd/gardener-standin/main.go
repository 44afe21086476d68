// Command gardener-standin does, on a local management plane, what Gardener
// would do for the pool functions' Shoots — and nothing more. It is a
// stand-in for the demo, not a Gardener:
//
//   - every Shoot (a custom resource in the management cluster's API server,
//     cluster/crds/gardener) is reported created and healthy after -delay:
//     status.technicalID, a succeeded last operation and the four health
//     conditions Gardener sets;
//   - shoots/adminkubeconfig is served (internal/gardenerstandin) on -listen
//     in front of that API server, and answers with -shoot-kubeconfig.
//
// What it does not simulate: machines, ServerClaims, the worker pools'
// nodes, the Shoot's own control plane (the kubeconfig it hands out is the
// one it is given), reconciliation of changes, hibernation or deletion
// flows. Shoots are deleted at once.
//
// Usage: gardener-standin -kubeconfig MGMT -listen 127.0.0.1:18443 -shoot-kubeconfig FILE
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

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the management cluster, which holds the Shoots")
	listen := flag.String("listen", "127.0.0.1:18443", "where to serve the garden API (plain HTTP, loopback only)")
	shootKubeconfig := flag.String("shoot-kubeconfig", "", "the kubeconfig every admin kubeconfig request is answered with")
	delay := flag.Duration("delay", 3*time.Second, "how long a new Shoot takes to become ready")
	flag.Parse()
	if err := run(*kubeconfig, *listen, *shootKubeconfig, *delay); err != nil {
		fmt.Fprintln(os.Stderr, "gardener-standin:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, listen, shootKubeconfig string, delay time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	issued, err := os.ReadFile(shootKubeconfig) //nolint:gosec // a file named on the command line
	if err != nil {
		return err
	}
	garden, err := gardenerstandin.New(cfg, func(string, string) []byte { return issued })
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
	go reconcile(ctx, dyn, delay)
	fmt.Println("garden stand-in serving on", listen)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}

// reconcile reports every Shoot older than delay ready, every 2 seconds.
func reconcile(ctx context.Context, dyn dynamic.Interface, delay time.Duration) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		if err := markShootsReady(ctx, dyn, delay); err != nil {
			fmt.Fprintln(os.Stderr, "gardener-standin:", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// markShootsReady reports ready every Shoot that is not yet, not being
// deleted, and older than delay.
func markShootsReady(ctx context.Context, dyn dynamic.Interface, delay time.Duration) error {
	l, err := dyn.Resource(shoots).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("cannot list Shoots: %w", err)
	}
	for i := range l.Items {
		s := &l.Items[i]
		if ready(s) || time.Since(s.GetCreationTimestamp().Time) < delay || s.GetDeletionTimestamp() != nil {
			continue
		}
		markReady(s)
		if _, err := dyn.Resource(shoots).Namespace(s.GetNamespace()).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			fmt.Fprintf(os.Stderr, "gardener-standin: cannot report Shoot %s/%s ready: %v\n", s.GetNamespace(), s.GetName(), err)
			continue
		}
		fmt.Printf("Shoot %s/%s ready\n", s.GetNamespace(), s.GetName())
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
