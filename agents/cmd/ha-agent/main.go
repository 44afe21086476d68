//go:build libvirt

// Command ha-agent watches libvirt's domain lifecycle events on a hypervisor
// node and, per its policy file, restarts a domain that stopped unexpectedly,
// hands the node to evacuation (an Eviction for the hypervisor operator) or
// reports it. It runs as a DaemonSet on hypervisor nodes.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"

	kvmv1 "github.com/cobaltcore-dev/openstack-hypervisor-operator/api/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/c5c3/consumer-plane/agents/internal/agent"
	"github.com/c5c3/consumer-plane/agents/internal/ha"
	"github.com/c5c3/consumer-plane/agents/internal/virt"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ha-agent:", err)
		os.Exit(1)
	}
}

func run() error {
	var opts agent.Options
	opts.Bind(flag.CommandLine)
	uri := flag.String("libvirt-uri", "qemu:///system", "The libvirt connection URI.")
	policyPath := flag.String("policy", "/etc/c5c3/ha-agent/policy.yaml", "The HA policy file (see cluster/agents/ha-agent).")
	zo := zap.Options{}
	zo.BindFlags(flag.CommandLine)
	flag.Parse()
	if err := opts.Validate(); err != nil {
		return err
	}
	policy, err := ha.Load(*policyPath)
	if err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zo)))
	log := ctrl.Log.WithName("ha-agent").WithValues("node", opts.Node)
	log.Info("HA policy", "unexpectedStops", policy.UnexpectedStops, "action", policy.Action,
		"maxRestarts", policy.MaxRestarts, "window", policy.Window.String(), "onFlapping", policy.OnFlapping)

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := kvmv1.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := agent.NewManager(opts, scheme)
	if err != nil {
		return err
	}
	w := &virt.Watcher{URI: *uri}
	a := ha.New(mgr.GetClient(), opts.Node, ha.NewEngine(policy), w, mgr.GetEventRecorderFor("ha-agent"),
		ha.NewMetrics(metrics.Registry), log)
	w.OnEvent, w.OnConnection = a.OnEvent, a.OnConnection
	if err := mgr.Add(agent.Runnable(w.Run)); err != nil {
		return err
	}
	if err := mgr.Add(a); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", func(_ *http.Request) error { return nil }); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("libvirt", a.Ready); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
