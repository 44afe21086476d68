// Command ovs-agent publishes the node's Open vSwitch (bridges, ports, bonds,
// ovn-controller settings) as its OVSNode (ovs.c5c3.io/v1alpha1) and writes
// the node's availability zones into ovn-cms-options from its zone labels.
// It runs as a DaemonSet on hypervisor and gateway nodes.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	ovsv1alpha1 "github.com/c5c3/consumer-plane/agents/apis/ovs/v1alpha1"
	"github.com/c5c3/consumer-plane/agents/internal/agent"
	"github.com/c5c3/consumer-plane/agents/internal/ovs"
)

func main() {
	var endpoint, zoneLabels string
	agent.Main("ovs-agent", func(fs *flag.FlagSet) {
		fs.StringVar(&endpoint, "ovsdb", "unix:/var/run/openvswitch/db.sock", "The node's Open_vSwitch database.")
		fs.StringVar(&zoneLabels, "zone-labels", ovs.DefaultZoneLabels, "Comma-separated node labels whose values are the node's availability zones, in order.")
	}, func(ctx context.Context, opts agent.Options, log logr.Logger) error {
		scheme, err := agent.Scheme(ovsv1alpha1.AddToScheme)
		if err != nil {
			return err
		}
		mgr, err := agent.NewManager(opts, scheme, &corev1.Node{}, &ovsv1alpha1.OVSNode{})
		if err != nil {
			return err
		}
		db, err := ovs.Dial(ctx, endpoint, log.WithName("ovsdb"))
		if err != nil {
			return err
		}
		defer db.Close()
		r := &ovs.Reconciler{Client: mgr.GetClient(), Node: opts.Node, DB: db, ZoneLabels: splitList(zoneLabels),
			Metrics: ovs.NewMetrics(metrics.Registry)}
		if err := r.SetupWithManager(mgr); err != nil {
			return err
		}
		return agent.Serve(ctx, mgr, func(_ *http.Request) error {
			if !db.Connected() {
				return fmt.Errorf("not connected to %s", endpoint)
			}
			return nil
		})
	})
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
