//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	consumerv1alpha1 "github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/local/procs"
)

// planeProcess is one of the management plane's own processes, as the
// fault checks kill it: where it runs now, and when it serves again.
type planeProcess struct {
	name string
	// pid is the process running now.
	pid func(context.Context) (int, error)
	// serves holds once it answers again.
	serves func(context.Context) error
}

// The processes a cloud's creation and deletion go through, in the order
// they are killed: the provider (its pod's container, which kubelet
// restarts), the function that composes clouds (the same), Crossplane core
// (in the demo a supervised process, as its Deployment's pod in a cluster)
// and kube-apiserver (restarted as kubelet restarts the static pod; etcd
// keeps running).
var killedInTurn = []planeProcess{
	{name: "the provider", pid: podPID("provider=cobaltcore-provider-cobaltcore"), serves: podReady("provider=cobaltcore-provider-cobaltcore")},
	{name: "function-openstack-cluster", pid: podPID("function=cobaltcore-function-openstack-cluster"), serves: podReady("function=cobaltcore-function-openstack-cluster")},
	{name: "Crossplane core", pid: corePID, serves: httpOK("http://127.0.0.1:18081/healthz")},
	{name: "kube-apiserver", pid: apiServerPID, serves: apiServerReady},
}

// killedMidReconcile (#54): each of the plane's processes is killed
// (SIGKILL: no shutdown of its own) while inFlight says work is under way,
// and comes back. What must hold after (no duplicate, no orphan, no data
// lost, convergence) the caller's checks assert.
func killedMidReconcile(t *testing.T, inFlight func(context.Context) (string, error)) {
	t.Helper()
	for _, p := range killedInTurn {
		t.Run(p.name+", killed mid-reconcile, serves again", func(t *testing.T) {
			ctx := t.Context()
			busy, err := inFlight(ctx)
			if err != nil {
				t.Fatalf("what is under way: %v", err)
			}
			if busy == "" {
				t.Fatalf("nothing is under way to interrupt")
			}
			pid, err := p.pid(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatalf("kill -9 %d: %v", pid, err)
			}
			killed := time.Now()
			// Back: another process runs, and it serves.
			deadline := killed.Add(150 * time.Second)
			for {
				now, err := p.pid(ctx)
				if err == nil && now != pid {
					err = p.serves(ctx)
				} else if err == nil {
					err = fmt.Errorf("pid %d still runs", pid)
				}
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("not back within 150s of kill -9 %d: %v", pid, err)
				}
				time.Sleep(500 * time.Millisecond)
			}
			t.Logf("killed (pid %d) while %s; serving again after %s", pid, busy, time.Since(killed).Round(100*time.Millisecond))
		})
	}
}

// podPID is the PID of the running container of the package's pod
// (selector: pkg.crossplane.io/<selector>), as the node's containerd runs it.
func podPID(selector string) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		pods, err := plane.kube.CoreV1().Pods("crossplane-system").List(ctx, metav1.ListOptions{LabelSelector: "pkg.crossplane.io/" + selector})
		if err != nil {
			return 0, err
		}
		for _, pod := range pods.Items {
			for _, cs := range pod.Status.ContainerStatuses {
				if cs.State.Running == nil {
					continue
				}
				tasks, err := runningTasks(ctx, "k8s.io")
				if err != nil {
					return 0, err
				}
				if pid, ok := tasks[strings.TrimPrefix(cs.ContainerID, "containerd://")]; ok {
					return strconv.Atoi(pid)
				}
			}
		}
		return 0, fmt.Errorf("no container of pkg.crossplane.io/%s runs", selector)
	}
}

// podReady holds when the package's pod is Ready.
func podReady(selector string) func(context.Context) error {
	return func(ctx context.Context) error {
		pods, err := plane.kube.CoreV1().Pods("crossplane-system").List(ctx, metav1.ListOptions{LabelSelector: "pkg.crossplane.io/" + selector})
		if err != nil {
			return err
		}
		for _, pod := range pods.Items {
			for _, c := range pod.Status.Conditions {
				if c.Type == "Ready" && c.Status == "True" {
					return nil
				}
			}
		}
		return fmt.Errorf("no pod of pkg.crossplane.io/%s is Ready", selector)
	}
}

// corePID is Crossplane core's process, as its supervisor (up.sh) wrote it.
func corePID(context.Context) (int, error) {
	b, err := os.ReadFile(plane.path("crossplane.pid"))
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err == nil && !procs.Running(pid) {
		err = fmt.Errorf("core (pid %d) does not run", pid)
	}
	return pid, err
}

// apiServerPID is the management cluster's kube-apiserver: the child of
// local/cmd/apiserver (the Shoots' are the Gardener stand-in's).
func apiServerPID(context.Context) (int, error) {
	b, err := os.ReadFile(plane.path("apiserver.pid"))
	if err != nil {
		return 0, err
	}
	parent, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, err
	}
	return procs.Child(parent, "kube-apiserver")
}

// apiServerReady: kube-apiserver says it is ready (/readyz: etcd, its
// informers, the aggregated Gardener API's availability controller).
func apiServerReady(ctx context.Context) error {
	return plane.kube.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
}

func httpOK(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		rsp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		rsp.Body.Close()
		if rsp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s answers %s", url, rsp.Status)
		}
		return nil
	}
}

// poolClusterUnreachable (#54): the API server of a hypervisor pool's
// cluster stops answering (SIGSTOP: its connections stay open and nothing
// answers, as with a partition or a hung server) while a cloud holds nodes
// there. The pool says its cluster cannot be read and binds no node anew;
// the cloud keeps its nodes and everything composed for it, reads
// ComputeAvailable Unknown on its claim (as its tenant), and stays as it
// was; the API answering again, both say so within a minute.
func poolClusterUnreachable(t *testing.T, pool string, cloud tenantCloud) {
	t.Helper()
	ctx := t.Context()
	p := ref{gvr: hypervisorClusters, namespace: "infrastructure", name: pool}
	before, err := get[hypervisorClaim](ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	xr := cloud.composite(t).Name
	held := heldBy(before.Status.Shares, xr)
	if len(held) == 0 {
		t.Fatalf("%s holds no node of %s: %+v", cloud, pool, before.Status.Shares)
	}
	composed := composedFor(t, cloud.name)
	had, err := composed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(had)

	thaw, err := procs.Freeze(shootAPIServerPID(t, pool))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(thaw)
	frozen := time.Now()

	eventually(t, 90*time.Second, pool+"'s cluster API frozen: AgentsReporting False, Unreachable, naming its API, and the pool binds no node anew (NodesBound Unknown)", p,
		func(c *hypervisorClaim) (bool, string) {
			a, nb := c.Status.GetCondition("AgentsReporting"), c.Status.GetCondition("NodesBound")
			return a.Status == corev1.ConditionFalse && a.Reason == "Unreachable" && strings.Contains(c.Status.Unreachable, "has not answered since") &&
					nb.Status == corev1.ConditionUnknown && nb.Reason == "Unreachable",
				fmt.Sprintf("AgentsReporting %s %s %q; NodesBound %s %s; status.unreachable %q", a.Status, a.Reason, a.Message, nb.Status, nb.Reason, c.Status.Unreachable)
		})
	t.Logf("%s says so %s after its API froze", pool, time.Since(frozen).Round(time.Second))
	eventuallyNil(t, 60*time.Second, "... its tenant reads ComputeAvailable Unknown (Unreachable) on "+cloud.name+", naming "+pool, func(ctx context.Context) error {
		u, err := asTenant(t, cloud.namespace).Resource(cloud.claim().gvr).Namespace(cloud.namespace).Get(ctx, cloud.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c, err := decode[cloudClaim](u)
		if err != nil {
			return err
		}
		ca := c.Status.GetCondition("ComputeAvailable")
		if ca.Status != corev1.ConditionUnknown || ca.Reason != "Unreachable" || !strings.Contains(ca.Message, pool) {
			return fmt.Errorf("ComputeAvailable %s %s: %q", ca.Status, ca.Reason, ca.Message)
		}
		return nil
	})
	t.Run("... and "+cloud.name+" stays as it was: CloudReady, its nodes of "+pool+", everything composed for it", func(t *testing.T) {
		c, err := get[cloudClaim](t.Context(), cloud.claim())
		if err != nil {
			t.Fatal(err)
		}
		if r := c.Status.GetCondition("CloudReady"); r.Status != corev1.ConditionTrue {
			t.Errorf("CloudReady %s %s: %q", r.Status, r.Reason, r.Message)
		}
		now, err := get[hypervisorClaim](t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		if got := heldBy(now.Status.Shares, xr); !slices.Equal(got, held) {
			t.Errorf("its share of %s holds %v, held %v", pool, got, held)
		}
		has, err := composed(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if slices.Sort(has); !slices.Equal(has, had) {
			t.Errorf("composed for it: %v, was %v", has, had)
		}
	})

	thaw()
	back := time.Now()
	eventually(t, 90*time.Second, "... its API answering again: AgentsReporting True and NodesBound True", p, func(c *hypervisorClaim) (bool, string) {
		a, nb := c.Status.GetCondition("AgentsReporting"), c.Status.GetCondition("NodesBound")
		return a.Status == corev1.ConditionTrue && nb.Status == corev1.ConditionTrue && c.Status.Unreachable == "",
			fmt.Sprintf("AgentsReporting %s %q; NodesBound %s %q; status.unreachable %q", a.Status, a.Message, nb.Status, nb.Message, c.Status.Unreachable)
	})
	eventually(t, 60*time.Second, "... and "+cloud.name+"'s ComputeAvailable is True again", cloud.claim(), func(c *conditioned) (bool, string) {
		ca := c.condition("ComputeAvailable")
		return ca.Status == corev1.ConditionTrue, fmt.Sprintf("ComputeAvailable %s %s: %q", ca.Status, ca.Reason, ca.Message)
	})
	t.Logf("recovered %s after its API answered again", time.Since(back).Round(time.Second))
}

// heldBy are the nodes a cloud's share of a pool holds, sorted.
func heldBy(shares []consumerv1alpha1.PoolShare, cloud string) []string {
	for _, s := range shares {
		if s.Cloud == cloud {
			return slices.Sorted(slices.Values(s.Nodes))
		}
	}
	return nil
}

// shootAPIServerPID is the PID of the kube-apiserver serving a pool's
// Shoot cluster (the Gardener stand-in runs one per Shoot): the process
// listening on its kubeconfig's port.
func shootAPIServerPID(t *testing.T, pool string) int {
	t.Helper()
	s := shootCluster(t, pool)
	u, err := url.Parse(s.config.Host)
	if err != nil {
		t.Fatal(err)
	}
	out, err := lines(t.Context(), 10*time.Second, "ss", "-Hltnp", "sport = :"+u.Port())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range out {
		if i := strings.Index(l, `"kube-apiserver",pid=`); i >= 0 {
			pid, _, _ := strings.Cut(l[i+len(`"kube-apiserver",pid=`):], ",")
			if n, err := strconv.Atoi(pid); err == nil {
				return n
			}
		}
	}
	t.Fatalf("no kube-apiserver listens on %s's port %s: %q", pool, u.Port(), out)
	return 0
}

// storagePoolClusterUnreachable (#54): the API server of a storage pool's
// cluster stops answering. Its storage agent's report stops advancing (the
// agent cannot publish, and the management cluster keeps reading its last
// one), and within three of the agent's intervals the pool says so:
// AgentsReporting False and DataAvailable Unknown instead of the last
// report passed off as current. The API answering again, the next report
// clears it.
func storagePoolClusterUnreachable(t *testing.T, pool string) {
	t.Helper()
	p := ref{gvr: storageClusters, namespace: "infrastructure", name: pool}
	if !eventually(t, 120*time.Second, pool+"'s storage agent reports", p, func(c *storageClaim) (bool, string) {
		a := c.Status.GetCondition("AgentsReporting")
		return a.Status == corev1.ConditionTrue, fmt.Sprintf("AgentsReporting %s %s: %q", a.Status, a.Reason, a.Message)
	}) {
		return
	}
	thaw, err := procs.Freeze(shootAPIServerPID(t, pool))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(thaw)
	frozen := time.Now()
	eventually(t, 150*time.Second, pool+"'s cluster API frozen: AgentsReporting False, its agent's report named the last, DataAvailable Unknown", p, func(c *storageClaim) (bool, string) {
		a, d := c.Status.GetCondition("AgentsReporting"), c.Status.GetCondition("DataAvailable")
		return a.Status == corev1.ConditionFalse && (a.Reason == "Stale" || a.Reason == "Unreachable") && c.Status.Unreachable != "" && d.Status == corev1.ConditionUnknown,
			fmt.Sprintf("AgentsReporting %s %s: %q; DataAvailable %s %s; status.unreachable %q", a.Status, a.Reason, a.Message, d.Status, d.Reason, c.Status.Unreachable)
	})
	t.Logf("%s says so %s after its API froze", pool, time.Since(frozen).Round(time.Second))
	thaw()
	back := time.Now()
	eventually(t, 90*time.Second, "... its API answering again: its agent reports again, and DataAvailable is known again", p, func(c *storageClaim) (bool, string) {
		a, d := c.Status.GetCondition("AgentsReporting"), c.Status.GetCondition("DataAvailable")
		return a.Status == corev1.ConditionTrue && c.Status.Unreachable == "" && d.Status != corev1.ConditionUnknown,
			fmt.Sprintf("AgentsReporting %s %s: %q; DataAvailable %s; status.unreachable %q", a.Status, a.Reason, a.Message, d.Status, c.Status.Unreachable)
	})
	t.Logf("recovered %s after its API answered again", time.Since(back).Round(time.Second))
}
