package gardenerstandin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Clusters gives every Shoot a cluster of its own: a kube-apiserver (from
// KUBEBUILDER_ASSETS, started the way envtest starts it) on one etcd shared
// by all of them, each under its own key prefix. A Shoot's cluster comes
// with what the landscape installs in every Shoot (CRDs and namespaces of
// the operators that run there); it has no nodes, so nothing in it ever
// runs — see cmd/operator-standin for who reports the operators' state.
type Clusters struct {
	dir        string
	crds       []string
	namespaces []string
	etcd       *envtest.Etcd
	// Starting a kube-apiserver takes seconds of CPU: start few at once.
	starting chan struct{}

	mu      sync.Mutex
	running map[string]*shootCluster
}

type shootCluster struct {
	plane      *envtest.ControlPlane
	kubeconfig []byte
	done       bool
	err        error
}

// NewClusters starts the shared etcd. Each Shoot cluster's admin kubeconfig
// is also written to dir as <namespace>.<shoot>.kubeconfig, for the
// stand-ins of what runs inside Shoots. crds are directories of CRDs and
// namespaces the names of namespaces every Shoot cluster gets.
func NewClusters(dir string, crds, namespaces []string) (*Clusters, error) {
	etcd := &envtest.Etcd{}
	if err := etcd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the Shoot clusters' etcd: %w", err)
	}
	return &Clusters{dir: dir, crds: crds, namespaces: namespaces, etcd: etcd,
		starting: make(chan struct{}, 2), running: map[string]*shootCluster{}}, nil
}

// Ensure starts the Shoot's cluster unless it runs or is starting. It
// reports whether the cluster serves, and the error that stopped its start.
// uid keeps a recreated Shoot from seeing its predecessor's objects.
func (c *Clusters) Ensure(namespace, shoot, uid string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := Key(namespace, shoot)
	if sc, ok := c.running[k]; ok {
		if sc.done && sc.err != nil {
			// Try again at the next call.
			delete(c.running, k)
		}
		return sc.done && sc.err == nil, sc.err
	}
	sc := &shootCluster{}
	c.running[k] = sc
	go func() {
		c.starting <- struct{}{}
		kc, plane, err := c.start(k, uid)
		<-c.starting
		c.mu.Lock()
		defer c.mu.Unlock()
		sc.kubeconfig, sc.plane, sc.err, sc.done = kc, plane, err, true
		if c.running[k] != sc && plane != nil {
			// Removed while starting.
			_ = plane.APIServer.Stop() //nolint:errcheck // best effort
		}
	}()
	return false, nil
}

func (c *Clusters) start(k, uid string) ([]byte, *envtest.ControlPlane, error) {
	api := &envtest.APIServer{EtcdURL: c.etcd.URL}
	api.Configure().Set("etcd-prefix", "/shoots/"+uid)
	plane := &envtest.ControlPlane{APIServer: api, Etcd: c.etcd}
	if err := api.Start(); err != nil {
		return nil, nil, fmt.Errorf("cannot start the kube-apiserver of Shoot %s: %w", k, err)
	}
	kc, err := c.prepare(plane)
	if err != nil {
		_ = api.Stop() //nolint:errcheck // the start failed anyway
		return nil, nil, fmt.Errorf("cannot prepare the cluster of Shoot %s: %w", k, err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, k+".kubeconfig"), kc, 0o600); err != nil {
		_ = api.Stop() //nolint:errcheck // the start failed anyway
		return nil, nil, err
	}
	return kc, plane, nil
}

// prepare makes the admin user and installs what every Shoot has.
func (c *Clusters) prepare(plane *envtest.ControlPlane) ([]byte, error) {
	u, err := plane.AddUser(envtest.User{Name: "shoot-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return nil, err
	}
	if len(c.crds) > 0 {
		if _, err := envtest.InstallCRDs(u.Config(), envtest.CRDInstallOptions{Paths: c.crds, ErrorIfPathMissing: true}); err != nil {
			return nil, err
		}
	}
	cs, err := kubernetes.NewForConfig(u.Config())
	if err != nil {
		return nil, err
	}
	for _, ns := range c.namespaces {
		_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("cannot create namespace %s: %w", ns, err)
		}
	}
	return kc, nil
}

// Kubeconfig is the admin kubeconfig of the Shoot's cluster, nil while it
// does not serve.
func (c *Clusters) Kubeconfig(namespace, shoot string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc, ok := c.running[Key(namespace, shoot)]; ok && sc.done && sc.err == nil {
		return sc.kubeconfig
	}
	return nil
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

// Stop stops every Shoot cluster and the etcd.
func (c *Clusters) Stop() {
	c.Keep(nil)
	_ = c.etcd.Stop() //nolint:errcheck // on the way out
}

// Key is how Keep names a Shoot.
func Key(namespace, shoot string) string { return namespace + "." + shoot }
