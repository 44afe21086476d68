// Command ovs-agent publishes the node's Open vSwitch (bridges, ports, bonds,
// ovn-controller settings) as its OVSNode (ovs.c5c3.io/v1alpha1) and writes
// the node's availability zones into ovn-cms-options from its zone labels.
// It runs as a DaemonSet on hypervisor and gateway nodes.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	ovsv1alpha1 "github.com/c5c3/consumer-plane/agents/apis/ovs/v1alpha1"
	"github.com/c5c3/consumer-plane/agents/internal/agent"
	"github.com/c5c3/consumer-plane/agents/internal/ovs"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ovs-agent:", err)
		os.Exit(1)
	}
}

func run() error {
	var opts agent.Options
	opts.Bind(flag.CommandLine)
	endpoint := flag.String("ovsdb", "unix:/var/run/openvswitch/db.sock", "The node's Open_vSwitch database.")
	zoneLabels := flag.String("zone-labels", ovs.DefaultZoneLabels, "Comma-separated node labels whose values are the node's availability zones, in order.")
	zo := zap.Options{}
	zo.BindFlags(flag.CommandLine)
	flag.Parse()
	if err := opts.Validate(); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zo)))
	log := ctrl.Log.WithName("ovs-agent").WithValues("node", opts.Node)
	ctx := ctrl.SetupSignalHandler()

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := ovsv1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := agent.NewManager(opts, scheme, &corev1.Node{}, &ovsv1alpha1.OVSNode{})
	if err != nil {
		return err
	}
	db, err := ovs.Dial(ctx, *endpoint, log.WithName("ovsdb"))
	if err != nil {
		return err
	}
	defer db.Close()
	r := &ovs.Reconciler{Client: mgr.GetClient(), Node: opts.Node, DB: db, ZoneLabels: splitList(*zoneLabels),
		Metrics: ovs.NewMetrics(metrics.Registry)}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", func(_ *http.Request) error { return nil }); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ovsdb", func(_ *http.Request) error {
		if !db.Connected() {
			return fmt.Errorf("not connected to %s", *endpoint)
		}
		return nil
	}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
