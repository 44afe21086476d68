// Command operator-standin does, in the local Shoot clusters that
// cmd/gardener-standin runs, what the operators a landscape runs inside its
// Shoots would report — and nothing more. It is a stand-in for the demo:
//
//   - the c5c3-operator (the control-plane stand-in): a ControlPlane
//     (c5c3.io/v1alpha1) is reported Ready, with every service it enables
//     ready, and the admin credential Secret it names
//     (spec.korc.adminCredential.cloudCredentialsRef) holds a clouds.yaml
//     for the local OpenStack's HTTPS Keystone (-clouds-yaml) and the CA of
//     its endpoints (key cacert, as K-ORC reads it), whose catalog gets
//     the ControlPlane's spec.region (the local services' endpoints again:
//     Nova, Cinder and Neutron only in the -compute-regions),
//     and ConfigMap ovn-databases names the local OVN databases (ovn.go), with
//     ssl: endpoints beside Secret ovn-client-tls, a client certificate of
//     the local OVN's CA (ovntls.go);
//   - Rook: a CephClient becomes a user with its caps in the local Ceph, its
//     key in rook-ceph-client-<name>; a CephCluster is reported Ready with the health and capacity of
//     the local Ceph (read with the ceph CLI, -ceph-conf), a CephBlockPool,
//     CephFilesystem or CephObjectStore Ready, and Rook's own rook-ceph-mon Secret (admin key) and
//     rook-ceph-mon-endpoints ConfigMap point at the local Ceph's monitors;
//     a stretched pool's CephCluster (annotated c5c3.io/arbiter-cluster) gets,
//     when -stretched-ceph-conf names one, a local Ceph laid out as a
//     stretched pool's, whose third monitor stands in for the arbiter's
//     (ceph.go);
//   - the external Ceph arbiter operator (arbiter.go): a RemoteCluster is
//     Ready once the kubeconfig its Secret holds logs into the arbiter
//     cluster and may manage Deployments in the monitor's namespace there; a
//     RemoteArbiter once, with that kubeconfig, the monitor's ConfigMap and
//     (zero-replica) Deployment exist there;
//   - a kubelet and the hypervisor operator, for each node of a Shoot
//     (gardener-standin -shoot-nodes): where the pool functions placed the
//     hypervisor or storage agent's DaemonSet, that agent's image runs as a
//     container of the local node's containerd against the Shoot's API
//     server (-containerd), the hypervisor agent on libvirt's test driver
//     with the node's Hypervisor created first, the storage agent on the
//     first node only (agents.go); and each node's ovn-controller, for the
//     OVS agent's DaemonSet: the node registered as a chassis of its pool's
//     availability zone in the local OVN (ovn.go);
//   - the c5c3-operator's compute deployment and nova-compute (compute.go):
//     with the kubeconfig a cloud was given for each of its hypervisor
//     pools, a nova-compute DaemonSet in the cloud's namespace there, on
//     the nodes bound to the cloud; each node it selects is a compute host
//     of the local Nova (-register-compute), and leaves it when no longer
//     selected (-deregister-compute);
//   - the public endpoints of the clouds' Keystone (endpoints.go,
//     -public-endpoints): TLS for keystone.<cloud>.<-public-domain> with a
//     certificate of the local OpenStack's CA, in front of the local
//     Keystone;
//   - the namespace controller of the Shoot's kube-controller-manager, which
//     these clusters do not run: a deleted namespace is emptied of the kinds
//     above, Secrets and ConfigMaps, and finalized.
//
// It reads each Shoot cluster through informers (informed.go) and sweeps
// the clusters when they see a change, and every 3 s for what they cannot
// see (the local Ceph, the agents' processes, the pools' clusters).
//
// What it does not simulate: any of those operators' work. No OpenStack
// service is deployed per ControlPlane (every cloud is the one local
// OpenStack), no Ceph daemon per CephCluster (every storage pool is the one
// local Ceph, or the stretched one), no arbiter monitor joins (the stretched
// Ceph's third monitor stands in for it); changes to a spec are not acted on.
//
// Usage: operator-standin -shoot-clusters DIR -clouds-yaml FILE -ceph-conf FILE -ceph-key FILE -ceph-mon a=127.0.0.1:6789
//
//	[-containerd SOCKET -containerd-hosts DIR -agent-logs DIR]
//	[-ovn-nb tcp:127.0.0.1:6641 -ovn-sb tcp:127.0.0.1:6642 | -ovn-nb ssl:... -ovn-sb ssl:... -ovn-ca-cert FILE -ovn-ca-key FILE]
//	[-compute-regions eu-de-1,...] [-register-compute CMD -deregister-compute CMD]
//	[-stretched-ceph-conf FILE -stretched-ceph-key FILE -stretched-ceph-mon a=127.0.0.1:6901,...]
//	[-public-endpoints 127.0.0.44:443 -public-domain cobaltcore.example -public-ca-cert FILE -public-ca-key FILE]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

var (
	controlPlanes = schema.GroupVersionResource{Group: "c5c3.io", Version: "v1alpha1", Resource: "controlplanes"}
	cephClusters  = schema.GroupVersionResource{Group: "ceph.rook.io", Version: "v1", Resource: "cephclusters"}
	cephClients   = schema.GroupVersionResource{Group: "ceph.rook.io", Version: "v1", Resource: "cephclients"}
	// Rook's kinds that are Ready once their pools exist.
	rookPools = []schema.GroupVersionResource{
		{Group: "ceph.rook.io", Version: "v1", Resource: "cephblockpools"},
		{Group: "ceph.rook.io", Version: "v1", Resource: "cephfilesystems"},
		{Group: "ceph.rook.io", Version: "v1", Resource: "cephobjectstores"},
	}
	remoteClusters = schema.GroupVersionResource{Group: "ceph.cobaltcore.sap.com", Version: "v1alpha1", Resource: "remoteclusters"}
	remoteArbiters = schema.GroupVersionResource{Group: "ceph.cobaltcore.sap.com", Version: "v1alpha1", Resource: "remotearbiters"}
)

type config struct {
	dir, cloudsYAML, cephConf, cephKeyFile, cephMon string
	// A Ceph laid out as a stretched pool's (local/ceph/start.sh with
	// CEPH_MONS and CEPH_OSD_HOSTS), for the stretched pools ("" none).
	stretchedCephConf, stretchedCephKeyFile, stretchedCephMon string
	// The node agents (agents.go): the node's containerd and its registry
	// configuration, libvirt URI and logs.
	containerd, containerdHosts, agentLogs string
	// The local OVN databases every cloud gets (ovn.go).
	ovnNB, ovnSB string
	// ovnCACert and ovnCAKey sign the clouds' OVN client certificates
	// (ovntls.go), for ssl: endpoints.
	ovnCACert, ovnCAKey string
	// computeRegions get Nova, Cinder and Neutron in their catalog (catalog.go).
	computeRegions []string
	// registerCompute and deregisterCompute make a node a Nova compute
	// host and remove it (compute.go).
	registerCompute, deregisterCompute string
	// publicEndpoints is where the clouds' Keystone endpoints under
	// publicDomain are served, with certificates of the CA publicCACert
	// and publicCAKey (endpoints.go); "" none.
	publicEndpoints, publicDomain, publicCACert, publicCAKey string
}

func main() {
	c := config{}
	flag.StringVar(&c.dir, "shoot-clusters", "", "directory of the Shoot clusters' admin kubeconfigs (gardener-standin -shoot-clusters)")
	flag.StringVar(&c.cloudsYAML, "clouds-yaml", "", "the local OpenStack's clouds.yaml with cloud \"admin\" (local/openstack)")
	flag.StringVar(&c.cephConf, "ceph-conf", "", "the local Ceph's ceph.conf (local/ceph)")
	flag.StringVar(&c.cephKeyFile, "ceph-key", "", "file holding the local Ceph's client.admin key")
	flag.StringVar(&c.cephMon, "ceph-mon", "a=127.0.0.1:6789", "the local Ceph's monitors as Rook lists them (name=host:port,...)")
	flag.StringVar(&c.stretchedCephConf, "stretched-ceph-conf", "", "ceph.conf of a local Ceph laid out as a stretched pool's, which stands in for the Ceph of the stretched storage pools (their CephCluster annotated "+annotationArbiterCluster+"); empty: they get the local Ceph")
	flag.StringVar(&c.stretchedCephKeyFile, "stretched-ceph-key", "", "file holding that Ceph's client.admin key")
	flag.StringVar(&c.stretchedCephMon, "stretched-ceph-mon", "", "that Ceph's monitors as Rook lists them (name=host:port,...)")
	flag.StringVar(&c.containerd, "containerd", "", "socket of the containerd that runs the node agents' images (local/node); empty: run no agents")
	flag.StringVar(&c.containerdHosts, "containerd-hosts", "", "that node's registry configuration (containerd's certs.d directory), through which the agents' images are pulled")
	flag.StringVar(&c.agentLogs, "agent-logs", os.TempDir(), "directory of the node agents' logs and files (a hypervisor agent's libvirt test-driver node: <container>/libvirt.xml)")
	flag.StringVar(&c.ovnNB, "ovn-nb", "tcp:127.0.0.1:6641", "the local OVN Northbound every cloud's ConfigMap ovn-databases names")
	flag.StringVar(&c.ovnSB, "ovn-sb", "tcp:127.0.0.1:6642", "the local OVN Southbound, named likewise, where each hypervisor pool's node is registered as a chassis; empty: none")
	flag.StringVar(&c.ovnCACert, "ovn-ca-cert", "", "PEM certificate of the CA the local OVN trusts: with ssl: endpoints each cloud gets a client certificate of it in Secret ovn-client-tls")
	flag.StringVar(&c.ovnCAKey, "ovn-ca-key", "", "PEM key of that CA")
	flag.StringVar(&c.registerCompute, "register-compute", "", "command that registers a node as a compute host of the local Nova (its last argument the node's name), run for each node a cloud's nova-compute DaemonSet selects, standing in for the nova-compute that runs there; empty: none")
	flag.StringVar(&c.deregisterCompute, "deregister-compute", "", "command that removes a node registered so (its last argument the node's name), once no nova-compute DaemonSet selects it")
	flag.StringVar(&c.publicEndpoints, "public-endpoints", "", "address (IP:port) to serve the clouds' public Keystone endpoints on (keystone.<cloud>.<-public-domain>), in front of the local Keystone; empty: none")
	flag.StringVar(&c.publicDomain, "public-domain", "cobaltcore.example", "the domain of the clouds' public endpoints (the Compositions' endpointDomain, or a domain above it)")
	flag.StringVar(&c.publicCACert, "public-ca-cert", "", "PEM certificate of the CA the public endpoints' certificates are minted from: the local OpenStack's, which the admin credential names")
	flag.StringVar(&c.publicCAKey, "public-ca-key", "", "PEM key of that CA")
	computeRegions := flag.String("compute-regions", "", "regions (comma-separated) whose clouds get Nova, Cinder and Neutron in their catalog, standing in for an operator that deploys compute; the others get only what the c5c3 ControlPlane deploys (Keystone, Placement, Glance)")
	flag.Parse()
	for _, r := range strings.Split(*computeRegions, ",") {
		if r = strings.TrimSpace(r); r != "" {
			c.computeRegions = append(c.computeRegions, r)
		}
	}
	if c.dir == "" || c.cloudsYAML == "" || c.cephConf == "" || c.cephKeyFile == "" {
		fmt.Fprintln(os.Stderr, "operator-standin: -shoot-clusters, -clouds-yaml, -ceph-conf and -ceph-key are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "operator-standin:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	clouds, err := os.ReadFile(c.cloudsYAML)
	if err != nil {
		return err
	}
	secretClouds, ca, err := adminCredential(clouds)
	if err != nil {
		return fmt.Errorf("%s: %w", c.cloudsYAML, err)
	}
	single, err := newLocalCeph(c.cephConf, c.cephKeyFile, c.cephMon)
	if err != nil {
		return err
	}
	var stretched *localCeph
	if c.stretchedCephConf != "" {
		if stretched, err = newLocalCeph(c.stretchedCephConf, c.stretchedCephKeyFile, c.stretchedCephMon); err != nil {
			return err
		}
	}
	tlsDir, err := os.MkdirTemp("", "operator-standin-ovn-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tlsDir) //nolint:errcheck // best-effort cleanup
	oca, sbctlTLS, err := setUpOVNTLS(c, tlsDir)
	if err != nil {
		return err
	}
	s := &standin{config: c, clouds: clouds, secretClouds: secretClouds, caBundle: ca, singleCeph: single, stretchedCeph: stretched, clients: map[string]*cluster{}, regions: map[string]bool{}, procs: map[string]*exec.Cmd{}, pulled: map[string]bool{}, chassis: map[string]string{}, computes: map[string]string{}, poolClients: map[string]kubernetes.Interface{}, deployed: map[string]time.Time{},
		ovnCA: oca, sbctlTLS: sbctlTLS, objectsChanged: newWakeup(), processesChanged: newWakeup()}
	if c.publicEndpoints != "" {
		signer, err := loadCA(c.publicCACert, c.publicCAKey)
		if err != nil {
			return fmt.Errorf("-public-ca-cert, -public-ca-key: %w", err)
		}
		// The local Keystone's certificate is of the CA its clouds.yaml names.
		p, err := newPublicEndpoints(signer, c.publicDomain, clouds, ca)
		if err != nil {
			return fmt.Errorf("%s: %w", c.cloudsYAML, err)
		}
		go func() {
			if err := p.serve(ctx, c.publicEndpoints); err != nil {
				fmt.Fprintln(os.Stderr, "operator-standin:", err)
			}
		}()
	}
	defer s.stopAgents(func(string) bool { return true })
	defer s.unregisterChassis(func(string) bool { return true })
	fmt.Println("operator stand-in watching", c.dir)
	// What the operators report about objects, and what starts processes
	// or calls services (the node agents' and nova-compute's containers,
	// the compute hosts), which takes seconds a cluster, run as two loops:
	// in one sweep, a pool's CephCluster waited for every agent of the
	// clusters before it (a minute while a dozen pools started), and after
	// the objects came first, for the agents of the sweep before (a
	// storage pool's CephCluster was reported 24 s after its creation).
	// They share no state but the clusters' clients.
	objects := []step{{"controlPlanes", s.controlPlanes}, {"cephClusters", s.cephClusters}, {"cephClients", s.cephClients}, {"pools", s.pools}, {"arbiters", s.arbiters}, {"namespaces", s.namespaces}}
	processes := []step{{"agents", s.agents}, {"deployCompute", s.deployCompute}, {"runCompute", s.runCompute}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		every(ctx, 3*time.Second, s.objectsChanged, func() {
			// Read again, once, when a CephCluster needs them.
			s.singleCeph.forget()
			if s.stretchedCeph != nil {
				s.stretchedCeph.forget()
			}
			s.sweep(ctx, objects, true)
		})
	}()
	every(ctx, 3*time.Second, s.processesChanged, func() { s.removeGone(ctx, s.sweep(ctx, processes, false)) })
	<-done
	s.clientsMu.Lock()
	for _, c := range s.clients {
		c.forget()
	}
	s.clientsMu.Unlock()
	return nil
}

// every calls fn, then again each period after it returned or soon after
// a ring of changed, until ctx ends. The period is for what no informer
// sees: the local Ceph, the agents' processes, the pools' clusters.
func every(ctx context.Context, period time.Duration, changed wakeup, fn func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		fn()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-changed:
			select {
			case <-ctx.Done():
				return
			case <-time.After(coalesce):
			}
		}
	}
}

// wakeup is a sweep loop's doorbell: ring never blocks, and rings while the
// loop sweeps make one more sweep.
type wakeup chan struct{}

func newWakeup() wakeup { return make(wakeup, 1) }

func (w wakeup) ring() {
	select {
	case w <- struct{}{}:
	default:
	}
}

// coalesce is how long a loop waits after a ring for the changes that
// come with it (a composite's objects are applied together).
const coalesce = 200 * time.Millisecond

// slowStep is how long a step of a sweep takes before the log says so.
const slowStep = 5 * time.Second

type standin struct {
	config
	clouds []byte
	// secretClouds and caBundle are the admin credential a ControlPlane's
	// Secret gets: the clouds.yaml naming its CA by the Secret's key, and
	// the CA (PEM).
	secretClouds, caBundle []byte
	// singleCeph stands in for every pool's Ceph, stretchedCeph (nil
	// none) for the stretched pools' (ceph.go).
	singleCeph, stretchedCeph *localCeph
	// clients of the Shoots' clusters, by kubeconfig file: the one thing
	// both loops share.
	clientsMu sync.Mutex
	clients   map[string]*cluster
	// objectsChanged and processesChanged wake the loops when a cluster's
	// informers see a change.
	objectsChanged, processesChanged wakeup
	// regions registered in the local Keystone (catalog.go).
	regionsMu sync.Mutex
	regions   map[string]bool
	// procs are the node agents running, by cluster/daemonset.
	procs map[string]*exec.Cmd
	// pulled are the agents' images containerd has.
	pulled map[string]bool
	// ovnCA signs the clouds' OVN client certificates and sbctlTLS are
	// ovn-sbctl's flags, for ssl: endpoints.
	ovnCA    *localCA
	sbctlTLS []string
	// chassis are the OVN chassis registered, by cluster/node.
	chassis map[string]string
	// computes are the nodes registered as Nova compute hosts, with their
	// clusters.
	computes map[string]string
	// poolClients log into the pools' clusters with the clouds' kubeconfigs
	// (compute.go).
	poolClients map[string]kubernetes.Interface
	// deployed is when each cloud's nova-compute was last seen deployed,
	// by its pool kubeconfig Secret's version and the cloud (compute.go).
	deployed map[string]time.Time
}

type cluster struct {
	name     string
	file     string // its admin kubeconfig
	modified time.Time
	cfg      *rest.Config
	dyn      dynamic.Interface
	kube     kubernetes.Interface
	// informed reads the cluster (informed.go); nil until its kinds were
	// discovered.
	informed atomic.Pointer[informed]
}

// step is what the stand-in does in one cluster, in one of its loops.
type step struct {
	name string
	do   func(context.Context, *cluster) error
}

// sweep does the steps in every Shoot cluster once and returns the
// clusters' kubeconfig files it saw. Errors are reported and retried at
// the next sweep: a cluster may be starting or stopping. With parallel,
// the clusters are visited at once: a sweep of a dozen clusters' objects
// is a hundred lists, each waiting on a Shoot's API server that runs at a
// low priority on busy cores, and one after the other they took half a
// minute while the pools started (a CephCluster reported 36 s after its
// creation). Steps that run in parallel keep their shared state locked.
func (s *standin) sweep(ctx context.Context, steps []step, parallel bool) map[string]bool {
	files, err := filepath.Glob(filepath.Join(s.dir, "*.kubeconfig"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "operator-standin:", err)
		return nil
	}
	seen := map[string]bool{}
	var clusters []*cluster
	for _, f := range files {
		seen[f] = true
		c, err := s.client(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "operator-standin: %s: %v\n", f, err)
			continue
		}
		clusters = append(clusters, c)
	}
	visit := func(c *cluster) {
		for _, st := range steps {
			start := time.Now()
			if err := st.do(ctx, c); err != nil && !apierrors.IsNotFound(err) {
				fmt.Fprintf(os.Stderr, "operator-standin: cluster %s: %v\n", c.name, err)
			}
			if d := time.Since(start); d > slowStep {
				fmt.Printf("cluster %s: %s took %.0fs\n", c.name, st.name, d.Seconds())
			}
		}
	}
	var wg sync.WaitGroup
	for _, c := range clusters {
		if parallel {
			wg.Go(func() { visit(c) })
		} else {
			visit(c)
		}
	}
	wg.Wait()
	return seen
}

// removeGone stops what runs for the clusters no longer seen (nil: the
// sweep could not list them, and nothing is stopped).
func (s *standin) removeGone(ctx context.Context, seen map[string]bool) {
	if seen == nil {
		return
	}
	s.clientsMu.Lock()
	for f, c := range s.clients {
		if !seen[f] {
			c.forget()
			delete(s.clients, f)
		}
	}
	s.clientsMu.Unlock()
	gone := func(cluster string) bool { return !seen[filepath.Join(s.dir, cluster+".kubeconfig")] }
	s.stopAgents(gone)
	s.unregisterChassis(gone)
	if err := s.removeComputes(ctx, func(cl, _ string) bool { return gone(cl) }); err != nil {
		fmt.Fprintln(os.Stderr, "operator-standin:", err)
	}
}

func (s *standin) client(file string) (*cluster, error) {
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	fi, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	old, ok := s.clients[file]
	if ok && old.modified.Equal(fi.ModTime()) {
		if old.informed.Load() == nil {
			old.inform(s.changed)
		}
		old.reinform(s.changed)
		return old, nil
	}
	if ok {
		old.forget()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", file)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = 10 * time.Second
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := &cluster{name: strings.TrimSuffix(filepath.Base(file), ".kubeconfig"), file: file, modified: fi.ModTime(), cfg: cfg, dyn: dyn, kube: kube}
	c.inform(s.changed)
	s.clients[file] = c
	return c, nil
}

// changed wakes both loops.
func (s *standin) changed() {
	s.objectsChanged.ring()
	s.processesChanged.ring()
}

// each calls fn for every object of gvr whose status does not say done yet,
// and writes the status fn sets. An object read before the stand-in's own
// last write of it reached the informer conflicts, and is looked at again
// at the next sweep: what fn does is done again, so it is idempotent.
func each(ctx context.Context, c *cluster, gvr schema.GroupVersionResource, done func(*unstructured.Unstructured) bool, fn func(*unstructured.Unstructured) error) error {
	l, err := c.list(ctx, gvr)
	if err != nil {
		return fmt.Errorf("cannot list %s: %w", gvr.Resource, err)
	}
	for _, o := range l {
		if o.GetDeletionTimestamp() != nil || done(o) {
			continue
		}
		if err := fn(o); err != nil {
			return fmt.Errorf("%s %s/%s: %w", gvr.Resource, o.GetNamespace(), o.GetName(), err)
		}
		if _, err := c.dyn.Resource(gvr).Namespace(o.GetNamespace()).UpdateStatus(ctx, o, metav1.UpdateOptions{}); apierrors.IsConflict(err) {
			continue
		} else if err != nil {
			return fmt.Errorf("cannot report %s %s/%s: %w", gvr.Resource, o.GetNamespace(), o.GetName(), err)
		}
		fmt.Printf("cluster %s: %s %s/%s reported ready\n", c.name, gvr.Resource, o.GetNamespace(), o.GetName())
	}
	return nil
}

// readyCondition is a Ready condition; Rook's schemas have no
// observedGeneration in conditions, the ControlPlane's (metav1.Condition)
// has.
func readyCondition(reason, msg string) map[string]any {
	return map[string]any{
		"type": "Ready", "status": "True", "reason": reason, "message": msg,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}
}

// hasReady says whether the object reports a Ready condition for its
// current generation.
func hasReady(o *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" && m["status"] == "True" {
			g, ok := m["observedGeneration"].(int64)
			return !ok || g == o.GetGeneration()
		}
	}
	return false
}

// controlPlanes reports every ControlPlane Ready and writes its admin
// credential: the local Keystone's clouds.yaml, and the CA of its endpoints
// (key cacert).
func (s *standin) controlPlanes(ctx context.Context, c *cluster) error {
	return each(ctx, c, controlPlanes, hasReady, func(o *unstructured.Unstructured) error {
		region, _, _ := unstructured.NestedString(o.Object, "spec", "region")
		if err := s.registerRegion(ctx, region, slices.Contains(s.config.computeRegions, region)); err != nil {
			return err
		}
		secret, _, _ := unstructured.NestedString(o.Object, "spec", "korc", "adminCredential", "cloudCredentialsRef", "secretName")
		if secret != "" {
			if err := s.apply(ctx, c, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: o.GetNamespace()},
				Data:       s.adminCredentialData(),
			}); err != nil {
				return err
			}
		}
		if err := s.apply(ctx, c, s.ovnConfigMap(o.GetNamespace())); err != nil {
			return err
		}
		if tls, err := s.ovnClientTLS(o.GetNamespace()); err != nil || tls != nil {
			if err == nil {
				err = s.apply(ctx, c, tls)
			}
			if err != nil {
				return fmt.Errorf("the OVN client certificate: %w", err)
			}
		}
		ready := readyCondition("Ready", "operator-standin: the local OpenStack stands in for every service")
		ready["observedGeneration"] = o.GetGeneration()
		services, _, _ := unstructured.NestedMap(o.Object, "spec", "services")
		var st []any
		for name := range services {
			st = append(st, map[string]any{"name": name, "ready": true})
		}
		o.Object["status"] = map[string]any{
			"observedGeneration": o.GetGeneration(),
			"services":           st,
			"conditions":         []any{ready},
		}
		return nil
	})
}

// cephClusters reports every CephCluster Ready with the local Ceph's
// health and capacity, and publishes its monitors and admin key as Rook
// does.
func (s *standin) cephClusters(ctx context.Context, c *cluster) error {
	done := func(o *unstructured.Unstructured) bool {
		p, _, _ := unstructured.NestedString(o.Object, "status", "phase")
		return p == "Ready" && hasReady(o)
	}
	return each(ctx, c, cephClusters, done, func(o *unstructured.Unstructured) error {
		ceph := s.cephFor(o)
		facts, err := ceph.Facts()
		if err != nil {
			return err
		}
		ns := o.GetNamespace()
		if err := s.apply(ctx, c, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph-mon", Namespace: ns},
			Data:       map[string][]byte{"admin-secret": []byte(ceph.key), "fsid": []byte(facts.FSID)},
		}); err != nil {
			return err
		}
		if err := s.apply(ctx, c, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph-mon-endpoints", Namespace: ns},
			Data:       map[string]string{"data": ceph.mon},
		}); err != nil {
			return err
		}
		o.Object["status"] = map[string]any{
			"phase": "Ready", "state": "Created", "message": "Cluster created successfully (operator-standin: the local Ceph)",
			"ceph": map[string]any{
				"health": facts.Health, "fsid": facts.FSID,
				"capacity": map[string]any{"bytesTotal": facts.Total, "bytesAvailable": facts.Available, "bytesUsed": facts.Used,
					"lastUpdated": time.Now().UTC().Format(time.RFC3339)},
			},
			"conditions": []any{readyCondition("ClusterCreated", "Cluster created successfully")},
		}
		return nil
	})
}

// cephClients does Rook's part for a CephClient: the user client.<name>
// with the CephClient's caps in the local Ceph, its key in Secret
// rook-ceph-client-<name> under <name>, phase Ready, once the cluster has
// its CephCluster. Every pool cluster on the same local Ceph shares the
// user.
func (s *standin) cephClients(ctx context.Context, c *cluster) error {
	done := func(o *unstructured.Unstructured) bool {
		p, _, _ := unstructured.NestedString(o.Object, "status", "phase")
		return p == "Ready"
	}
	ceph, err := s.cephOf(ctx, c)
	if err != nil || ceph == nil {
		return err
	}
	return each(ctx, c, cephClients, done, func(o *unstructured.Unstructured) error {
		caps, _, _ := unstructured.NestedStringMap(o.Object, "spec", "caps")
		args := []string{"auth", "get-or-create", "client." + o.GetName()}
		for _, k := range slices.Sorted(maps.Keys(caps)) {
			args = append(args, k, caps[k])
		}
		var users []struct {
			Key string `json:"key"`
		}
		if err := ceph.JSON(&users, args...); err != nil {
			return err
		}
		if len(users) != 1 || users[0].Key == "" {
			return fmt.Errorf("ceph %s returned no key", strings.Join(args, " "))
		}
		secret := rookClientSecret(o.GetName())
		if err := s.apply(ctx, c, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: o.GetNamespace()},
			Data:       map[string][]byte{o.GetName(): []byte(users[0].Key)},
		}); err != nil {
			return err
		}
		o.Object["status"] = map[string]any{"phase": "Ready", "info": map[string]any{"secretName": secret}}
		return nil
	})
}

// rookClientSecret is the Secret Rook keeps a CephClient's key in.
func rookClientSecret(client string) string { return "rook-ceph-client-" + client }

// pools reports Rook's block pools, filesystems and object stores Ready.
func (s *standin) pools(ctx context.Context, c *cluster) error {
	done := func(o *unstructured.Unstructured) bool { return hasReady(o) }
	for _, gvr := range rookPools {
		if err := each(ctx, c, gvr, done, func(o *unstructured.Unstructured) error {
			o.Object["status"] = map[string]any{
				"phase":      "Ready",
				"conditions": []any{readyCondition("Created", "operator-standin: stands in for Rook, nothing is deployed")},
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// namespaces does the namespace controller's part for deleted namespaces
// (a Shoot's cluster here has no kube-controller-manager, so a deleted
// namespace would stay Terminating and the Object that made it would wait
// for it forever): it deletes what this stand-in and the functions place in
// namespaces — ControlPlanes, Secrets, ConfigMaps — and then finalizes the
// namespace.
func (s *standin) namespaces(ctx context.Context, c *cluster) error {
	l, err := c.namespaces(ctx)
	if err != nil {
		return fmt.Errorf("cannot list namespaces: %w", err)
	}
	for i := range l {
		ns := &l[i]
		if ns.DeletionTimestamp == nil || len(ns.Spec.Finalizers) == 0 {
			continue
		}
		all := metav1.ListOptions{}
		if err := c.dyn.Resource(controlPlanes).Namespace(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{}, all); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s: cannot delete its ControlPlanes: %w", ns.Name, err)
		}
		if err := c.kube.CoreV1().Secrets(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{}, all); err != nil {
			return fmt.Errorf("namespace %s: cannot delete its Secrets: %w", ns.Name, err)
		}
		if err := c.kube.CoreV1().ConfigMaps(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{}, all); err != nil {
			return fmt.Errorf("namespace %s: cannot delete its ConfigMaps: %w", ns.Name, err)
		}
		// The arbiter monitor's Deployment (arbiter.go), a cloud's
		// nova-compute (compute.go).
		if err := c.kube.AppsV1().Deployments(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{}, all); err != nil {
			return fmt.Errorf("namespace %s: cannot delete its Deployments: %w", ns.Name, err)
		}
		if err := c.kube.AppsV1().DaemonSets(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{}, all); err != nil {
			return fmt.Errorf("namespace %s: cannot delete its DaemonSets: %w", ns.Name, err)
		}
		ns.Spec.Finalizers = nil
		if _, err := c.kube.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("cannot finalize namespace %s: %w", ns.Name, err)
		}
		fmt.Printf("cluster %s: namespace %s emptied and finalized\n", c.name, ns.Name)
	}
	return nil
}

// apply creates or replaces a Secret or ConfigMap.
func (s *standin) apply(ctx context.Context, c *cluster, obj any) error {
	switch o := obj.(type) {
	case *corev1.Secret:
		_, err := c.kube.CoreV1().Secrets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			_, err = c.kube.CoreV1().Secrets(o.Namespace).Update(ctx, o, metav1.UpdateOptions{})
		}
		return err
	case *corev1.ConfigMap:
		_, err := c.kube.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			_, err = c.kube.CoreV1().ConfigMaps(o.Namespace).Update(ctx, o, metav1.UpdateOptions{})
		}
		return err
	}
	return fmt.Errorf("cannot apply %T", obj)
}

// adminCredential turns the local OpenStack's clouds.yaml (cloud "admin",
// its cacert a file on this machine) into the admin credential a
// ControlPlane's Secret holds in a landscape: key clouds.yaml naming the CA
// as "cacert", and key cacert with the CA itself (what K-ORC reads, and the
// composed ProviderConfig passes on as its caBundleSecretRef).
func adminCredential(cloudsYAML []byte) ([]byte, []byte, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(cloudsYAML, &doc); err != nil {
		return nil, nil, err
	}
	clouds, _ := doc["clouds"].(map[string]any)
	admin, ok := clouds["admin"].(map[string]any)
	if !ok {
		return nil, nil, errors.New(`no cloud "admin"`)
	}
	path, _ := admin["cacert"].(string)
	if path == "" {
		return cloudsYAML, nil, nil
	}
	ca, err := os.ReadFile(path) //nolint:gosec // the local OpenStack's CA, named by its clouds.yaml
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read the CA the clouds.yaml names: %w", err)
	}
	admin["cacert"] = adminCACertKey
	out, err := yaml.Marshal(doc)
	return out, ca, err
}

// adminCACertKey is the admin credential Secret's key of the CA.
const adminCACertKey = "cacert"

func (s *standin) adminCredentialData() map[string][]byte {
	d := map[string][]byte{"clouds.yaml": s.secretClouds}
	if len(s.caBundle) > 0 {
		d[adminCACertKey] = s.caBundle
	}
	return d
}
