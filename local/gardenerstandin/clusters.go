package gardenerstandin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/c5c3/consumer-plane/local/garden"
)

// Clusters gives every Shoot a cluster of its own: a kube-apiserver (from
// KUBEBUILDER_ASSETS, started the way envtest starts it) on one etcd shared
// by all of them, each under its own key prefix. A Shoot's cluster comes
// with the CRDs and namespaces it is given (the demo gives none: each
// cluster's layer brings them through Flux) and a Node for each of its worker's first
// machines (Worker), with no kubelet behind them, so nothing scheduled
// there runs — see cmd/operator-standin for who reports the operators'
// state and runs the node agents.
type Clusters struct {
	// Address is where the Shoots' kube-apiservers listen and what they
	// advertise; empty is 127.0.0.1. On a plane with a node, its address:
	// pods on the node's bridge (provider-kubernetes) reach the Shoots there.
	Address string
	// MaxNodes bounds the Nodes of one cluster (0: one): a pool of 100
	// workers gets MaxNodes of them, each of which runs node agents.
	MaxNodes int

	dir        string
	crds       []CRDs
	namespaces []string
	etcd       *envtest.Etcd
	// Starting a kube-apiserver takes seconds of CPU: start few at once.
	starting chan struct{}

	mu      sync.Mutex
	running map[string]*shootCluster
	// spares are clusters started before a Shoot asks for one (Spares).
	spares []*spare
	// stopped: Stop was called; spares not started yet never start.
	stopped bool
}

// A spare is a Shoot cluster started before any Shoot asks for it, with
// what every cluster of its kind gets (the CRDs, namespaces and bindings of
// prepare), on an etcd prefix and client CA of its own: the next new Shoot
// of that kind and those admission plugins takes it (Ensure) instead of
// waiting for a start. Gardener itself starts a Shoot's control plane in
// minutes; the stand-in's starts, a dozen at once on two cores, took most
// of the demo's time to its pools (docs/benchmarks.md).
type spare struct {
	kind, plugins string
	// ready is closed once the start ended, with info, plane and err.
	ready chan struct{}
	info  Cluster
	plane *envtest.ControlPlane
	err   error
}

type shootCluster struct {
	plane *envtest.ControlPlane
	info  Cluster
	done  bool
	err   error
}

// A Cluster is what gardenlet publishes of a Shoot's cluster, and its admin
// kubeconfig for the stand-ins of what runs inside it.
type Cluster struct {
	// Server is the kube-apiserver's URL (the Shoot's advertised address).
	Server string
	// ServingCA is the CA of the kube-apiserver's serving certificate
	// (Gardener's <shoot>.ca-cluster).
	ServingCA []byte
	// ClientCA is the CA the kube-apiserver trusts for client certificates
	// (Gardener's <shoot>.ca-client), with which shoots/adminkubeconfig
	// issues kubeconfigs.
	ClientCA *garden.CA
	// Kubeconfig is an admin kubeconfig issued by the stand-in.
	Kubeconfig []byte
	// UID is the Shoot's the cluster was started for.
	UID string
}

// CRDs is a directory of CRDs the clusters of one kind of Shoot get: those
// whose c5c3.io/pool-kind label is Kind (the operators of a storage pool
// are not in a hypervisor pool), or every Shoot's when Kind is empty.
type CRDs struct {
	Kind string
	Dir  string
}

// ParseCRDs reads [KIND=]DIR.
func ParseCRDs(v string) CRDs {
	if kind, dir, ok := strings.Cut(v, "="); ok {
		return CRDs{Kind: kind, Dir: dir}
	}
	return CRDs{Dir: v}
}

// dirs are the CRD directories a Shoot of kind gets. A Shoot without a
// kind gets all of them, as every Shoot did before kinds.
func (c *Clusters) dirs(kind string) []string {
	var out []string
	for _, d := range c.crds {
		if d.Kind == "" || kind == "" || d.Kind == kind {
			out = append(out, d.Dir)
		}
	}
	return out
}

// NewClusters starts the shared etcd. Each Shoot cluster's admin kubeconfig
// is also written to dir as <namespace>.<shoot>.kubeconfig, for the
// stand-ins of what runs inside Shoots. crds are directories of CRDs and
// namespaces the names of namespaces every Shoot cluster gets.
func NewClusters(dir string, crds []CRDs, namespaces []string) (*Clusters, error) {
	etcd := &envtest.Etcd{}
	if err := etcd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the Shoot clusters' etcd: %w", err)
	}
	return &Clusters{dir: dir, crds: crds, namespaces: namespaces, etcd: etcd,
		starting: make(chan struct{}, 2), running: map[string]*shootCluster{}}, nil
}

// Ensure starts the Shoot's cluster unless it runs or is starting. It
// returns the cluster and whether it serves, and the error that stopped its
// start. The Shoot's UID keeps a recreated Shoot from seeing its
// predecessor's objects: a cluster that serves is always the Shoot with
// that UID's. A change of s after the start is not applied (gardenlet
// would roll the kube-apiserver; a kind does not change).
func (c *Clusters) Ensure(namespace, shoot string, s Spec) (Cluster, bool, error) {
	uid := s.UID
	c.mu.Lock()
	defer c.mu.Unlock()
	k := Key(namespace, shoot)
	if sc, ok := c.running[k]; ok {
		switch {
		case sc.done && sc.err != nil:
			// Try again at the next call.
			delete(c.running, k)
		case sc.done && sc.info.UID != uid:
			// The Shoot was deleted and created again between two calls:
			// its new cluster starts empty, as Gardener's would.
			delete(c.running, k)
			go func() { _ = sc.plane.APIServer.Stop() }() //nolint:errcheck // best effort
			return Cluster{}, false, nil
		}
		return sc.info, sc.done && sc.err == nil, sc.err
	}
	sc := &shootCluster{}
	c.running[k] = sc
	sp := c.takeSpare(s.Kind, s.Plugins)
	go func() {
		nodes := s.Worker.Nodes(k, c.MaxNodes)
		var info Cluster
		var plane *envtest.ControlPlane
		err := errNoSpare
		if sp != nil {
			<-sp.ready
			if err = sp.err; err == nil {
				info, plane, err = c.adopt(k, uid, sp, nodes)
			}
		}
		if err != nil {
			// No spare, or one that did not start: start the Shoot's own.
			c.starting <- struct{}{}
			info, plane, err = c.start(k, uid, c.dirs(s.Kind), nodes, s.Plugins...)
			<-c.starting
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		sc.info, sc.plane, sc.err, sc.done = info, plane, err, true
		if c.running[k] != sc && plane != nil {
			// Removed while starting.
			_ = plane.APIServer.Stop() //nolint:errcheck // best effort
		}
	}()
	return Cluster{}, false, nil
}

// errNoSpare: the Shoot takes no spare cluster.
var errNoSpare = errors.New("no spare cluster")

// Spare asks for N spare clusters of a pool kind.
type Spare struct {
	Kind string
	N    int
}

// ParseSpare reads KIND=N.
func ParseSpare(v string) (Spare, error) {
	kind, n, ok := strings.Cut(v, "=")
	i, err := strconv.Atoi(n)
	if !ok || err != nil || i < 0 {
		return Spare{}, fmt.Errorf("%q: want KIND=N, N a count of clusters", v)
	}
	return Spare{Kind: kind, N: i}, nil
}

// Spares starts the spare clusters asked for, in that order, whose
// kube-apiservers enable plugins, the Shoots' own admission plugins
// (AdmissionPlugins): a Shoot enabling others gets a cluster of its own.
// They start in the background, few at once as every start does, in the
// order given (local/demo/up.sh says which order and why).
func (c *Clusters) Spares(spares []Spare, plugins []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var queued []*spare
	for _, want := range spares {
		for range want.N {
			sp := &spare{kind: want.Kind, plugins: pluginSet(plugins), ready: make(chan struct{})}
			c.spares = append(c.spares, sp)
			queued = append(queued, sp)
		}
	}
	go func() {
		for i, sp := range queued {
			c.starting <- struct{}{}
			c.mu.Lock()
			stopped := c.stopped
			c.mu.Unlock()
			if stopped {
				<-c.starting
				sp.err = errNoSpare
				close(sp.ready)
				continue
			}
			go func() {
				defer close(sp.ready)
				defer func() { <-c.starting }()
				name := fmt.Sprintf("spare-%s-%d", sp.kind, i)
				sp.info, sp.plane, sp.err = c.boot(name, "/shoots/"+name+"-"+strconv.FormatInt(time.Now().UnixNano(), 36), c.dirs(sp.kind), plugins...)
				if sp.err != nil {
					fmt.Fprintf(os.Stderr, "gardener-standin: spare cluster %s: %v\n", name, sp.err)
				}
			}()
		}
	}()
}

// takeSpare takes a spare of kind with plugins out of the spares, started
// or still starting, if there is one. c.mu is held.
func (c *Clusters) takeSpare(kind string, plugins []string) *spare {
	i := slices.IndexFunc(c.spares, func(sp *spare) bool { return sp.kind == kind && sp.plugins == pluginSet(plugins) })
	if i < 0 {
		return nil
	}
	sp := c.spares[i]
	c.spares = slices.Delete(c.spares, i, i+1)
	return sp
}

// pluginSet is a set of admission plugins as one comparable string.
func pluginSet(plugins []string) string {
	return strings.Join(slices.Sorted(slices.Values(plugins)), ",")
}

// adopt makes a started spare the cluster of Shoot k (UID uid): its Nodes
// registered and its admin kubeconfig written, as start ends.
func (c *Clusters) adopt(k, uid string, sp *spare, nodes []corev1.Node) (Cluster, *envtest.ControlPlane, error) {
	if err := c.finish(k, sp.info.Kubeconfig, nodes); err != nil {
		_ = sp.plane.APIServer.Stop() //nolint:errcheck // the adoption failed anyway
		return Cluster{}, nil, err
	}
	info := sp.info
	info.UID = uid
	return info, sp.plane, nil
}

// start starts the cluster of Shoot k (UID uid): its kube-apiserver on the
// Shoot's own etcd prefix with what its kind gets (boot), then its Nodes
// and admin kubeconfig (finish).
func (c *Clusters) start(k, uid string, crds []string, nodes []corev1.Node, plugins ...string) (Cluster, *envtest.ControlPlane, error) {
	info, plane, err := c.boot(k, "/shoots/"+uid, crds, plugins...)
	if err != nil {
		return Cluster{}, nil, err
	}
	if err := c.finish(k, info.Kubeconfig, nodes); err != nil {
		_ = plane.APIServer.Stop() //nolint:errcheck // the start failed anyway
		return Cluster{}, nil, err
	}
	info.UID = uid
	return info, plane, nil
}

// finish registers the Nodes of Shoot k and writes its admin kubeconfig.
// No kubelet runs them: a Node only says which machine of the worker pool
// it is, with the worker's labels and its zone.
func (c *Clusters) finish(k string, kc []byte, nodes []corev1.Node) error {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for i := range nodes {
		_, err = cs.CoreV1().Nodes().Create(context.Background(), &nodes[i], metav1.CreateOptions{})
		if err != nil && !kerrors.IsAlreadyExists(err) {
			return fmt.Errorf("cannot register node %s of Shoot %s: %w", nodes[i].Name, k, err)
		}
	}
	return os.WriteFile(filepath.Join(c.dir, k+".kubeconfig"), kc, 0o600)
}

// boot starts a kube-apiserver named name on etcd prefix and prepares it
// (prepare) with crds: a Shoot's (start) or a spare (Spares).
func (c *Clusters) boot(name, prefix string, crds []string, plugins ...string) (Cluster, *envtest.ControlPlane, error) {
	// Each Shoot's cluster trusts a client CA of its own, an RSA one, as
	// gardenlet's <shoot>.ca-client is: Gardener signs the certificates of
	// shoots/adminkubeconfig with it.
	ca, err := garden.NewCA("ca-client-" + name)
	if err != nil {
		return Cluster{}, nil, err
	}
	// envtest gives up on a kube-apiserver that is not healthy within 20 s
	// and the stand-in starts it again from nothing; on a loaded 2-core
	// machine (a dozen Shoots starting beside the management plane) a start
	// took longer, and every retry threw its work away: the pools' Shoots
	// were ready minutes late. A start that takes long is let finish.
	api := &envtest.APIServer{EtcdURL: c.etcd.URL, StartTimeout: 3 * time.Minute}
	if c.Address != "" {
		// envtest picks a port on 127.0.0.1 unless given both; its serving
		// certificate names the address.
		port, err := garden.FreePort(c.Address)
		if err != nil {
			return Cluster{}, nil, err
		}
		api.SecureServing.Address, api.SecureServing.Port = c.Address, strconv.Itoa(port)
	}
	api.SecureServing.Authn = &clientCAAuthn{ca: ca}
	api.Configure().Set("etcd-prefix", prefix).
		// As a Shoot's: kubelets are authorized by the Node authorizer and
		// kept to their own node and off the labels under
		// node-restriction.kubernetes.io/ (the hypervisor pools' placement
		// label) by NodeRestriction; and the Shoot's own plugins.
		Set("authorization-mode", "Node,RBAC").
		Set("enable-admission-plugins", strings.Join(append([]string{"NodeRestriction"}, plugins...), ","))
	plane := &envtest.ControlPlane{APIServer: api, Etcd: c.etcd}
	if err := api.Start(); err != nil {
		return Cluster{}, nil, fmt.Errorf("cannot start the kube-apiserver of %s: %w", name, err)
	}
	kc, err := c.prepare(plane, crds)
	if err != nil {
		_ = api.Stop() //nolint:errcheck // the start failed anyway
		return Cluster{}, nil, fmt.Errorf("cannot prepare the cluster of %s: %w", name, err)
	}
	return Cluster{Server: api.SecureServing.URL("https", "").String(), ServingCA: api.SecureServing.CA, ClientCA: ca, Kubeconfig: kc}, plane, nil
}

// prepare makes the admin user and installs what every Shoot has: the
// bindings gardenlet deploys for the groups of Gardener's admin
// kubeconfigs, the namespaces of the landscape's operators, and the CRDs of
// those of its kind. It returns the admin kubeconfig.
// A Shoot's data outlives a failed start (its etcd prefix is the Shoot's
// UID), so every step takes what an earlier attempt left as done.
func (c *Clusters) prepare(plane *envtest.ControlPlane, crds []string) ([]byte, error) {
	u, err := plane.AddUser(envtest.User{Name: "shoot-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return nil, err
	}
	if err := bindGardenerGroups(u.Config()); err != nil {
		return nil, err
	}
	if len(crds) > 0 {
		// envtest waits 10 s for the CRDs to be served; a dozen Shoots
		// starting at once on two cores took longer.
		opts := envtest.CRDInstallOptions{Paths: crds, ErrorIfPathMissing: true, MaxTime: 2 * time.Minute}
		if _, err := envtest.InstallCRDs(u.Config(), opts); err != nil {
			return nil, err
		}
	}
	cs, err := kubernetes.NewForConfig(u.Config())
	if err != nil {
		return nil, err
	}
	for _, ns := range c.namespaces {
		_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !kerrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("cannot create namespace %s: %w", ns, err)
		}
	}
	return kc, nil
}

// Keep stops the clusters of every Shoot not in keep (namespace.shoot),
// all at once: each kube-apiserver takes seconds to stop.
func (c *Clusters) Keep(keep map[string]bool) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var stopped []string
	var wg sync.WaitGroup
	for k, sc := range c.running {
		if keep[k] {
			continue
		}
		delete(c.running, k)
		_ = os.Remove(filepath.Join(c.dir, k+".kubeconfig")) //nolint:errcheck // may not exist yet
		if sc.plane != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = sc.plane.APIServer.Stop() //nolint:errcheck // best effort
			}()
		}
		stopped = append(stopped, k)
	}
	wg.Wait()
	return stopped
}

// Stop stops every Shoot cluster, every spare and the etcd.
func (c *Clusters) Stop() {
	c.Keep(nil)
	c.mu.Lock()
	spares := c.spares
	c.spares, c.stopped = nil, true
	c.mu.Unlock()
	for _, sp := range spares {
		<-sp.ready
		if sp.plane != nil {
			_ = sp.plane.APIServer.Stop() //nolint:errcheck // on the way out
		}
	}
	_ = c.etcd.Stop() //nolint:errcheck // on the way out
}

// Key is how Keep names a Shoot.
func Key(namespace, shoot string) string { return namespace + "." + shoot }

// gardenerAdminGroups are the groups of the certificates shoots/adminkubeconfig
// issues: system admins (who may list every Secret of the garden) and
// project admins. gardenlet binds both to cluster-admin in every Shoot.
var gardenerAdminGroups = []string{"gardener.cloud:system:admins", "gardener.cloud:project:admins"}

func bindGardenerGroups(cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, g := range gardenerAdminGroups {
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: g},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: g}},
		}
		_, err := cs.RbacV1().ClusterRoleBindings().Create(context.Background(), crb, metav1.CreateOptions{})
		if err != nil && !kerrors.IsAlreadyExists(err) {
			return fmt.Errorf("cannot bind group %s: %w", g, err)
		}
	}
	return nil
}

// clientCAAuthn is envtest's client-certificate authentication with a CA of
// the caller's: envtest's own CA is ECDSA and keeps its key private.
type clientCAAuthn struct {
	ca  *garden.CA
	dir string
}

func (a *clientCAAuthn) file() string { return filepath.Join(a.dir, "client-ca.crt") }

func (a *clientCAAuthn) Configure(workDir string, args *envtest.Arguments) error {
	a.dir = workDir
	args.Set("client-ca-file", a.file())
	return nil
}

func (a *clientCAAuthn) Start() error { return os.WriteFile(a.file(), a.ca.CertPEM(), 0o600) }

func (a *clientCAAuthn) AddUser(u envtest.User, base *rest.Config) (*rest.Config, error) {
	p, err := a.ca.Client(u.Name, u.Groups...)
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(base)
	cfg.CertData, cfg.KeyData = p.Cert, p.Key
	return cfg, nil
}

func (a *clientCAAuthn) Stop() error { return nil }
