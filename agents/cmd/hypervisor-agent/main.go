//go:build libvirt

// Command hypervisor-agent publishes the node's libvirt introspection (host
// capabilities, NUMA cells, domains, allocation) into the node's Hypervisor
// resource (kvm.cloud.sap/v1). It runs as a DaemonSet on hypervisor nodes.
package main

import (
	"context"
	"flag"
	"time"

	kvmv1 "github.com/cobaltcore-dev/openstack-hypervisor-operator/api/v1"
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/c5c3/consumer-plane/agents/internal/agent"
	"github.com/c5c3/consumer-plane/agents/internal/hypervisor"
	"github.com/c5c3/consumer-plane/agents/internal/virt"
)

func main() {
	var (
		uri      string
		resync   time.Duration
		readOnly bool
	)
	agent.Main("hypervisor-agent", func(fs *flag.FlagSet) {
		fs.StringVar(&uri, "libvirt-uri", "qemu:///system", "The libvirt connection URI.")
		fs.BoolVar(&readOnly, "libvirt-read-only", true, "Open a read-only libvirt connection (libvirt's read-only socket, no root needed): introspection changes nothing.")
		fs.DurationVar(&resync, "resync", time.Minute, "Longest time between two introspections; domain lifecycle events trigger them sooner.")
	}, func(ctx context.Context, opts agent.Options, log logr.Logger) error {
		scheme, err := agent.Scheme(kvmv1.AddToScheme)
		if err != nil {
			return err
		}
		mgr, err := agent.NewManager(opts, scheme, &kvmv1.Hypervisor{})
		if err != nil {
			return err
		}
		a := &hypervisor.Agent{Client: mgr.GetClient(), Node: opts.Node, Resync: resync,
			Metrics: hypervisor.NewMetrics(metrics.Registry), Log: log}
		w := &virt.Watcher{URI: uri, ReadOnly: readOnly, OnEvent: a.OnEvent, OnConnection: a.OnConnection}
		a.Source = w
		if err := mgr.Add(agent.Runnable(w.Run)); err != nil {
			return err
		}
		if err := mgr.Add(a); err != nil {
			return err
		}
		return agent.Serve(ctx, mgr, a.Ready)
	})
}
