//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// registry is the local OCI registry make demo pushes the packages to.
const registry = "127.0.0.1:5050"

// installedAsShipped: CobaltCore came from the local registry as a platform
// engineer installs it (the Configuration; core resolved the functions),
// and every package runs as core's Deployment runtime made it; the node
// agents run the images their DaemonSets name, pulled through the node's
// mirror of xpkg.c5c3.io.
func installedAsShipped(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, r := range []schema.GroupVersionResource{configurations, providers, functions} {
		l, err := plane.dyn.Resource(r).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("cannot list %s: %v", r.Resource, err)
		}
		for _, p := range l.Items {
			t.Run(r.Resource+" "+p.GetName()+" pulled from the local registry", func(t *testing.T) {
				if img := nested(p.Object, "status", "resolvedPackage"); !strings.HasPrefix(img, registry+"/") {
					t.Errorf("%s/%s was not pulled from the local registry: %q", r.Resource, p.GetName(), img)
				}
			})
		}
	}
	t.Run("the Configuration's dependencies are resolved by core (no skipDependencyResolution)", func(t *testing.T) {
		cfg, err := plane.dyn.Resource(configurations).Get(t.Context(), "configuration-cobaltcore", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the Configuration: %v", err)
		}
		if skip, _, _ := unstructured.NestedBool(cfg.Object, "spec", "skipDependencyResolution"); skip {
			t.Errorf("the Configuration skips dependency resolution")
		}
	})
	for _, fn := range cobaltcoreFunctions {
		t.Run("function-"+fn+" was installed by core as a dependency of the Configuration", func(t *testing.T) {
			f, err := plane.dyn.Resource(functions).Get(t.Context(), "cobaltcore-function-"+fn, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("function-%s: %v", fn, err)
			}
			writers := map[string]bool{}
			for _, m := range f.GetManagedFields() {
				writers[m.Manager] = true
			}
			if len(writers) != 1 || !writers["crossplane"] {
				t.Errorf("function-%s: written by %v, not only by core's dependency resolution", fn, writers)
			}
		})
	}

	// Each package runs as core's Deployment runtime made it: a pod on the
	// local node (kubelet, containerd), from the image containerd pulled
	// from the registry, as core's default user (2000); its process runs
	// the binary make xpkg put into the image. Functions have a network of
	// their own, the provider the node's (local/demo/install says why).
	tasks := containerdTasks(t, "k8s.io")
	var providerPID string
	for _, d := range []string{
		"cobaltcore-function-controlplane-cluster", "cobaltcore-function-hypervisor-cluster", "cobaltcore-function-storage-cluster",
		"cobaltcore-function-openstack-cluster", "cobaltcore-provider-cobaltcore", "crossplane-contrib-provider-kubernetes",
	} {
		kind := "provider"
		if strings.Contains(d, "-function-") {
			kind = "function"
		}
		t.Run(d+" runs as a pod of the local node from the registry's image, its image's binary", func(t *testing.T) {
			pods, err := plane.kube.CoreV1().Pods("crossplane-system").List(t.Context(), metav1.ListOptions{
				LabelSelector: "pkg.crossplane.io/" + kind + "=" + d, FieldSelector: "status.phase=Running",
			})
			if err != nil || len(pods.Items) == 0 || len(pods.Items[0].Status.ContainerStatuses) == 0 {
				t.Fatalf("%s: no running pod (%v)", d, err)
			}
			pod := pods.Items[0]
			cs := pod.Status.ContainerStatuses[0]
			pid := tasks[strings.TrimPrefix(cs.ContainerID, "containerd://")]
			p := process(pid)
			want := sha256File(packageBinary(d))
			wantNet := "pod's own"
			if pod.Spec.HostNetwork {
				wantNet = "node's"
			}
			if pod.Spec.NodeName != "node-1" || !strings.HasPrefix(cs.Image, registry+"/") || !strings.HasPrefix(cs.ImageID, registry+"/") ||
				!strings.Contains(cs.ImageID, "@sha256:") || p.uid != "2000" || p.binary == "" || p.binary != want ||
				p.network != wantNet || (kind == "function" && p.network != "pod's own") {
				t.Fatalf("%s: node %q image %q (%s) pid %q uid %q binary %.12s (want the image's %.12s), the %s network (want the %s)",
					d, pod.Spec.NodeName, cs.Image, cs.ImageID, pid, p.uid, p.binary, want, p.network, wantNet)
			}
			t.Logf("on %s from %s (pulled by containerd), its image's binary (sha256 %.12s) as user %s, in the %s network",
				pod.Spec.NodeName, strings.TrimPrefix(cs.ImageID, registry+"/"), p.binary, p.uid, p.network)
			if d == "cobaltcore-provider-cobaltcore" {
				providerPID = pid
			}
		})
	}
	t.Run("the provider logs in as its ServiceAccount", func(t *testing.T) { providerLogsInAsItsServiceAccount(t.Context(), t, providerPID) })
	agentsRunTheirImages(t)

	// Core reaches the functions through their Services, as in a cluster.
	for _, fn := range cobaltcoreFunctions {
		t.Run("core dials function-"+fn+" at its Service", func(t *testing.T) {
			revs, err := plane.dyn.Resource(functionRevisions).List(t.Context(), metav1.ListOptions{LabelSelector: "pkg.crossplane.io/package=cobaltcore-function-" + fn})
			if err != nil {
				t.Fatalf("function-%s's revisions: %v", fn, err)
			}
			var endpoint string
			for _, r := range revs.Items {
				if nested(r.Object, "spec", "desiredState") == "Active" {
					endpoint = nested(r.Object, "status", "endpoint")
				}
			}
			if want := "dns:///cobaltcore-function-" + fn + ".crossplane-system:9443"; endpoint != want {
				t.Errorf("function-%s's endpoint is %q, want %q", fn, endpoint, want)
			}
		})
	}
}

var cobaltcoreFunctions = []string{"controlplane-cluster", "hypervisor-cluster", "storage-cluster", "openstack-cluster"}

// providerLogsInAsItsServiceAccount: the provider logs in as its
// ServiceAccount (the DeploymentRuntimeConfig's serviceAccountTemplate),
// with the token kubelet projected into its pod.
func providerLogsInAsItsServiceAccount(ctx context.Context, t *testing.T, pid string) {
	t.Helper()
	sa := fmt.Sprintf("/proc/%s/root/var/run/secrets/kubernetes.io/serviceaccount", pid)
	token, err := os.ReadFile(filepath.Join(sa, "token"))
	if pid == "" || err != nil {
		t.Errorf("the provider's token (pid %q): %v", pid, err)
		return
	}
	cfg := &rest.Config{Host: plane.cfg.Host, BearerToken: string(token), TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(sa, "ca.crt")}}
	if who := whoami(ctx, t, kubernetes.NewForConfigOrDie(cfg)); who.Username != "system:serviceaccount:crossplane-system:provider-cobaltcore" {
		t.Errorf("the provider's token logs in as %q", who.Username)
	}
}

// agentsRunTheirImages: the node agents in the pools' clusters run the
// images their DaemonSets name, which the node's containerd pulled through
// its mirror of xpkg.c5c3.io (the registry): each process is its image's
// binary, as the image's user.
func agentsRunTheirImages(t *testing.T) {
	t.Helper()
	version := strings.TrimSpace(read(t, filepath.Join(plane.repo, "_output/xpkg/VERSION")))
	tasks := containerdTasks(t, "shoot-nodes")
	t.Run("at least 12 node agents run as containers of the node's containerd", func(t *testing.T) {
		if len(tasks) < 12 {
			t.Errorf("%d node agents run, want at least 12: %v", len(tasks), tasks)
		}
	})
	images := ctrColumns(t, "shoot-nodes", "containers", "ls") // CONTAINER IMAGE RUNTIME
	digests := ctrColumns(t, "shoot-nodes", "images", "ls")    // REF TYPE DIGEST ...
	published := map[string]string{}                           // agent: the registry's digest
	for id, pid := range tasks {
		// garden-c5c3.<pool>_<agent>_<node>
		agent := id[strings.Index(id, "_")+1 : strings.LastIndex(id, "_")]
		if _, ok := published[agent]; !ok {
			published[agent] = registryDigest(t, "cobaltcore/"+agent, version)
		}
		t.Run(id+" runs its image from the registry, its image's binary, as the image's user", func(t *testing.T) {
			img := images[id][0]
			var digest string
			if d := digests[img]; len(d) > 1 {
				digest = d[1]
			}
			p := process(pid)
			want := sha256File(filepath.Join(plane.repo, "_output/package-build/bin", agent))
			if img != "xpkg.c5c3.io/cobaltcore/"+agent+":"+version || digest == "" || digest != published[agent] || p.uid != "65532" || p.binary != want {
				t.Fatalf("image %q (%s; the registry has %q) uid %q binary %.12s (want %.12s)", img, digest, published[agent], p.uid, p.binary, want)
			}
			t.Logf("%s (%s, the registry's) as user %s", img, digest, p.uid)
		})
	}
}

// containerdTasks lists the running tasks of a namespace of the local
// node's containerd: container ID to PID.
func containerdTasks(t *testing.T, namespace string) map[string]string {
	t.Helper()
	running, err := runningTasks(t.Context(), namespace)
	if err != nil {
		t.Fatal(err)
	}
	return running
}

// runningTasks is containerdTasks for a polled check: it returns its error.
func runningTasks(ctx context.Context, namespace string) (map[string]string, error) {
	rows, err := ctrTable(ctx, namespace, "tasks", "ls") // TASK PID STATUS
	if err != nil {
		return nil, err
	}
	running := map[string]string{}
	for id, cols := range rows {
		if len(cols) >= 2 && cols[1] == "RUNNING" {
			running[id] = cols[0]
		}
	}
	return running, nil
}

// ctrColumns runs containerd's ctr on the local node and returns its table
// by first column, without the header.
func ctrColumns(t *testing.T, namespace string, args ...string) map[string][]string {
	t.Helper()
	rows, err := ctrTable(t.Context(), namespace, args...)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// ctrTable is ctrColumns for a polled check: it returns its error.
func ctrTable(ctx context.Context, namespace string, args ...string) (map[string][]string, error) {
	out, err := lines(ctx, 20*time.Second, "ctr", append([]string{"--address", plane.path("node/containerd.sock"), "-n", namespace}, args...)...)
	if err != nil {
		return nil, err
	}
	rows := map[string][]string{}
	for i, line := range out {
		if f := strings.Fields(line); i > 0 && len(f) > 1 {
			rows[f[0]] = f[1:]
		}
	}
	return rows, nil
}

// registryDigest is the digest the local registry serves for an image, as
// containerd resolves it.
func registryDigest(t *testing.T, repository, tag string) string {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(read(t, plane.path("certs/registry/ca.crt"))))
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	req, _ := http.NewRequest(http.MethodHead, fmt.Sprintf("https://%s/v2/%s/manifests/%s", registry, repository, tag), nil)
	req.Header.Add("Accept", "application/vnd.oci.image.manifest.v1+json")
	req.Header.Add("Accept", "application/vnd.docker.distribution.manifest.v2+json")
	rsp, err := c.Do(req)
	if err != nil {
		t.Errorf("the registry's %s:%s: %v", repository, tag, err)
		return ""
	}
	defer rsp.Body.Close()
	_, _ = io.Copy(io.Discard, rsp.Body)
	return rsp.Header.Get("Docker-Content-Digest")
}

// packageBinary is the binary make xpkg put into a package's image.
func packageBinary(deployment string) string {
	switch deployment {
	case "cobaltcore-provider-cobaltcore":
		return filepath.Join(plane.repo, "_output/package-build/bin/provider-cobaltcore")
	case "crossplane-contrib-provider-kubernetes":
		return os.Getenv("PROVIDER_KUBERNETES")
	}
	return filepath.Join(plane.repo, "_output/package-build/bin", strings.TrimPrefix(deployment, "cobaltcore-"))
}

// proc is what /proc says of a process: its user, the sha256 of its
// binary, and whether it runs in the node's network namespace.
type proc struct{ uid, binary, network string }

func process(pid string) proc {
	var p proc
	if pid == "" {
		return p
	}
	if status, err := os.ReadFile("/proc/" + pid + "/status"); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
				p.uid = f[1]
			}
		}
	}
	p.binary = sha256File("/proc/" + pid + "/exe")
	own, _ := os.Readlink("/proc/" + pid + "/ns/net")
	node, _ := os.Readlink("/proc/self/ns/net")
	p.network = "pod's own"
	if own == node {
		p.network = "node's"
	}
	return p
}

func sha256File(name string) string {
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// nested reads a string field of an object read unstructured; "" when it
// is absent or not a string.
func nested(obj map[string]any, fields ...string) string {
	s, _, _ := unstructured.NestedString(obj, fields...)
	return s
}
