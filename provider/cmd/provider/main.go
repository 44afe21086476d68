// Command provider runs the CobaltCore consumer plane's managed-resource
// provider: Keystone, Nova, Cinder and Neutron resources through
// gophercloud, OVN Northbound state through libovsdb, Ceph pools and CephX
// clients through librados (when built with -tags ceph), and Shoot
// kubeconfigs from Gardener.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/statemetrics"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/c5c3/consumer-plane/internal/securemetrics"
	"github.com/c5c3/consumer-plane/internal/shard"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ceph"
	"github.com/c5c3/consumer-plane/provider/internal/clients/gardener"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ironcore"
	"github.com/c5c3/consumer-plane/provider/internal/clients/kvm"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn"
	"github.com/c5c3/consumer-plane/provider/internal/clients/remotekube"
	"github.com/c5c3/consumer-plane/provider/internal/clients/secrets"
	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
	"github.com/c5c3/consumer-plane/provider/internal/controller/kubernetes/secretcopy"
	"github.com/c5c3/consumer-plane/provider/internal/controller/register"
	"github.com/c5c3/consumer-plane/provider/internal/shardlease"
)

// DefaultReconcileRate is --max-reconcile-rate's default, chosen from make
// bench-scale (docs/benchmarks.md): at 500 clouds, 2,000 Keystone
// resources need 33 polls a second. At 10 the provider looked at them every
// 4 to 5 minutes instead of every minute, took 11 minutes to converge, and a
// new cloud waited behind that queue for over 2 minutes before its first
// reconcile; at 50 every resource was looked at within the minute and a new
// cloud was Ready in 1.3 s.
const DefaultReconcileRate = 50

func main() {
	var (
		debug          = flag.Bool("debug", false, "Log at debug level.")
		pollInterval   = flag.Duration("poll", time.Minute, "How often each managed resource is checked for drift.")
		maxReconcile   = flag.Int("max-reconcile-rate", DefaultReconcileRate, "Reconciles per second of each service the provider manages (Keystone, Nova, Cinder, quotas, Gardener, IronCore, KVM, OVN, Ceph, ProviderConfigs), and workers per controller; the API server client may send 5 times this many requests a second. Each service's resources are polled once per --poll only while their count stays below this rate times the poll's seconds (docs/operations.md).")
		leaderElection = flag.Bool("leader-election", false, "Elect a leader, so several replicas can run (one serving, the others standing by). See --shards to split the work instead.")
		shards         = flag.Int("shards", 1, fmt.Sprintf("Split the managed resources into this many shards (1 to %d), each served by one replica: every replica takes the Lease of one shard (in the namespace POD_NAMESPACE names) and watches, caches and reconciles only the resources of its composites' buckets (label %s); a replica more than the shards stands by for one. Run the Deployment with at least this many replicas (docs/operations.md).", shard.Buckets, shard.Label))
		probeAddr      = flag.String("health-probe-bind-address", ":8081", "Address of /healthz and /readyz.")
		pprofAddr      = flag.String("pprof-bind-address", "", "Address of Go's profiles (/debug/pprof/: heap, CPU, goroutines), to see where a large landscape's memory and CPU go; empty: not served. Bind it to localhost (kubectl port-forward): it is not authenticated.")
		sessionCache   = flag.Int("openstack-session-cache", openstack.DefaultSessions, "OpenStack credentials (per region) whose authenticated session and token are kept; past it, polls of the least recently used authenticate again.")
		callsPerCred   = flag.Int("openstack-max-calls-per-credential", openstack.DefaultCallsPerSession, "OpenStack requests one credential may have under way at once; a request that waits longer than --openstack-call-wait fails and is retried, so a cloud whose endpoint hangs holds at most this many reconcile workers (0: no limit).")
		callWait       = flag.Duration("openstack-call-wait", openstack.DefaultCallWait, "How long an OpenStack request waits for one of its credential's requests under way to end.")
		watchedCluster = flag.Int("watched-clusters", watch.DefaultClusters, "Clusters of each kind (metal clusters, hypervisor pool clusters, the pool clusters whose nodes a NodeLabel labels) whose objects are watched; past it, the least recently used watch stops.")
		credentialsFor = flag.Duration("credentials-cache", secrets.DefaultFor, "How long a Secret the provider read (credentials, CA bundles, passwords, connection Secrets) is kept in memory: while kept, it answers every read for which a metadata-only watch of Secrets shows it unchanged, so a rotated credential is used as soon as the watch sees it (0: read every Secret from the API server on every use).")
		connIdle       = flag.Duration("connection-idle-timeout", time.Hour, "OVN and Ceph connections and IronCore Server watches unused for this long are closed.")
		copySources    = flag.String("secret-copy-source-namespaces", strings.Join(secretcopy.DefaultSourceNamespaces, ","), "Namespaces of the management cluster whose Secrets a SecretCopy may copy to another cluster, comma-separated: those the Compositions' secretNamespace and accessSecretNamespace name. A Secret a ProviderConfig reads is never copied, wherever it is.")
	)
	var metricsFlags securemetrics.Flags
	metricsFlags.Bind(flag.CommandLine, ":8080")
	flag.Parse()

	zl := zap.New(zap.UseDevMode(*debug))
	log := logging.NewLogrLogger(zl.WithName("provider-cobaltcore"))
	ctrl.SetLogger(zl)

	ctx := ctrl.SetupSignalHandler()
	cfg := ratelimiter.LimitRESTConfig(ctrl.GetConfigOrDie(), *maxReconcile)
	// Each warning of the API server once: it warns on every write of an
	// object with crossplane-runtime's finalizers (names without a path),
	// which was a log line per resource created (1,534 from one replica serving 100 clouds).
	cfg.WarningHandlerWithContext = ctrllog.NewKubeAPIWarningLogger(ctrllog.KubeAPIWarningLoggerOptions{Deduplicate: true})
	selector, lost, err := serveShard(ctx, log, cfg, *shards)
	exitOn(log, err, "cannot take a shard")

	scheme, err := register.Scheme()
	exitOn(log, err, "cannot build the scheme")
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Client:                  register.ClientOptions(),
		Cache:                   register.CacheOptions(scheme, selector),
		LeaderElection:          *leaderElection && *shards == 1,
		LeaderElectionID:        "provider-cobaltcore.c5c3.io",
		Metrics:                 metricsFlags.Options(),
		HealthProbeBindAddress:  *probeAddr,
		PprofBindAddress:        *pprofAddr,
		LeaderElectionNamespace: os.Getenv("POD_NAMESPACE"),
	})
	exitOn(log, err, "cannot create the manager")
	exitOn(log, mgr.AddHealthzCheck("ping", healthz.Ping), "cannot add the health check")
	exitOn(log, mgr.AddReadyzCheck("ping", healthz.Ping), "cannot add the readiness check")

	mrMetrics := managed.NewMRMetricRecorder()
	stateMetrics := statemetrics.NewMRStateMetrics()
	metrics.Registry.MustRegister(mrMetrics, stateMetrics)

	o := controller.Options{
		Logger:                  log,
		GlobalRateLimiter:       ratelimiter.NewGlobal(*maxReconcile),
		PollInterval:            *pollInterval,
		MaxConcurrentReconciles: *maxReconcile,
		Features:                &feature.Flags{},
		MetricOptions: &controller.MetricOptions{
			PollStateMetricInterval: 5 * time.Second,
			MRMetrics:               mrMetrics,
			MRStateMetrics:          stateMetrics,
		},
	}
	deps := register.Deps{Sessions: openstack.NewCache(*sessionCache, 24*time.Hour).LimitCalls(*callsPerCred, *callWait), Gardens: gardener.NewClients(),
		OVN: ovn.NewCache(zl.WithName("ovsdb").V(1), *connIdle), Ceph: ceph.NewCache(*connIdle).ReadsValidFor(*pollInterval / 2),
		IronCore: ironcore.NewClusters(*watchedCluster, *connIdle), KVM: kvm.NewClusters(*watchedCluster, *connIdle),
		Nodes:                remotekube.NewNodes(*watchedCluster, *connIdle),
		Remote:               remotekube.NewClients(clientgoscheme.Scheme, *watchedCluster, *connIdle),
		SecretCopySources:    namespaces(*copySources),
		ReconcilesPerService: *maxReconcile, CredentialsFor: *credentialsFor}
	if !ceph.Built {
		log.Info("built without Ceph support (build tag ceph): Ceph Pools and Clients will report that in their Synced condition")
	}
	exitOn(log, register.All(mgr, o, deps), "cannot set up the controllers")
	if lost != nil {
		go func() {
			// Another replica may serve the shard as soon as its Lease
			// is lost: stop at once, as controller-runtime does when it
			// loses leadership (the Deployment starts the replica again).
			<-lost
			if ctx.Err() == nil {
				log.Info("lost the Lease of its shard: stopping")
				os.Exit(1)
			}
		}()
	}
	exitOn(log, mgr.Start(ctx), "cannot run the manager")
	if lost != nil {
		// Stopped (SIGTERM): the shard's elector gives its Lease back
		// before it says it stopped, so that a replica standing by
		// takes the shard at once instead of after the Lease expired.
		select {
		case <-lost:
		case <-time.After(10 * time.Second):
		}
	}
}

// serveShard takes one of the shards' Leases when the resources are split
// into several, and returns the selector of the resources this replica
// serves and a channel closed when its Lease is lost or given back (nil,
// unsharded).
func serveShard(ctx context.Context, log logging.Logger, cfg *rest.Config, n int) (labels.Selector, <-chan struct{}, error) {
	if n == 1 {
		return labels.Everything(), nil, nil
	}
	if _, err := shard.Selector(0, n); err != nil {
		return nil, nil, fmt.Errorf("--shards: %w", err)
	}
	namespace := os.Getenv("POD_NAMESPACE")
	if namespace == "" {
		return nil, nil, errors.New("--shards needs the namespace of the shards' Leases in POD_NAMESPACE (Crossplane's Deployment runtime sets it)")
	}
	host, _ := os.Hostname()
	identity := host + "_" + string(uuid.NewUUID())
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	i, lost, err := shardlease.Acquire(ctx, cs, namespace, identity, n, ctrl.Log.WithName("shards"))
	if err != nil {
		return nil, nil, err
	}
	sel, err := shard.Selector(i, n)
	if err != nil {
		return nil, nil, err
	}
	shardGauge.WithLabelValues(strconv.Itoa(i), strconv.Itoa(n)).Set(1)
	log.Info("serving a shard", "shard", i, "shards", n, "lease", shardlease.Name(i, n), "selector", sel.String())
	return sel, lost, nil
}

// shardGauge says which shard a replica serves.
var shardGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "cobaltcore_provider_shard",
	Help: "1 for the shard this replica serves (label shard, of shards), when the provider runs with --shards.",
}, []string{"shard", "shards"})

func init() { metrics.Registry.MustRegister(shardGauge) }

// namespaces are the names of a comma-separated flag, blanks dropped.
func namespaces(flag string) []string {
	var out []string
	for _, n := range strings.Split(flag, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

func exitOn(log logging.Logger, err error, msg string) {
	if err != nil {
		log.Info(msg, "error", err)
		os.Exit(1)
	}
}
