//go:build ceph

// Command storage-agent publishes a Ceph cluster's health, capacity, per-pool
// usage and OSD states as its CephStatus (storage.c5c3.io/v1alpha1) and as
// Prometheus metrics. It runs as a DaemonSet on a storage pool's nodes; the
// replica holding the leader lease publishes.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	storagev1alpha1 "github.com/c5c3/consumer-plane/agents/apis/storage/v1alpha1"
	"github.com/c5c3/consumer-plane/agents/internal/agent"
	"github.com/c5c3/consumer-plane/agents/internal/ceph"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "storage-agent:", err)
		os.Exit(1)
	}
}

func run() error {
	var opts agent.Options
	opts.Bind(flag.CommandLine)
	name := flag.String("name", "ceph", "The CephStatus object to publish into.")
	conf := flag.String("ceph-conf", "/etc/ceph/ceph.conf", "ceph.conf of the cluster; empty: the monitors from $CEPH_MON_ENDPOINTS (Rook's rook-ceph-mon-endpoints) with the key in $CEPH_KEY.")
	user := flag.String("ceph-user", "admin", "The CephX user (without client.).")
	keyring := flag.String("ceph-keyring", "", "A keyring file for the user; empty uses ceph.conf's.")
	interval := flag.Duration("interval", 30*time.Second, "Time between two reads of the cluster.")
	namespace := flag.String("leader-election-namespace", os.Getenv("POD_NAMESPACE"), "Namespace of the leader lease (default $POD_NAMESPACE).")
	zo := zap.Options{}
	zo.BindFlags(flag.CommandLine)
	flag.Parse()
	if err := opts.Validate(); err != nil {
		return err
	}
	if *namespace == "" {
		return fmt.Errorf("--leader-election-namespace (or $POD_NAMESPACE) must name the namespace of the leader lease")
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zo)))
	log := ctrl.Log.WithName("storage-agent").WithValues("node", opts.Node)

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := storagev1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	mo := agent.ManagerOptions(opts, scheme)
	mo.LeaderElection, mo.LeaderElectionID, mo.LeaderElectionNamespace = true, "c5c3-storage-agent-"+*name, *namespace
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		return err
	}
	var conn *ceph.Conn
	if *conf != "" {
		conn, err = ceph.Dial(*conf, *user, *keyring, 10*time.Second)
	} else {
		conn, err = ceph.DialMon(os.Getenv("CEPH_MON_ENDPOINTS"), *user, os.Getenv("CEPH_KEY"), 10*time.Second)
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	a := &ceph.Agent{Client: mgr.GetClient(), Name: *name, Mon: conn, Interval: *interval, Metrics: ceph.NewMetrics(metrics.Registry), Log: log}
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
