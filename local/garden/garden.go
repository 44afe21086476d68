// Package garden serves Gardener's API on a local kube-apiserver the way
// a garden cluster does: the real gardener-apiserver (built by `make tools`
// from github.com/gardener/gardener, see tools/upstream/build.sh) runs beside
// the kube-apiserver on the same etcd, and the kube-apiserver aggregates its
// API groups (core.gardener.cloud and its siblings) through APIServices. A
// Shoot written to the local plane therefore meets Gardener's own
// validation, defaulting and admission plugins (CloudProfile regions, zones,
// machine types, Kubernetes versions, deletion confirmation), and
// shoots/adminkubeconfig is Gardener's own subresource.
//
// What differs from a garden: no gardenlet, Seed or extension runs, so a
// Shoot is admitted and stored but nothing reconciles it (a stand-in does
// gardenlet's part, see local/gardenerstandin); gardener-apiserver talks
// to the kube-apiserver as a member of system:masters instead of under its
// chart's ClusterRole; the aggregator reaches it through an ExternalName
// Service for localhost (as in Gardener's own envtest), since an endpoint
// may not be a loopback address.
package garden

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// EnvBinary names the environment variable that holds the path of the
// gardener-apiserver binary (tools/upstream/build.sh --env sets it).
const EnvBinary = "GARDENER_APISERVER"

// The API groups gardener-apiserver serves (apiserver.AllGardenerAPIGroupVersions)
// and how the aggregator ranks them (the values of Gardener's chart).
var groupVersions = []schema.GroupVersion{
	{Group: "core.gardener.cloud", Version: "v1beta1"},
	{Group: "core.gardener.cloud", Version: "v1"},
	{Group: "settings.gardener.cloud", Version: "v1alpha1"},
	{Group: "seedmanagement.gardener.cloud", Version: "v1alpha1"},
	{Group: "operations.gardener.cloud", Version: "v1alpha1"},
	{Group: "security.gardener.cloud", Version: "v1alpha1"},
}

const (
	serviceName      = "gardener-apiserver"
	serviceNamespace = "kube-system"
	frontProxyUser   = "front-proxy-client"
	// fieldManager owns what this package applies.
	fieldManager = "localgarden"
)

var (
	gvrAPIService = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	gvrService    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	// GVRShoots are Gardener's Shoots.
	GVRShoots = schema.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"}
)

// A Garden is gardener-apiserver aggregated into one local kube-apiserver.
type Garden struct {
	binary string
	dir    string
	ca     *CA
	port   int

	cmd  *exec.Cmd
	done chan error
}

// Binary returns the gardener-apiserver of the environment, or an error that
// says how to get it.
func Binary() (string, error) {
	b := os.Getenv(EnvBinary)
	if b == "" {
		return "", fmt.Errorf("%s is not set: run `make tools` (tools/upstream/build.sh gardener builds gardener-apiserver) and take the environment of tools/upstream/build.sh --env", EnvBinary)
	}
	if _, err := os.Stat(b); err != nil {
		return "", fmt.Errorf("no gardener-apiserver at %s (%s): run `make tools`", b, EnvBinary)
	}
	return b, nil
}

// Prepare readies a garden for env before env starts: gardener-apiserver is
// binary, its certificates and log go to dir, and env's kube-apiserver is
// made an aggregator able to proxy to it. Call StartIn once env serves.
func Prepare(env *envtest.Environment, binary, dir string) (*Garden, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := NewCA("local-garden-ca")
	if err != nil {
		return nil, err
	}
	port, err := FreePort("127.0.0.1")
	if err != nil {
		return nil, err
	}
	g := &Garden{binary: binary, dir: dir, ca: ca, port: port}
	return g, g.configure(env.ControlPlane.GetAPIServer())
}

// configure makes api an aggregator able to proxy to gardener-apiserver: it
// trusts the front proxy's CA for the identity headers and presents the
// front proxy's client certificate (what kubeadm's flags give a cluster).
func (g *Garden) configure(api *envtest.APIServer) error {
	proxyCA, err := NewCA("front-proxy-ca")
	if err != nil {
		return err
	}
	client, err := proxyCA.Client(frontProxyUser)
	if err != nil {
		return err
	}
	caFile := filepath.Join(g.dir, "front-proxy-ca.crt")
	if err := os.WriteFile(caFile, proxyCA.CertPEM(), 0o600); err != nil {
		return err
	}
	crt, key, err := client.write(g.dir, frontProxyUser)
	if err != nil {
		return err
	}
	args := api.Configure()
	args.Set("requestheader-client-ca-file", caFile)
	args.Set("requestheader-allowed-names", frontProxyUser)
	args.Set("requestheader-username-headers", "X-Remote-User")
	args.Set("requestheader-group-headers", "X-Remote-Group")
	args.Set("requestheader-extra-headers-prefix", "X-Remote-Extra-")
	args.Set("proxy-client-cert-file", crt)
	args.Set("proxy-client-key-file", key)
	return nil
}

// StartIn runs gardener-apiserver beside env, which serves: on env's etcd
// (its objects live under their own prefix there), talking to env's
// kube-apiserver as a member of system:masters — it must be allowed
// delegated authentication and authorization and the informers of its
// admission plugins; Gardener's chart gives it a ClusterRole of its own.
// It registers the API groups and returns once Shoots can be listed through
// the kube-apiserver.
func (g *Garden) StartIn(ctx context.Context, env *envtest.Environment) error {
	u, err := env.ControlPlane.AddUser(envtest.User{Name: "gardener-apiserver", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	return g.start(ctx, u.Config(), env.ControlPlane.Etcd.URL.String())
}

// start launches gardener-apiserver, on another free port when the one it
// was given was taken before it bound it: the port is free when chosen, but
// test binaries start their API servers side by side (make test-integration
// runs five), and one took it while kube-apiserver started (stop 83).
func (g *Garden) start(ctx context.Context, kube *rest.Config, etcdURL string) error {
	for attempt := 1; ; attempt++ {
		err := g.launch(ctx, kube, etcdURL)
		if err == nil || attempt == 3 || !g.portTaken() {
			return err
		}
		if g.port, err = FreePort("127.0.0.1"); err != nil {
			return err
		}
	}
}

// portTaken reports whether the last launch failed to bind its port.
func (g *Garden) portTaken() bool {
	b, err := os.ReadFile(filepath.Join(g.dir, "gardener-apiserver.log"))
	return err == nil && bytes.Contains(b, []byte("bind: address already in use"))
}

func (g *Garden) launch(ctx context.Context, kube *rest.Config, etcdURL string) error {
	serving, err := g.ca.Server(serviceName, serviceName+"."+serviceNamespace+".svc", "localhost", "127.0.0.1")
	if err != nil {
		return err
	}
	crt, key, err := serving.write(g.dir, serviceName)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(g.dir, "gardener-apiserver.kubeconfig")
	if err := writeKubeconfig(kubeconfig, kube); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(g.dir, "gardener-apiserver.log"))
	if err != nil {
		return err
	}
	g.cmd = exec.Command(g.binary, //nolint:gosec // the binary of the tool cache
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(g.port),
		"--etcd-servers="+etcdURL,
		"--tls-cert-file="+crt, "--tls-private-key-file="+key,
		"--cluster-identity=local-garden",
		"--kubeconfig="+kubeconfig, "--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--authorization-always-allow-paths=/healthz,/readyz,/livez",
		"--log-level=info", "--log-format=text")
	g.cmd.Stdout, g.cmd.Stderr = log, log
	if err := g.cmd.Start(); err != nil {
		_ = log.Close() //nolint:errcheck // the start failed anyway
		return fmt.Errorf("cannot start gardener-apiserver: %w", err)
	}
	g.done = make(chan error, 1)
	go func() { g.done <- g.cmd.Wait(); _ = log.Close() }() //nolint:errcheck // nothing left to write

	if err := g.register(ctx, kube); err != nil {
		_ = g.Stop() //nolint:errcheck // the start failed anyway
		return err
	}
	return nil
}

// register creates the Service the APIServices name and one APIService per
// group version, then waits until Shoots are served through the aggregator.
func (g *Garden) register(ctx context.Context, kube *rest.Config) error {
	dyn, err := dynamic.NewForConfig(kube)
	if err != nil {
		return err
	}
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": serviceName, "namespace": serviceNamespace},
		"spec":     map[string]any{"type": "ExternalName", "externalName": "localhost"},
	}}
	if err := ServerSideApply(ctx, dyn.Resource(gvrService).Namespace(serviceNamespace), svc, fieldManager); err != nil {
		return fmt.Errorf("cannot create Service %s/%s: %w", serviceNamespace, serviceName, err)
	}
	caBundle := base64.StdEncoding.EncodeToString(g.ca.CertPEM())
	for _, gv := range groupVersions {
		as := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": gv.Version + "." + gv.Group},
			"spec": map[string]any{
				"group": gv.Group, "version": gv.Version,
				"groupPriorityMinimum": int64(10000), "versionPriority": int64(20),
				"service":  map[string]any{"name": serviceName, "namespace": serviceNamespace, "port": int64(g.port)},
				"caBundle": caBundle,
			},
		}}
		if err := ServerSideApply(ctx, dyn.Resource(gvrAPIService), as, fieldManager); err != nil {
			return fmt.Errorf("cannot create APIService %s: %w", as.GetName(), err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	var last error
	for {
		select {
		case err := <-g.done:
			g.done <- err
			return fmt.Errorf("gardener-apiserver exited (%v): see %s", err, filepath.Join(g.dir, "gardener-apiserver.log"))
		default:
		}
		if _, last = dyn.Resource(GVRShoots).List(ctx, metav1.ListOptions{Limit: 1}); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("Shoots are not served through the kube-apiserver within 90s (see %s): %w", filepath.Join(g.dir, "gardener-apiserver.log"), last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Stop stops gardener-apiserver: SIGTERM, then SIGKILL after 10 seconds.
// Stopped once, it returns at once: a start that failed stops it, and so
// does the caller's deferred Stop (which waited forever on the exit the
// first had taken, holding a test binary past its timeout, stop 83).
func (g *Garden) Stop() error {
	if g.cmd == nil || g.cmd.Process == nil {
		return nil
	}
	_ = g.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // it may have exited
	var exit error
	select {
	case exit = <-g.done:
	case <-time.After(10 * time.Second):
		_ = g.cmd.Process.Kill() //nolint:errcheck // it may have exited
		exit = <-g.done
	}
	g.done <- exit // for the next Stop, and register's look at it
	return nil
}

// Port is where gardener-apiserver serves (on 127.0.0.1).
func (g *Garden) Port() int { return g.port }

func writeKubeconfig(file string, c *rest.Config) error {
	if len(c.CertData) == 0 || len(c.KeyData) == 0 {
		return errors.New("gardener-apiserver needs a client certificate user (rest.Config with CertData and KeyData)")
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAData}
	kc.AuthInfos["gardener-apiserver"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.CertData, ClientKeyData: c.KeyData}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "gardener-apiserver"}
	kc.CurrentContext = "local"
	return clientcmd.WriteToFile(*kc, file)
}

// FreePort is a port on host that nothing listens on now.
func FreePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("no free port on %s: %w", host, err)
	}
	defer l.Close() //nolint:errcheck // only its port was wanted
	return l.Addr().(*net.TCPAddr).Port, nil
}
