//go:build libvirt

// Command hypervisor-agent publishes the node's libvirt introspection (host
// capabilities, NUMA cells, domains, allocation) into the node's Hypervisor
// resource (kvm.cloud.sap/v1). It runs as a DaemonSet on hypervisor nodes.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	kvmv1 "github.com/cobaltcore-dev/openstack-hypervisor-operator/api/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/c5c3/consumer-plane/agents/internal/agent"
	"github.com/c5c3/consumer-plane/agents/internal/hypervisor"
	"github.com/c5c3/consumer-plane/agents/internal/virt"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hypervisor-agent:", err)
		os.Exit(1)
	}
}

func run() error {
	var opts agent.Options
	opts.Bind(flag.CommandLine)
	uri := flag.String("libvirt-uri", "qemu:///system", "The libvirt connection URI.")
	resync := flag.Duration("resync", time.Minute, "Longest time between two introspections; domain lifecycle events trigger them sooner.")
	zo := zap.Options{}
	zo.BindFlags(flag.CommandLine)
	flag.Parse()
	if err := opts.Validate(); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zo)))
	log := ctrl.Log.WithName("hypervisor-agent").WithValues("node", opts.Node)

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := kvmv1.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := agent.NewManager(opts, scheme, &kvmv1.Hypervisor{})
	if err != nil {
		return err
	}
	a := &hypervisor.Agent{Client: mgr.GetClient(), Node: opts.Node, Resync: *resync,
		Metrics: hypervisor.NewMetrics(metrics.Registry), Log: log}
	w := &virt.Watcher{URI: *uri, OnEvent: a.OnEvent, OnConnection: a.OnConnection}
	a.Source = w
	if err := mgr.Add(agent.Runnable(w.Run)); err != nil {
		return err
	}
	if err := mgr.Add(a); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", func(_ *http.Request) error { return nil }); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("published", a.Ready); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
