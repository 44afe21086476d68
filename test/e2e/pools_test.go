//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	consumerv1alpha1 "github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/cephhealth"
	"github.com/c5c3/consumer-plane/internal/pool"
)

var (
	hypervisors = schema.GroupVersionResource{Group: "kvm.cloud.sap", Version: "v1", Resource: "hypervisors"}
	cephClients = schema.GroupVersionResource{Group: "ceph.rook.io", Version: "v1", Resource: "cephclients"}
	// cephObjectStores are a cloud's object stores in a storage pool.
	cephObjectStores = schema.GroupVersionResource{Group: "ceph.rook.io", Version: "v1", Resource: "cephobjectstores"}
	deployments      = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	usages           = schema.GroupVersionResource{Group: "protection.crossplane.io", Version: "v1beta1", Resource: "clusterusages"}
)

// storageClaim is a StorageCluster claim as the suite reads it.
type storageClaim struct {
	Spec   consumerv1alpha1.StorageClusterParameters `json:"spec"`
	Status struct {
		xpv2.ConditionedStatus                `json:",inline"`
		consumerv1alpha1.StorageClusterStatus `json:",inline"`
	} `json:"status"`
}

// shoot is a pool's or control-plane cluster's Shoot cluster, as the
// operator stand-in runs it.
type shoot struct {
	kube   kubernetes.Interface
	dyn    dynamic.Interface
	config *rest.Config
}

// asKubelet is a client of the Shoot's cluster acting as node's kubelet
// (system:node:<node>, by the admin's impersonation): the cluster
// authorizes and admits it as that kubelet (Node authorizer,
// NodeRestriction).
func (s shoot) asKubelet(node string) kubernetes.Interface {
	cfg := rest.CopyConfig(s.config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + node, Groups: []string{"system:nodes", "system:authenticated"}}
	return kubernetes.NewForConfigOrDie(cfg)
}

func shootCluster(t *testing.T, name string) shoot {
	t.Helper()
	s, err := openShoot(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openShoot logs into a Shoot's cluster, if the stand-in runs it yet.
func openShoot(name string) (shoot, error) {
	cfg, err := restConfig(plane.path("shoots/garden-c5c3." + name + ".kubeconfig"))
	if err != nil {
		return shoot{}, fmt.Errorf("Shoot %s: %w", name, err)
	}
	return shoot{kube: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg), config: cfg}, nil
}

// poolsReportFromAgents (2b): the operator stand-in runs a hypervisor agent
// (libvirt's test driver) on each of a pool's 3 nodes and a storage agent
// (the local Ceph) per pool, where the functions placed their DaemonSets;
// the pools read what those agents publish.
func poolsReportFromAgents(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	agentsReport := func(nodes int32) func(*hypervisorClaim) (bool, string) {
		return func(c *hypervisorClaim) (bool, string) {
			s := c.Status.HypervisorClusterStatus
			return s.CapacitySource == consumerv1alpha1.CapacitySourceAgents && s.NodeCount == nodes,
				fmt.Sprintf("capacitySource %q, nodeCount %d", s.CapacitySource, s.NodeCount)
		}
	}
	for _, p := range examplesOf(hypervisorClusters) {
		if eventually(t, agentsWithin(p.name), p.name+": nodeCount 3 and capacity from its hypervisor agents", p, agentsReport(3)) {
			c, err := get[hypervisorClaim](ctx, p)
			if err == nil && c.Status.AvailableCapacity != nil && c.Status.Hypervisors != nil {
				t.Logf("... %d vCPUs, %d GB free, %d instance(s) (libvirt test driver)",
					c.Status.AvailableCapacity.VCPUs, c.Status.AvailableCapacity.MemoryGB, c.Status.Hypervisors.Instances)
			}
		}
	}

	// (Section 2, which changes hv-pool-a's Servers, ran before.)
	hvPoolA := ref{gvr: hypervisorClusters, namespace: "infrastructure", name: "hv-pool-a"}
	node := "garden-c5c3.hv-pool-a-node-0"
	// The cloud whose share holds the node (#54: a node lost under a
	// cloud's share).
	holder := ""
	if c, err := get[hypervisorClaim](ctx, hvPoolA); err == nil {
		holder = shareHolding(c.Status.Shares, node)
	}
	backInService := inMaintenance(t, "hv-pool-a", node, "e2e")
	eventually(t, 60*time.Second, "hv-pool-a: its node in maintenance leaves nodeCount 2", hvPoolA, agentsReport(2))
	eventually(t, 20*time.Second, "... and AgentsReporting names it", hvPoolA, conditionIs("AgentsReporting", "", node+" (Maintenance)"))
	// Out of service and empty (the libvirt test driver runs no instance),
	// it leaves its cloud at once: no share names it, and the cloud's
	// aggregate and the node's label follow.
	if holder == "" {
		t.Logf("... no share held %s before: only its return is checked", node)
	} else {
		eventuallyNil(t, 90*time.Second, "... it leaves "+holder+"'s share, its aggregate of hv-pool-a and its label", nodeHeldBy(t, hvPoolA, node, ""))
	}
	backInService()
	eventually(t, 60*time.Second, "... back in service: nodeCount 3", hvPoolA, agentsReport(3))
	if holder != "" {
		eventuallyNil(t, 90*time.Second, "... and a share holds it again, with its cloud's aggregate and label", nodeHeldBy(t, hvPoolA, node, "any"))
	}

	for _, p := range examplesOf(storageClusters) {
		var c *storageClaim
		eventually(t, agentsWithin(p.name), p.name+": health and OSDs from its storage agent, and what they mean for the data (DataAvailable)", p, func(s *storageClaim) (bool, string) {
			c = s
			got, data := s.Status.GetCondition("AgentsReporting"), s.Status.GetCondition(cephhealth.ConditionDataAvailable)
			want := cephhealth.Of(s.Status.HealthChecks)
			return got.Status == corev1.ConditionTrue && s.Status.OSDs != nil && data.Reason == xpv2.ConditionReason(want.Reason) && (data.Status == corev1.ConditionTrue) == want.OK,
				fmt.Sprintf("AgentsReporting %s: %q; osds %v; DataAvailable %s %s: %q, want %s for checks %q", got.Status, got.Message, s.Status.OSDs, data.Status, data.Reason, data.Message, want.Reason, s.Status.HealthChecks)
		})
		if c != nil && c.Status.OSDs != nil && c.Status.Capacity != nil {
			t.Logf("... %s, %d of %d OSDs up, %s available", c.Status.Health, c.Status.OSDs.Up, c.Status.OSDs.Total, c.Status.Capacity.Available)
		}
	}
	capacitySizesThePools(t)
}

// capacitySizesThePools (#53 §3): a storage pool's capacity sizes its nodes
// from the drives the IronCore inventory reports (the metal stand-in's
// storage servers hold 32Ti each), its status shows what it is asked for
// beside what its Ceph has, and it shares out 85 % of the smaller: the
// demo's st-pool-s asks for 200Ti of a Ceph of 192Ti (four 48Ti OSDs).
func capacitySizesThePools(t *testing.T) {
	stPoolA := ref{gvr: storageClusters, namespace: "infrastructure", name: "st-pool-a"}
	var shootName string
	eventually(t, 30*time.Second, "st-pool-a: its 700Ti take 22 nodes of 32Ti of drives, more than its spec.workers 20 (CapacitySized)", stPoolA, func(s *storageClaim) (bool, string) {
		shootName = s.Status.ShootName
		c := s.Status.GetCondition(pool.ConditionCapacitySized)
		return c.Status == corev1.ConditionTrue && strings.HasPrefix(c.Message, "700Ti of raw capacity takes 22 nodes of 32Ti of drives"), fmt.Sprintf("%s %s: %q", c.Status, c.Reason, c.Message)
	})
	t.Run("... and its Shoot's worker keeps at least 22 nodes", func(t *testing.T) {
		s, err := plane.dyn.Resource(shoots).Namespace("garden-c5c3").Get(t.Context(), shootName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		workers, _, _ := unstructured.NestedSlice(s.Object, "spec", "provider", "workers")
		if len(workers) != 1 || workers[0].(map[string]any)["minimum"] != int64(22) { //nolint:forcetypeassert // a Shoot's workers are objects
			t.Errorf("Shoot %s's workers: %v, want one of minimum 22", shootName, workers)
		}
	})
	for _, p := range examplesOf(storageClusters) {
		// shareableGB follows the reported total at the pool's next reconcile:
		// its storage report changes every 30 s.
		eventually(t, 90*time.Second, p.name+": status.capacity shows asked, raw and usable side by side, and it shares out 85 % of the smaller of asked and raw", p, func(s *storageClaim) (bool, string) {
			c := s.Status.Capacity
			if c == nil || c.Total == "" || c.Usable == "" || c.Asked != string(s.Spec.TargetCapacity()) {
				return false, fmt.Sprintf("capacity %+v, spec asks %q", c, s.Spec.TargetCapacity())
			}
			raw := gibOf(c.Total)
			if asked := gibOf(c.Asked); asked > 0 && asked < raw {
				raw = asked
			}
			return s.Status.ShareableGB == raw*85/100, fmt.Sprintf("shareableGB %d, want 85 %% of %d GiB (asked %q, raw %q, usable %q)", s.Status.ShareableGB, raw, c.Asked, c.Total, c.Usable)
		})
	}
	eventually(t, 90*time.Second, "st-pool-s: its Ceph holds 192Ti of the 200Ti it asks for, and it shares out 85 % of what Ceph has", ref{gvr: storageClusters, namespace: "infrastructure", name: "st-pool-s"}, func(s *storageClaim) (bool, string) {
		c := s.Status.Capacity
		if c == nil {
			return false, "no status.capacity"
		}
		raw := gibOf(c.Total)
		return c.Asked == "200Ti" && raw > 190<<10 && raw <= 192<<10 && s.Status.ShareableGB == raw*85/100, fmt.Sprintf("capacity %+v, shareableGB %d", c, s.Status.ShareableGB)
	})
}

// gibOf is a quantity in GiB, 0 when it is none.
func gibOf(q string) int64 {
	v, err := resource.ParseQuantity(q)
	if err != nil {
		return 0
	}
	return v.Value() >> 30
}

// inMaintenance puts a node of a hypervisor pool into maintenance, as an
// operator does on its Hypervisor, and returns what puts it back in service
// (done when the test ends too).
func inMaintenance(t *testing.T, pool, node, reason string) (backInService func()) {
	t.Helper()
	hv := shootCluster(t, pool).dyn.Resource(hypervisors)
	patch := func(p string) {
		if _, err := hv.Patch(context.Background(), node, types.MergePatchType, []byte(p), metav1.PatchOptions{}); err != nil {
			t.Errorf("Hypervisor %s: %v", node, err)
		}
	}
	patch(`{"spec":{"maintenance":"manual","maintenanceReason":` + strconv.Quote(reason) + `}}`)
	backInService = func() { patch(`{"spec":{"maintenance":null,"maintenanceReason":null}}`) }
	t.Cleanup(backInService)
	return backInService
}

// shareHolding is the cloud whose share of a hypervisor pool holds node
// (among its nodes or those draining), or "".
func shareHolding(shares []consumerv1alpha1.PoolShare, node string) string {
	for _, s := range shares {
		if slices.Contains(s.Nodes, node) || slices.Contains(s.Draining, node) {
			return s.Cloud
		}
	}
	return ""
}

// nodeHeldBy checks, of hypervisor pool p's node, that no share holds it
// and no cloud's aggregate of p or label has it (want ""), or that a share
// holds it, with its cloud's aggregate of p and its label (want "any").
func nodeHeldBy(t *testing.T, p ref, node, want string) func(context.Context) error {
	admin := openStackAdmin(t)
	return func(ctx context.Context) error {
		c, err := get[hypervisorClaim](ctx, p)
		if err != nil {
			return err
		}
		cloud := shareHolding(c.Status.Shares, node)
		switch {
		case want == "" && cloud != "":
			return fmt.Errorf("the share of %s still holds it", cloud)
		case want != "" && cloud == "":
			return fmt.Errorf("no share of %s holds it", p.name)
		}
		aggs, err := admin.aggregates(ctx, t)
		if err != nil {
			return err
		}
		for name, a := range aggs {
			if strings.HasSuffix(name, "-"+p.name) && slices.Contains(a.Hosts, node) != (name == cloud+"-"+p.name) {
				return fmt.Errorf("aggregate %s holds %v", name, a.Hosts)
			}
		}
		n, err := openShoot(c.Status.ShootName)
		if err != nil {
			return err
		}
		got, err := n.kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l := got.Labels[pool.LabelCloud]; l != cloud {
			return fmt.Errorf("its label %s is %q, want %q", pool.LabelCloud, l, cloud)
		}
		return nil
	}
}

// leastPrivilege (2c): the storage agent's Ceph user, the stretched pool's
// arbiter, the provider's metrics; and the registry relocation a landscape
// applies is admitted by core's ImageConfig kind.
func leastPrivilege(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	// Each storage pool composes a Rook CephClient for its agent (read-only
	// monitor caps); the operator stand-in does Rook's part in the local
	// Ceph, and runs the agent with that user's key as the DaemonSet would.
	t.Run("client.storage-agent has read-only caps", func(t *testing.T) {
		out, err := cephCLI(t.Context(), "auth", "get", "client.storage-agent")
		var caps []string
		for _, line := range out {
			if strings.Contains(line, "caps") {
				caps = append(caps, strings.Join(strings.Fields(line), " "))
			}
		}
		slices.Sort(caps)
		if want := []string{`caps mgr = "allow r"`, `caps mon = "allow r"`}; err != nil || !slices.Equal(caps, want) {
			t.Errorf("client.storage-agent's caps: %v (%v), want %v", caps, err, want)
		}
	})
	stretched := map[string]string{} // pool: its arbiter's control-plane cluster
	for _, p := range examplesOf(storageClusters) {
		// The docs' st-pool-encrypted of section 0 may still be
		// provisioning: its agent comes within 2b's bound.
		eventuallyNil(t, agentsWithin(p.name), p.name+" composes the CephClient storage-agent", func(ctx context.Context) error {
			sh, err := openShoot(p.name)
			if err != nil {
				return err
			}
			cc, err := sh.dyn.Resource(cephClients).Namespace("rook-ceph").Get(ctx, "storage-agent", metav1.GetOptions{})
			if mon, _, _ := unstructured.NestedString(objectOrEmpty(cc), "spec", "caps", "mon"); err != nil || mon != "allow r" {
				return fmt.Errorf("no CephClient storage-agent with mon caps \"allow r\" (%q, %v)", mon, err)
			}
			return nil
		})
		eventuallyNil(t, agentsWithin(p.name), "... "+p.name+"'s storage agent runs as client.storage-agent", func(context.Context) error {
			if args := processArgs("-node-name garden-c5c3." + p.name + "-node-0"); !strings.Contains(args, "-ceph-user storage-agent") {
				return fmt.Errorf("its storage agent runs as %q", args)
			}
			return nil
		})
		if s, err := get[storageClaim](ctx, p); err == nil && s.Spec.ArbiterCluster != "" {
			stretched[p.name] = s.Spec.ArbiterCluster
		}
	}
	for p, arbiter := range stretched {
		arbiterReachesOnlyItsMonitor(ctx, t, p, arbiter)
	}
	metricsForReadersOnly(ctx, t)
	t.Run("the ImageConfig relocating the packages is admitted", func(t *testing.T) { imageConfigAdmitted(t.Context(), t) })
}

func objectOrEmpty(u *unstructured.Unstructured) map[string]any {
	if u == nil {
		return map[string]any{}
	}
	return u.Object
}

// processArgs is the command line of the local process whose command line
// contains s, as pgrep -af shows it; empty if none.
func processArgs(s string) string {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		if args := strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " "); strings.Contains(args, s) {
			return args
		}
	}
	return ""
}

// arbiterReachesOnlyItsMonitor: a stretched pool's arbiter operator logs
// into the control-plane cluster as a ServiceAccount whose Role reaches
// only its monitor's namespace: the Secret in the pool cluster holds that
// token's kubeconfig, never the control-plane cluster's admin kubeconfig;
// the operator stand-in placed the monitor's objects with it.
func arbiterReachesOnlyItsMonitor(ctx context.Context, t *testing.T, p, arbiter string) {
	t.Helper()
	ns := "ceph-arbiter-" + p
	sec, err := shootCluster(t, p).kube.CoreV1().Secrets("arbiter-operator").Get(ctx, "arbiter-"+arbiter+"-kubeconfig", metav1.GetOptions{})
	if err != nil {
		t.Errorf("%s's arbiter kubeconfig: %v", p, err)
		return
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(sec.Data["kubeconfig"])
	if err != nil {
		t.Errorf("%s's arbiter kubeconfig: %v", p, err)
		return
	}
	a := kubernetes.NewForConfigOrDie(cfg)
	t.Run(p+"'s arbiter logs into "+arbiter+" as its ServiceAccount external-arbiter", func(t *testing.T) {
		if who := whoami(t.Context(), t, a); who.Username != "system:serviceaccount:"+ns+":external-arbiter" {
			t.Errorf("%s's arbiter kubeconfig logs into %s as %q", p, arbiter, who.Username)
		}
	})
	permissions(t, p+"'s arbiter", a,
		[]authorizationv1.ResourceAttributes{
			{Verb: "create", Group: "apps", Resource: "deployments", Namespace: ns},
			{Verb: "update", Resource: "secrets", Namespace: ns},
		},
		[]authorizationv1.ResourceAttributes{
			{Verb: "get", Resource: "secrets", Namespace: "kube-system"},
			{Verb: "list", Resource: "secrets"},
			{Verb: "create", Resource: "namespaces"},
			{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "rolebindings", Namespace: ns},
			{Verb: "create", Resource: "pods", Namespace: ns},
		})
	t.Run("... whose Service with externalIPs "+arbiter+" refuses (DenyServiceExternalIPs, in its Shoot's spec)", func(t *testing.T) {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "e2e-probe"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 6789}}, ExternalIPs: []string{"10.0.0.53"}}}
		_, err := a.CoreV1().Services(ns).Create(t.Context(), svc, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "external IPs") {
			t.Errorf("%s's arbiter creating a Service with externalIPs in %s: %v, want Forbidden by DenyServiceExternalIPs", p, arbiter, err)
		}
		svc.Spec.ExternalIPs = nil
		if _, err := a.CoreV1().Services(ns).Create(t.Context(), svc, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Errorf("%s's arbiter creating its monitor's Service (no externalIPs): %v", p, err)
		}
	})
	t.Run("... and with it the arbiter operator placed the monitor's Deployment in "+arbiter, func(t *testing.T) {
		if _, err := shootCluster(t, arbiter).dyn.Resource(deployments).Namespace(ns).Get(t.Context(), "ceph-arbiter-mon-"+p, metav1.GetOptions{}); err != nil {
			t.Errorf("no monitor Deployment ceph-arbiter-mon-%s in %s/%s: %v", p, arbiter, ns, err)
		}
	})
	t.Run("... and a ClusterUsage keeps "+arbiter+" while "+p+" needs it", func(t *testing.T) {
		l, err := plane.dyn.Resource(usages).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("cannot list ClusterUsages: %v", err)
		}
		want := fmt.Sprintf("stretched storage pool %s runs its arbiter monitor in control-plane cluster %s", p, arbiter)
		var reasons []string
		for _, u := range l.Items {
			if nested(u.Object, "spec", "by", "kind") == consumerv1alpha1.XStorageClusterKind {
				reasons = append(reasons, nested(u.Object, "spec", "reason"))
			}
		}
		if !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, want) }) {
			t.Errorf("no ClusterUsage of %s by %s: %v", arbiter, p, reasons)
		}
	})
}

// metricsForReadersOnly: the provider serves metrics over HTTPS to callers
// allowed to get /metrics (examples/crossplane/provider-cobaltcore.yaml).
func metricsForReadersOnly(ctx context.Context, t *testing.T) {
	t.Helper()
	const ns, sa = "e2e-monitoring", "prometheus"
	_, _ = plane.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	_, _ = plane.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	_, err := plane.kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-prometheus"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cobaltcore:metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Errorf("cannot bind cobaltcore:metrics-reader: %v", err)
	}
	t.Cleanup(func() {
		_ = plane.kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), "e2e-prometheus", metav1.DeleteOptions{})
		_ = plane.kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	status := func(token string) int {
		// The provider's serving certificate is its own; only the answer
		// counts here (curl -k).
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the status code is checked, not the server
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://127.0.0.1:18090/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rsp, err := c.Do(req)
		if err != nil {
			return 0
		}
		_ = rsp.Body.Close()
		return rsp.StatusCode
	}
	t.Run("the provider's metrics refuse a caller without a token (401)", func(t *testing.T) {
		if got := status(""); got != http.StatusUnauthorized {
			t.Errorf("HTTP %d, want 401", got)
		}
	})
	tr, err := plane.kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cannot get a token of %s/%s: %v", ns, sa, err)
	}
	// The provider's authorizer may cache a refusal for a moment.
	eventuallyNil(t, 30*time.Second, "... and serve a ServiceAccount bound to cobaltcore:metrics-reader", func(context.Context) error {
		if got := status(tr.Status.Token); got != http.StatusOK {
			return fmt.Errorf("HTTP %d, want 200", got)
		}
		return nil
	})
}

// imageConfigAdmitted: the registry relocation a landscape applies
// (examples/crossplane/image-config.yaml) is admitted by core's ImageConfig
// kind, as kubectl apply --dry-run=server does.
func imageConfigAdmitted(ctx context.Context, t *testing.T) {
	t.Helper()
	u := object(t, read(t, filepath.Join(plane.repo, "examples/crossplane/image-config.yaml")))
	data, _ := u.MarshalJSON()
	if _, err := plane.dyn.Resource(resourceOf(t, u.GroupVersionKind())).Patch(ctx, u.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: "e2e", DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("examples/crossplane/image-config.yaml is not admitted: %v", err)
	}
}

// servers and pools of sections 3 and 4, made as an operator makes them.

func server(ctx context.Context, t *testing.T, name string, labels map[string]string, state, claimedBy string) {
	t.Helper()
	spec := map[string]any{"systemUUID": "e2e-" + name}
	if claimedBy != "" {
		spec["serverClaimRef"] = map[string]any{"namespace": "metal", "name": claimedBy}
	}
	l := map[string]any{}
	for k, v := range labels {
		l[k] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "Server",
		"metadata": map[string]any{"name": name, "labels": l}, "spec": spec,
	}}
	data, _ := u.MarshalJSON()
	if _, err := plane.dyn.Resource(servers).Patch(ctx, name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "e2e", Force: ptrTo(true)}); err != nil {
		t.Fatalf("Server %s: %v", name, err)
	}
	status := fmt.Appendf(nil, `{"status":{"state":%q,"totalSystemMemory":"512Gi","processors":[{"id":"CPU0","totalCores":32,"totalThreads":64}]}}`, state)
	if _, err := plane.dyn.Resource(servers).Patch(ctx, name, types.MergePatchType, status, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("Server %s's status: %v", name, err)
	}
}

// hypervisorPool claims a hypervisor pool in one zone of eu-de-1 from a
// machine pool; dedicated to a tenant if one is named.
func hypervisorPool(ctx context.Context, t *testing.T, name, machinePool string, workers, maxWorkers int64, tenant string) ref {
	t.Helper()
	spec := map[string]any{
		"region": "eu-de-1", "name": name, "workers": workers, "maxWorkers": maxWorkers,
		"zones": []any{"eu-de-1a"}, "ironcore": map[string]any{"machinePool": machinePool},
	}
	if tenant != "" {
		spec["dedicated"], spec["allowedTenants"] = true, []any{tenant}
	}
	r := ref{gvr: hypervisorClusters, namespace: "infrastructure", name: name}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "crossplane.c5c3.io/v1alpha1", "kind": "HypervisorCluster",
		"metadata": map[string]any{"name": name, "namespace": r.namespace}, "spec": spec,
	}}
	data, _ := u.MarshalJSON()
	if _, err := plane.dyn.Resource(r.gvr).Namespace(r.namespace).Patch(ctx, name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "e2e", Force: ptrTo(true)}); err != nil {
		t.Fatalf("HypervisorCluster %s: %v", name, err)
	}
	return r
}

func ptrTo[T any](v T) *T { return &v }

// noShoot: the pool got no Shoot in the landscape's Gardener project.
func noShoot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	if _, err := plane.dyn.Resource(shoots).Namespace("garden-c5c3").Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Shoot was created for %s (or reading it failed: %v)", name, err)
	}
}

// underProvisioned (3): a pool the inventory cannot provide gets no Shoot,
// is not Ready, and says by how much it falls short.
func underProvisioned(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for i := 1; i <= 3; i++ {
		server(ctx, t, fmt.Sprintf("e2e-short-%d", i), map[string]string{"c5c3.io/machine-pool": "e2e-short"}, "Available", "")
	}
	short := hypervisorPool(ctx, t, "e2e-short", "e2e-short", 5, 6, "")
	// Reason and message read together: servers other sections create make
	// the inventory count again meanwhile, and its message says so for a
	// moment.
	var says string
	if eventually(t, 60*time.Second, "e2e-short (5 workers, 3 servers) is UnderProvisioned and says by how much", short, func(c *conditioned) (bool, string) {
		got := c.condition(pool.ConditionInventory)
		says = got.Message
		return string(got.Reason) == pool.ReasonUnderProvisioned && strings.Contains(got.Message, "2 more are needed"), fmt.Sprintf("%s: %s", got.Reason, got.Message)
	}) {
		t.Logf("... %s", says)
	}
	// Nothing comes later: the verdict holds.
	time.Sleep(5 * time.Second)
	t.Run("no Shoot for e2e-short", func(t *testing.T) { noShoot(t.Context(), t, "e2e-short") })
	t.Run("e2e-short is not Ready", func(t *testing.T) {
		if c, err := get[conditioned](t.Context(), short); err != nil || c.condition("Ready").Status == corev1.ConditionTrue {
			t.Errorf("e2e-short reports Ready (or reading it failed: %v)", err)
		}
	})
}

// labelOverlap (4): a dedicated pool whose labels match a Server another
// pool claimed gets no Shoot.
func labelOverlap(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	labels := map[string]string{"c5c3.io/machine-pool": "e2e-fin", "c5c3.io/dedicated-pool": "e2e-fin"}
	for i := 1; i <= 3; i++ {
		server(ctx, t, fmt.Sprintf("e2e-fin-%d", i), labels, "Available", "")
	}
	server(ctx, t, "e2e-fin-4", labels, "Reserved", "shoot--c5c3--hv-pool-b-hypervisor-z1-1")
	fin := hypervisorPool(ctx, t, "e2e-fin", "e2e-fin", 2, 3, "finance")
	eventually(t, 60*time.Second, "e2e-fin reports LabelOverlap", fin, conditionIs(pool.ConditionInventory, pool.ReasonLabelOverlap, ""))
	t.Run("no Shoot for e2e-fin", func(t *testing.T) { noShoot(t.Context(), t, "e2e-fin") })
}
