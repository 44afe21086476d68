//go:build ceph

// Command storage-agent publishes a Ceph cluster's health, capacity, per-pool
// usage and OSD states as its CephStatus (storage.c5c3.io/v1alpha1) and as
// Prometheus metrics. It runs as a DaemonSet on a storage pool's nodes; the
// replica holding the leader lease publishes.
package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	storagev1alpha1 "github.com/c5c3/consumer-plane/agents/apis/storage/v1alpha1"
	"github.com/c5c3/consumer-plane/agents/internal/agent"
	"github.com/c5c3/consumer-plane/agents/internal/ceph"
)

func main() {
	var (
		name, conf, user, keyring, namespace string
		interval                             time.Duration
	)
	agent.Main("storage-agent", func(fs *flag.FlagSet) {
		fs.StringVar(&name, "name", "ceph", "The CephStatus object to publish into.")
		fs.StringVar(&conf, "ceph-conf", "/etc/ceph/ceph.conf", "ceph.conf of the cluster; empty: the monitors from $CEPH_MON_ENDPOINTS (Rook's rook-ceph-mon-endpoints) with the key in $CEPH_KEY.")
		fs.StringVar(&user, "ceph-user", "admin", "The CephX user (without client.).")
		fs.StringVar(&keyring, "ceph-keyring", "", "A keyring file for the user; empty uses ceph.conf's.")
		fs.DurationVar(&interval, "interval", 30*time.Second, "Time between two reads of the cluster.")
		fs.StringVar(&namespace, "leader-election-namespace", os.Getenv("POD_NAMESPACE"), "Namespace of the leader lease (default $POD_NAMESPACE).")
	}, func(ctx context.Context, opts agent.Options, log logr.Logger) error {
		if namespace == "" {
			return errors.New("--leader-election-namespace (or $POD_NAMESPACE) must name the namespace of the leader lease")
		}
		scheme, err := agent.Scheme(storagev1alpha1.AddToScheme)
		if err != nil {
			return err
		}
		cfg, err := ctrl.GetConfig()
		if err != nil {
			return err
		}
		mo := agent.ManagerOptions(opts, scheme)
		mo.LeaderElection, mo.LeaderElectionID, mo.LeaderElectionNamespace = true, "c5c3-storage-agent-"+name, namespace
		mgr, err := ctrl.NewManager(cfg, mo)
		if err != nil {
			return err
		}
		var conn *ceph.Conn
		if conf != "" {
			conn, err = ceph.Dial(conf, user, keyring, 10*time.Second)
		} else {
			conn, err = ceph.DialMon(os.Getenv("CEPH_MON_ENDPOINTS"), user, os.Getenv("CEPH_KEY"), 10*time.Second)
		}
		if err != nil {
			return err
		}
		defer conn.Close()
		a := &ceph.Agent{Client: mgr.GetClient(), Name: name, Mon: conn, Interval: interval, Metrics: ceph.NewMetrics(metrics.Registry), Log: log}
		if err := mgr.Add(a); err != nil {
			return err
		}
		// Only liveness: a replica without the lease publishes nothing and is
		// never "ready", which a DaemonSet rollout would wait on forever.
		return agent.Serve(ctx, mgr, nil)
	})
}
