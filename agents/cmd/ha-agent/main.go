//go:build libvirt

// Command ha-agent watches libvirt's domain lifecycle events on a hypervisor
// node and, per its policy file, restarts a domain that stopped unexpectedly,
// hands the node to evacuation (an Eviction for the hypervisor operator) or
// reports it. It runs as a DaemonSet on hypervisor nodes.
package main

import (
	"context"
	"flag"

	kvmv1 "github.com/cobaltcore-dev/openstack-hypervisor-operator/api/v1"
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/c5c3/consumer-plane/agents/internal/agent"
	"github.com/c5c3/consumer-plane/agents/internal/ha"
	"github.com/c5c3/consumer-plane/agents/internal/virt"
)

func main() {
	var uri, policyPath string
	agent.Main("ha-agent", func(fs *flag.FlagSet) {
		fs.StringVar(&uri, "libvirt-uri", "qemu:///system", "The libvirt connection URI.")
		fs.StringVar(&policyPath, "policy", "/etc/c5c3/ha-agent/policy.yaml", "The HA policy file (see cluster/agents/ha-agent.yaml).")
	}, func(ctx context.Context, opts agent.Options, log logr.Logger) error {
		policy, err := ha.Load(policyPath)
		if err != nil {
			return err
		}
		log.Info("HA policy", "unexpectedStops", policy.UnexpectedStops, "action", policy.Action,
			"maxRestarts", policy.MaxRestarts, "window", policy.Window.String(), "onFlapping", policy.OnFlapping)
		scheme, err := agent.Scheme(kvmv1.AddToScheme)
		if err != nil {
			return err
		}
		mgr, err := agent.NewManager(opts, scheme)
		if err != nil {
			return err
		}
		w := &virt.Watcher{URI: uri}
		a := ha.New(mgr.GetClient(), opts.Node, ha.NewEngine(policy), w, mgr.GetEventRecorder("ha-agent"),
			ha.NewMetrics(metrics.Registry), log)
		w.OnEvent, w.OnConnection = a.OnEvent, a.OnConnection
		if err := mgr.Add(agent.Runnable(w.Run)); err != nil {
			return err
		}
		if err := mgr.Add(a); err != nil {
			return err
		}
		return agent.Serve(ctx, mgr, a.Ready)
	})
}
