// Package gitops runs the example GitOps tree (examples/) under the real
// Flux controllers, locked down as local/demo runs them, against a real
// kube-apiserver: what a tenant's directory may and may not do.
package gitops

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/local/gitserver"
	"github.com/c5c3/consumer-plane/test/kubetest"
	"github.com/c5c3/consumer-plane/test/xrdtest"
)

const (
	examples = "../../examples"
	// The URL the examples' GitRepositories name; the test serves the
	// repository locally instead, as the demo does.
	exampleURL = "https://git.example.org/platform/cobaltcore-gitops.git"
)

var (
	kustomizationGVK = schema.GroupVersionKind{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"}
	gitRepositoryGVK = schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "GitRepository"}
	claimGVK         = schema.GroupVersionKind{Group: "c5c3.io", Version: "v1alpha1", Kind: "OpenStackCluster"}
	poolGVK          = schema.GroupVersionKind{Group: "crossplane.c5c3.io", Version: "v1alpha1", Kind: "HypervisorCluster"}
)

func TestMain(m *testing.M) {
	// Flux's CRDs, from the tool cache (make tools); without them the tests
	// skip, or fail under REQUIRE_INTEGRATION (fluxBinaries).
	os.Exit(kubetest.Main(m, filepath.Join(os.Getenv("FLUX_DIR"), "crds")))
}

// fluxBinaries returns the directory of source- and kustomize-controller.
func fluxBinaries(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("FLUX_DIR")
	for _, b := range []string{"source-controller", "kustomize-controller"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			msg := fmt.Sprintf("needs Flux's %s in FLUX_DIR (%q): run `make tools` (tools/upstream/build.sh flux)", b, dir)
			if os.Getenv("REQUIRE_INTEGRATION") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	for _, p := range []string{"git", gitserver.Backend} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("needs %s: apt-get install git", p)
		}
	}
	return dir
}

// landscape is the test's GitOps repository, served over HTTP, with Flux
// running against the test API server.
type landscape struct {
	t    *testing.T
	kube client.Client
	work string // the working copy commits are made in
	url  string
	logs string
}

// TestTenantGitOpsIntegration applies the examples' tenant onboarding the way
// the platform's Kustomizations do (clusters/management/tenants.yaml), and
// checks that the tenant's own Kustomization applies, adds and prunes the
// tenant's claims as the tenant, and that a tenant commit reaching beyond the
// tenant's namespace or role is refused, saying why, with nothing created,
// and that a tenant's last claim removed deletes its last cloud.
// kustomize-controller's lockdown flags each have a case that fails without
// them: a remote base in the tenant's kustomization.yaml
// (--no-remote-bases), a Kustomization the platform put in the tenant's
// namespace naming no ServiceAccount (--default-service-account) or reading
// the platform's source (--no-cross-namespace-refs).
//
// No Crossplane runs here, so no cloud gets Ready by itself: team-a's
// Kustomization, which the refusals are tried on, has its health checks taken
// out of the test's copy; team-b's runs as written, and the test sets its
// cloud's conditions as Crossplane would, to check that Flux waits for a Ready
// condition that is True (make e2e runs them all against Crossplane).
func TestTenantGitOpsIntegration(t *testing.T) {
	kube := kubetest.Client(t)
	flux := fluxBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if _, err := xrdtest.InstallXRDs(ctx, kube, "../../package/xrds"); err != nil {
		t.Fatal(err)
	}
	l := start(ctx, t, kube, flux)

	// The platform's part: the tenant role, Flux's install, the source and
	// two tenants' onboarding. dependsOn is dropped: the pools'
	// Kustomization it waits for needs Crossplane.
	l.apply(ctx, readFile(t, filepath.Join(examples, "infrastructure/tenant-role.yaml")), nil)
	l.apply(ctx, readFile(t, "../../local/demo/flux-install.yaml"), nil)
	l.apply(ctx, readFile(t, filepath.Join(l.work, "clusters/management/source.yaml")), nil)
	l.apply(ctx, readFile(t, filepath.Join(l.work, "clusters/management/tenants.yaml")), func(u *unstructured.Unstructured) bool {
		unstructured.RemoveNestedField(u.Object, "spec", "dependsOn")
		return u.GetName() == "tenant-team-a" || u.GetName() == "tenant-team-b"
	})

	head := l.head()
	l.ready(ctx, "team-a", head, "")
	for _, c := range []string{"team-a/team-a-prod", "team-a/team-a-staging", "team-b/team-b-staging"} {
		l.exists(ctx, claimGVK, c)
	}

	t.Run("a tenant's Kustomization is Ready once its clouds are", func(t *testing.T) {
		l.t = t
		// Synced but no Ready condition yet, as a claim is while its
		// composite is created: the Kustomization waits.
		l.setConditions(ctx, "team-b/team-b-staging", map[string]string{"Synced": "True"})
		time.Sleep(12 * time.Second) // more than two of Flux's health polls
		if err := l.kustomization(ctx, "team-b", head, ""); err == nil {
			t.Fatal("team-b's Kustomization is Ready while team-b-staging has no Ready condition")
		}
		l.setConditions(ctx, "team-b/team-b-staging", map[string]string{"Synced": "True", "Ready": "True"})
		l.ready(ctx, "team-b", head, "")
	})

	escapes := []struct {
		name, yaml, object string
		gvk                schema.GroupVersionKind
	}{
		{
			name: "a hypervisor pool", gvk: poolGVK, object: "infrastructure/hv-pool-team-a",
			yaml: "apiVersion: crossplane.c5c3.io/v1alpha1\nkind: HypervisorCluster\nmetadata: {name: hv-pool-team-a, namespace: infrastructure}\nspec: {name: hv-pool-team-a, region: eu-de-1, nodeCount: 3}\n",
		},
		{
			name: "a ClusterRole", gvk: rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), object: "team-a-everything",
			yaml: "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: team-a-everything}\nrules: [{apiGroups: ['*'], resources: ['*'], verbs: ['*']}]\n",
		},
		{
			name: "a RoleBinding to cluster-admin in its own namespace", gvk: rbacv1.SchemeGroupVersion.WithKind("RoleBinding"), object: "team-a/team-a-admin",
			yaml: "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: team-a-admin, namespace: team-a}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: gitops, namespace: team-a}]\n",
		},
		{
			name: "a claim in another tenant's namespace", gvk: claimGVK, object: "team-b/team-a-was-here",
			yaml: strings.Replace(strings.Replace(string(readFile(t, filepath.Join(examples, "tenants/team-a/openstack-clusters/team-a-staging.yaml"))),
				"name: team-a-staging", "name: team-a-was-here", 1), "namespace: team-a", "namespace: team-b", 1),
		},
	}
	for _, e := range escapes {
		t.Run("refused: "+e.name, func(t *testing.T) {
			l.t = t
			l.write("tenants/team-a/openstack-clusters/escape.yaml", e.yaml)
			rev := l.commit("team-a adds " + e.name)
			l.ready(ctx, "team-a", rev, "forbidden")
			l.tenantReads(ctx, "team-a", "forbidden")
			if err := l.get(ctx, e.gvk, e.object); !apierrors.IsNotFound(err) {
				t.Errorf("%s %s: %v, want it not created", e.gvk.Kind, e.object, err)
			}
			l.exists(ctx, claimGVK, "team-a/team-a-prod")
			l.remove("tenants/team-a/openstack-clusters/escape.yaml")
			l.ready(ctx, "team-a", l.commit("team-a takes it back"), "")
		})
	}

	t.Run("refused: a remote base in the tenant's kustomization.yaml", func(t *testing.T) {
		// kustomize-controller's --no-remote-bases=true: a tenant's
		// directory applies only what is in the repository.
		// The base is a claim of its own namespace, served by this test's
		// Git server: only where it comes from is wrong (without the flag
		// it is applied).
		l.t = t
		remote := strings.Replace(string(readFile(t, filepath.Join(l.work, "tenants/team-a/openstack-clusters/team-a-staging.yaml"))),
			"name: team-a-staging", "name: team-a-remote", 1)
		if err := os.MkdirAll(filepath.Join(l.work, "elsewhere"), 0o750); err != nil {
			t.Fatal(err)
		}
		l.write("elsewhere/team-a-remote.yaml", remote)
		l.write("elsewhere/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [team-a-remote.yaml]\n")
		l.commit("a base elsewhere")
		l.write("tenants/team-a/openstack-clusters/kustomization.yaml",
			"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- team-a-prod.yaml\n- team-a-staging.yaml\n- "+l.url+"//elsewhere?ref=main\n")
		l.ready(ctx, "team-a", l.commit("team-a pulls a remote base"), "is not in or below")
		if err := l.get(ctx, claimGVK, "team-a/team-a-remote"); !apierrors.IsNotFound(err) {
			t.Errorf("the remote base's claim: %v, want it not created", err)
		}
		l.remove("tenants/team-a/openstack-clusters/kustomization.yaml")
		l.ready(ctx, "team-a", l.commit("team-a takes it back"), "")
	})

	// The lockdown holds where the platform errs: a Kustomization it puts in
	// a tenant's namespace naming no ServiceAccount applies as that
	// namespace's default one (--default-service-account=default), not as
	// Flux's cluster-admin; one reading the platform's own source, in
	// flux-system, is refused (--no-cross-namespace-refs=true).
	lockdown := []struct{ name, source, sourceNamespace, refused string }{
		{name: "no-service-account", source: "gitops", refused: "system:serviceaccount:team-a:default"},
		{name: "platform-source", source: "cobaltcore-gitops", sourceNamespace: "flux-system", refused: "cross-namespace"},
	}
	for _, c := range lockdown {
		t.Run("the lockdown: "+c.name, func(t *testing.T) {
			l.t = t
			k := &unstructured.Unstructured{}
			k.SetGroupVersionKind(kustomizationGVK)
			k.SetNamespace("team-a")
			k.SetName(c.name)
			ref := map[string]any{"kind": "GitRepository", "name": c.source}
			if c.sourceNamespace != "" {
				ref["namespace"] = c.sourceNamespace
			}
			k.Object["spec"] = map[string]any{"interval": "10m", "path": "./tenants/team-a/openstack-clusters", "prune": false, "sourceRef": ref}
			if err := l.kube.Create(ctx, k); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = l.kube.Delete(context.Background(), k) })
			kubetest.Until(t, fmt.Sprintf("Kustomization team-a/%s refused, saying %q", c.name, c.refused), 90*time.Second, func() error {
				if err := l.kube.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
					return err
				}
				if status, msg := condition(k, "Ready"); status != "False" || !strings.Contains(msg, c.refused) {
					return fmt.Errorf("Ready %s: %s", status, msg)
				}
				return nil
			})
			_, msg := condition(k, "Ready")
			t.Logf("Kustomization team-a/%s says: %.300s", c.name, msg)
		})
	}

	t.Run("a commit adds a cloud, another removes one", func(t *testing.T) {
		l.t = t
		staging := string(readFile(t, filepath.Join(l.work, "tenants/team-a/openstack-clusters/team-a-staging.yaml")))
		l.write("tenants/team-a/openstack-clusters/team-a-dev.yaml", strings.Replace(staging, "name: team-a-staging", "name: team-a-dev", 1))
		l.ready(ctx, "team-a", l.commit("team-a adds team-a-dev"), "")
		l.exists(ctx, claimGVK, "team-a/team-a-dev")

		l.remove("tenants/team-a/openstack-clusters/team-a-staging.yaml")
		l.ready(ctx, "team-a", l.commit("team-a removes team-a-staging"), "")
		kubetest.Until(t, "team-a-staging is pruned", 30*time.Second, func() error {
			if err := l.get(ctx, claimGVK, "team-a/team-a-staging"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
		l.exists(ctx, claimGVK, "team-a/team-a-prod")
		l.exists(ctx, claimGVK, "team-b/team-b-staging")
	})

	// Git drops an empty folder, and a Kustomization whose path is gone
	// fails instead of pruning: the tenant's folder keeps a README.md
	// (examples/README.md), so its last claim removed is its last cloud
	// deleted (#53 §6).
	t.Run("a tenant deletes its last cloud through Git", func(t *testing.T) {
		l.t = t
		entries, err := os.ReadDir(filepath.Join(l.work, "tenants/team-b/openstack-clusters"))
		if err != nil {
			t.Fatal(err)
		}
		var claims []string
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".yaml") {
				claims = append(claims, e.Name())
			}
		}
		if len(claims) != 1 {
			t.Fatalf("team-b's folder holds claims %v, want its one", claims)
		}
		l.remove("tenants/team-b/openstack-clusters/" + claims[0])
		l.ready(ctx, "team-b", l.commit("team-b removes its last cloud"), "")
		kubetest.Until(t, "team-b-staging is pruned", 30*time.Second, func() error {
			if err := l.get(ctx, claimGVK, "team-b/team-b-staging"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
	})
}

// start commits examples/ into a bare repository served over HTTP, pointing
// every GitRepository at it, and runs both controllers with the flags
// local/demo/up.sh gives them.
func start(ctx context.Context, t *testing.T, kube client.Client, flux string) *landscape {
	t.Helper()
	dir := t.TempDir()
	repos := filepath.Join(dir, "repos")
	if err := os.MkdirAll(repos, 0o750); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gitserver.Handler(repos, gitserver.Backend))
	t.Cleanup(srv.Close)
	l := &landscape{t: t, kube: kube, work: filepath.Join(dir, "gitops"), url: srv.URL + "/cobaltcore-gitops.git", logs: dir}
	l.git(repos, "init", "-q", "--bare", "-b", "main", "cobaltcore-gitops.git")
	if err := os.CopyFS(l.work, os.DirFS(examples)); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(l.work, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		b, err := os.ReadFile(p) //nolint:gosec // the test's copy
		if err != nil {
			return err
		}
		s := strings.ReplaceAll(string(b), exampleURL, l.url)
		if strings.HasSuffix(p, "infrastructure/tenants/team-a/gitops.yaml") { // see the test's doc
			if i := strings.Index(s, "  wait: true\n"); i >= 0 {
				s = s[:i]
			}
		}
		return os.WriteFile(p, []byte(s), 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	l.git(l.work, "init", "-q", "-b", "main")
	l.git(l.work, "remote", "add", "origin", l.url)
	l.commit("examples/")

	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kubetest.Kubeconfig(t, kubetest.Config(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	storage := filepath.Join(dir, "storage")
	if err := os.MkdirAll(storage, 0o750); err != nil {
		t.Fatal(err)
	}
	storageAddr := freeAddr(t)
	l.run(ctx, kubeconfig, filepath.Join(flux, "source-controller"), "--enable-leader-election=false",
		"--storage-path="+storage, "--storage-addr="+storageAddr, "--storage-adv-addr="+storageAddr,
		"--metrics-addr="+freeAddr(t), "--health-addr="+freeAddr(t))
	l.run(ctx, kubeconfig, filepath.Join(flux, "kustomize-controller"), "--enable-leader-election=false",
		"--no-cross-namespace-refs=true", "--default-service-account=default", "--no-remote-bases=true", "--requeue-dependency=5s",
		"--metrics-addr="+freeAddr(t), "--health-addr="+freeAddr(t))
	return l
}

// run starts a controller until the test ends; its log is printed when the
// test fails.
func (l *landscape) run(ctx context.Context, kubeconfig, bin string, args ...string) {
	t := l.t
	log := filepath.Join(l.logs, filepath.Base(bin)+".log")
	f, err := os.Create(log) //nolint:gosec // the test's own directory
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, args...) //nolint:gosec // the tool cache's binary
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = f.Close()
		if t.Failed() {
			t.Logf("last lines of %s:\n%s", log, tail(log, 15))
		}
	})
}

func (l *landscape) git(dir string, args ...string) string {
	l.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=tenant", "-c", "user.email=tenant@example.org"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		l.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (l *landscape) write(file, content string) {
	l.t.Helper()
	if err := os.WriteFile(filepath.Join(l.work, file), []byte(content), 0o600); err != nil {
		l.t.Fatal(err)
	}
}

func (l *landscape) remove(file string) {
	l.t.Helper()
	if err := os.Remove(filepath.Join(l.work, file)); err != nil {
		l.t.Fatal(err)
	}
}

// commit commits and pushes the working copy and returns Flux's name of
// the revision.
func (l *landscape) commit(msg string) string {
	l.t.Helper()
	l.git(l.work, "add", "-A")
	l.git(l.work, "commit", "-qm", msg)
	l.git(l.work, "push", "-q", "origin", "HEAD:main")
	return l.head()
}

func (l *landscape) head() string { return "main@sha1:" + l.git(l.work, "rev-parse", "HEAD") }

// ready asks Flux to fetch the tenant's source now (as `flux reconcile
// source git` does) and waits until the tenant's Kustomization has tried
// revision rev: Ready when refused is empty, else not Ready with a message
// containing refused.
func (l *landscape) ready(ctx context.Context, tenant, rev, refused string) {
	l.t.Helper()
	kubetest.Until(l.t, fmt.Sprintf("%s's Kustomization at %s (refused: %q)", tenant, rev, refused), 90*time.Second, func() error {
		return l.kustomization(ctx, tenant, rev, refused)
	})
}

// kustomization is ready's check, once: nil when the tenant's Kustomization
// has tried rev with the outcome wanted (see ready).
func (l *landscape) kustomization(ctx context.Context, tenant, rev, refused string) error {
	src := &unstructured.Unstructured{}
	src.SetGroupVersionKind(gitRepositoryGVK)
	if err := l.kube.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "gitops"}, src); err != nil {
		return err
	}
	if got, _, _ := unstructured.NestedString(src.Object, "status", "artifact", "revision"); got != rev {
		patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":%q}}}`, time.Now().Format(time.RFC3339Nano)))
		_ = l.kube.Patch(ctx, src, client.RawPatch("application/merge-patch+json", patch))
		return fmt.Errorf("the source is at %q", got)
	}
	k := &unstructured.Unstructured{}
	k.SetGroupVersionKind(kustomizationGVK)
	if err := l.kube.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "openstack-clusters"}, k); err != nil {
		return err
	}
	tried, _, _ := unstructured.NestedString(k.Object, "status", "lastAttemptedRevision")
	status, msg := condition(k, "Ready")
	switch {
	case tried != rev:
		return fmt.Errorf("it tried %q last (Ready %s: %s)", tried, status, msg)
	case refused == "" && status != "True":
		return fmt.Errorf("not Ready: %s", msg)
	case refused != "" && (status != "False" || !strings.Contains(msg, refused)):
		return fmt.Errorf("Ready %s: %s", status, msg)
	}
	if refused != "" {
		l.t.Logf("%s's Kustomization says: %s", tenant, msg)
	}
	return nil
}

// tenantReads checks that a person of the tenant's group, with only the
// tenant role (access.yaml, tenant-role.yaml), reads on the tenant's
// Kustomization why its commit was refused, and cannot read another
// tenant's.
func (l *landscape) tenantReads(ctx context.Context, tenant, want string) {
	l.t.Helper()
	cfg := kubetest.Config(l.t)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: tenant + "-user", Groups: []string{tenant, "system:authenticated"}}
	as, err := client.New(cfg, client.Options{})
	if err != nil {
		l.t.Fatal(err)
	}
	k := &unstructured.Unstructured{}
	k.SetGroupVersionKind(kustomizationGVK)
	if err := as.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "openstack-clusters"}, k); err != nil {
		l.t.Fatalf("%s cannot read its own Kustomization: %v", tenant, err)
	}
	if _, msg := condition(k, "Ready"); !strings.Contains(msg, want) {
		l.t.Errorf("%s reads on its Kustomization %q, want it to contain %q", tenant, msg, want)
	}
	other := "team-b"
	if tenant == other {
		other = "team-a"
	}
	if err := as.Get(ctx, client.ObjectKey{Namespace: other, Name: "openstack-clusters"}, k); !apierrors.IsForbidden(err) {
		l.t.Errorf("%s reading %s's Kustomization: %v, want forbidden", tenant, other, err)
	}
}

// setConditions writes a claim's status conditions as Crossplane would.
func (l *landscape) setConditions(ctx context.Context, key string, conds map[string]string) {
	l.t.Helper()
	ns, name, _ := strings.Cut(key, "/")
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(claimGVK)
	if err := l.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		l.t.Fatal(err)
	}
	var list []any
	for typ, status := range conds {
		list = append(list, map[string]any{"type": typ, "status": status, "reason": "Test", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)})
	}
	if err := unstructured.SetNestedSlice(u.Object, list, "status", "conditions"); err != nil {
		l.t.Fatal(err)
	}
	if err := l.kube.Status().Update(ctx, u); err != nil {
		l.t.Fatalf("setting %s's conditions: %v", key, err)
	}
}

func condition(u *unstructured.Unstructured, typ string) (status, message string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			msg, _ := m["message"].(string)
			return s, msg
		}
	}
	return "", ""
}

func (l *landscape) get(ctx context.Context, gvk schema.GroupVersionKind, key string) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		ns, name = "", key
	}
	return l.kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
}

func (l *landscape) exists(ctx context.Context, gvk schema.GroupVersionKind, key string) {
	l.t.Helper()
	kubetest.Until(l.t, fmt.Sprintf("%s %s exists", gvk.Kind, key), 30*time.Second, func() error { return l.get(ctx, gvk, key) })
}

// apply creates the objects of a multi-document YAML file (keep decides,
// and may change, each), as the platform team's kubectl apply would.
func (l *landscape) apply(ctx context.Context, data []byte, keep func(*unstructured.Unstructured) bool) {
	l.t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			l.t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			l.t.Fatal(err)
		}
		if len(u.Object) == 0 || (keep != nil && !keep(u)) {
			continue
		}
		if err := l.kube.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
			l.t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

func readFile(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(file) //nolint:gosec // the repository's own files
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() //nolint:errcheck // only its port is wanted
	return ln.Addr().String()
}

func tail(file string, n int) string {
	b, _ := os.ReadFile(file) //nolint:gosec // the test's own log
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
