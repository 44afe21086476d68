//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var (
	gitRepositories       = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "gitrepositories"}
	serverInventories     = schema.GroupVersionResource{Group: "ironcore.provider.c5c3.io", Version: "v1alpha1", Resource: "serverinventories"}
	hypervisorInventories = schema.GroupVersionResource{Group: "kvm.provider.c5c3.io", Version: "v1alpha1", Resource: "hypervisorinventories"}
)

// TestRemovals: deleting a pool's claim, and a cloud removed from a
// tenant's Git (e2e.sh's sections 5 and 5b). They touch different pools
// (hv-pool-us; team-a-dev on hv-pool-b and st-pool-a), so they run at once.
func TestRemovals(t *testing.T) {
	t.Run("5 deleting a claim", poolClaimDeleted)
	t.Run("5b GitOps: the cloud a tenant's commit added is Ready; removed from Git, it is deleted and its data stays", cloudRemovedFromGit)
}

// poolClaimDeleted (5): deleting a pool's claim removes its composite,
// ServerInventory, Shoot, ShootKubeconfig, HypervisorInventory and node
// agents, and leaves its Servers and every other pool's inventory. (The
// stretched st-pool-s is deleted in 9f: its arbiter goes with it.)
func poolClaimDeleted(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	serverCount := func(ctx context.Context) (int, error) {
		l, err := plane.dyn.Resource(servers).List(ctx, metav1.ListOptions{LabelSelector: "c5c3.io/machine-pool=hv-pool-us"})
		if err != nil {
			return 0, err
		}
		return len(l.Items), nil
	}
	others := func(ctx context.Context) ([]string, error) {
		l, err := plane.dyn.Resource(serverInventories).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var s []string
		for _, i := range l.Items {
			if !strings.Contains(i.GetName(), "hv-pool-us") {
				s = append(s, i.GetName()+"="+string(i.GetUID()))
			}
		}
		slices.Sort(s)
		return s, nil
	}
	serversBefore, err := serverCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	othersBefore, err := others(ctx)
	if err != nil {
		t.Fatal(err)
	}
	deleteClaims(t, ref{gvr: hypervisorClusters, namespace: "infrastructure", name: "hv-pool-us"})
	eventuallyNone(t, 60*time.Second, "hv-pool-us: its composite is gone", compositeOf(consumer("xhypervisorclusters"), "hv-pool-us"))
	for what, r := range map[string]ref{
		"ServerInventory":     {gvr: serverInventories, name: "hypervisor-hv-pool-us"},
		"Shoot":               {gvr: shoots, namespace: "garden-c5c3", name: "hv-pool-us"},
		"ShootKubeconfig":     {gvr: shootKubeconfigs, name: "hypervisor-hv-pool-us"},
		"HypervisorInventory": {gvr: hypervisorInventories, name: "hypervisor-hv-pool-us"},
	} {
		eventuallyNone(t, 60*time.Second, "hv-pool-us: its "+what+" is gone", existing(r))
	}
	eventuallyNil(t, 60*time.Second, "hv-pool-us: its node agents are stopped", func(context.Context) error {
		if p := processArgs("-node-name garden-c5c3.hv-pool-us-node-"); p != "" {
			return fmt.Errorf("still running: %s", p)
		}
		return nil
	})
	t.Run(fmt.Sprintf("its Servers are left (%d)", serversBefore), func(t *testing.T) {
		if n, err := serverCount(t.Context()); err != nil || n != serversBefore {
			t.Errorf("%d Servers of hv-pool-us (%v), want %d", n, err, serversBefore)
		}
	})
	t.Run("the other pools' inventories are untouched", func(t *testing.T) {
		if now, err := others(t.Context()); err != nil || !slices.Equal(now, othersBefore) {
			t.Errorf("were %v, are %v (%v)", othersBefore, now, err)
		}
	})
}

// cloudRemovedFromGit (5b): the cloud team-a's commit added in G is Ready;
// a commit removing it from Git deletes it (Flux prunes it), and its Ceph
// pool stays with the tenant's image under the default dataPolicy
// (Retain). Then team-a's Kustomization is suspended, as G suspended the
// others: the later sections change claims by hand.
func cloudRemovedFromGit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const file = "tenants/team-a/openstack-clusters/team-a-dev.yaml"
	// The commit that added it (G), and when.
	added := strings.Fields(gitops(t, "log", "-1", "--format=%H %ct", "--", file))
	if len(added) != 2 {
		t.Fatalf("no commit added %s to the GitOps repository", file)
	}
	at, _ := strconv.ParseInt(added[1], 10, 64)
	if eventuallyNil(t, 600*time.Second, "team-a-dev, added by team-a's commit, is Ready, and so is team-a's Kustomization at that commit", tenantAt("team-a", "main@sha1:"+added[0], "True", "")) {
		t.Logf("%.0f s after the commit", time.Since(time.Unix(at, 0)).Seconds())
	}
	dev := tenantCloud{namespace: "team-a", name: "team-a-dev"}
	kept := dev.composite(t).Name + "-st-pool-a-volumes"
	tenantImage(t, dev.name, kept)
	gitops(t, "rm", "-q", file)
	rev := gitopsCommit(t, "team-a: removes team-a-dev")
	eventuallyNil(t, 300*time.Second, "team-a's commit removing team-a-dev is applied (its Kustomization prunes)", tenantAt("team-a", rev, "True", ""))
	eventuallyNone(t, 240*time.Second, "team-a-dev, removed from Git, is deleted with its managed resources", func(ctx context.Context) ([]string, error) {
		left, err := composedFor(t, dev.name)(ctx)
		if err != nil {
			return nil, err
		}
		if gone, err := existing(dev.claim())(ctx); err != nil || len(gone) > 0 {
			return append(left, gone...), err
		}
		return left, nil
	})
	t.Run("dataPolicy Retain (the default) holds for a claim pruned by Flux: the Ceph pool "+kept+" is kept with the tenant's image", func(t *testing.T) {
		pools, err := cephCLI(t.Context(), "osd", "pool", "ls")
		if err != nil || !slices.Contains(pools, kept) || !slices.Contains(rbd(t, "ls", kept), "tenant-volume-1") {
			t.Errorf("%s or its image went with team-a-dev (%v)", kept, err)
		}
	})
	dropCephPool(t, kept) // the platform team lets it go
	if _, err := plane.dyn.Resource(kustomizations).Namespace("team-a").Patch(ctx, "openstack-clusters", types.MergePatchType, []byte(`{"spec":{"suspend":true}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("cannot suspend team-a's Kustomization: %v", err)
	}
}

// gitops runs git in the demo's GitOps repository (local/demo/up.sh), as
// a tenant's or the platform team's Git would be committed to. Not bound to
// t.Context(): cleanups commit too (2d's), after it is canceled; git on the
// local repository returns in moments.
func gitops(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", plane.path("gitops"), "-c", "user.name=e2e", "-c", "user.email=e2e@cobaltcore.invalid"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitopsCommit commits and pushes everything; it returns the revision as
// Flux names it.
func gitopsCommit(t *testing.T, message string) string {
	t.Helper()
	gitops(t, "add", "-A")
	gitops(t, "commit", "-qm", message)
	gitops(t, "push", "-q", "origin", "main")
	return "main@sha1:" + gitops(t, "rev-parse", "HEAD")
}

// fetched holds once the GitRepository namespace/name has fetched rev;
// until then it is asked (every 5 s, the last time in asked) to fetch now,
// as `flux reconcile source git` does, instead of in 5 minutes.
func fetched(ctx context.Context, namespace, name, rev string, asked *time.Time) error {
	repo, err := plane.dyn.Resource(gitRepositories).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	got := nested(repo.Object, "status", "artifact", "revision")
	if atOrAfter(got, rev) {
		return nil
	}
	if time.Since(*asked) >= 5*time.Second {
		*asked = time.Now()
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":%q}}}`, strconv.FormatInt(asked.UnixNano(), 10))
		if _, err := plane.dyn.Resource(gitRepositories).Namespace(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return fmt.Errorf("GitRepository %s/%s has fetched %q, not %q yet", namespace, name, got, rev)
}

// atOrAfter reports whether Flux's revision got is rev or a later commit of
// the GitOps repository that holds it: other sections commit to the same
// repository at the same time (2d's probe in a cluster layer), and a
// GitRepository fetches the head, which may already be past rev.
func atOrAfter(got, rev string) bool {
	if got == rev {
		return true
	}
	const prefix = "main@sha1:"
	if !strings.HasPrefix(got, prefix) || !strings.HasPrefix(rev, prefix) {
		return false
	}
	return exec.Command("git", "-C", plane.path("gitops"), "merge-base", "--is-ancestor", strings.TrimPrefix(rev, prefix), strings.TrimPrefix(got, prefix)).Run() == nil
}

// tenantAt holds once the tenant's Kustomization tried rev (or a later
// commit, see atOrAfter) and its Ready
// is status, its message containing text, its GitRepository asked to fetch
// rev now (fetched).
func tenantAt(tenant, rev, status, text string) func(context.Context) error {
	var asked time.Time
	return func(ctx context.Context) error {
		if err := fetched(ctx, tenant, "gitops", rev, &asked); err != nil {
			return err
		}
		k, err := plane.dyn.Resource(kustomizations).Namespace(tenant).Get(ctx, "openstack-clusters", metav1.GetOptions{})
		if err != nil {
			return err
		}
		c, err := decode[conditioned](k)
		if err != nil {
			return err
		}
		ready := c.condition("Ready")
		if tried := nested(k.Object, "status", "lastAttemptedRevision"); !atOrAfter(tried, rev) || string(ready.Status) != status || !strings.Contains(ready.Message, text) {
			return fmt.Errorf("its Kustomization tried %q: Ready %s: %.300s", tried, ready.Status, ready.Message)
		}
		return nil
	}
}
