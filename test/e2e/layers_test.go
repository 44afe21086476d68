//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/c5c3/consumer-plane/internal/pool"
)

// layersSource is the install layer's source of the pool clusters' layers
// (examples/crossplane/cluster-layers.yaml), beside the pools' kubeconfigs.
const layersSource = "cobaltcore-cluster-layers"

// layered is an example pool or control-plane cluster and what its layer
// puts in its cluster.
type layered struct {
	pool ref
	kind pool.Kind
	// namespace/workload is the layer's agent DaemonSet ("" for a kind
	// without agents); crds are the operators' CRDs the layer brings.
	namespace, workload string
	crds                []string
	// layer is the Kustomization that delivers it; shoot its cluster.
	layer, shoot string
}

// layersFromFlux (2d): each example pool's and control-plane cluster's
// layer (the operators' CRDs and namespaces, a pool's node agents and their
// admission policy) is applied into its cluster by Flux, from the
// platform's Git at the source's current commit, through the Kustomization
// the cluster's function composed, and the claim says so (LayerApplied);
// nothing of it was there before (the Gardener stand-in starts clusters
// empty); and a commit to the hypervisor pools' layer reaches every
// hypervisor pool's cluster, and leaves it when it is taken back (prune).
func layersFromFlux(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var pools []layered
	add := func(gvr schema.GroupVersionResource, kind pool.Kind, namespace, workload string, crds ...string) {
		for _, p := range examplesOf(gvr) {
			if provisioning(p.name) {
				continue
			}
			o, err := plane.dyn.Resource(p.gvr).Namespace(p.namespace).Get(ctx, p.name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			name := nested(o.Object, "spec", "name")
			if kind == pool.KindControlPlane {
				name = p.name // a control-plane cluster is named after its claim
			}
			pools = append(pools, layered{pool: p, kind: kind, namespace: namespace, workload: workload, crds: crds,
				layer: pool.LayerName(pool.Access{Kind: kind, Name: name}), shoot: nested(o.Object, "status", "shootName")})
		}
	}
	add(hypervisorClusters, pool.KindHypervisor, "c5c3-agents", "hypervisor-agent", "hypervisors.kvm.cloud.sap", "ovsnodes.ovs.c5c3.io")
	add(storageClusters, pool.KindStorage, "rook-ceph", "storage-agent", "cephclusters.ceph.rook.io", "remotearbiters.ceph.cobaltcore.sap.com", "cephstatuses.storage.c5c3.io")
	add(controlPlaneClusters, pool.KindControlPlane, "", "", "controlplanes.c5c3.io")
	if len(pools) == 0 {
		t.Fatal("no example pool to look at")
	}

	for _, p := range pools {
		eventuallyNil(t, time.Minute, p.pool.name+": its layer (operators' CRDs, agents) was applied by its Kustomization at the source's commit", func(ctx context.Context) error {
			rev, err := layersRevision(ctx)
			if err != nil {
				return err
			}
			k, err := plane.dyn.Resource(kustomizations).Namespace("crossplane-system").Get(ctx, p.layer, metav1.GetOptions{})
			if err != nil {
				return err
			}
			c, err := decode[conditioned](k)
			if err != nil {
				return err
			}
			if ready, applied := c.condition("Ready"), nested(k.Object, "status", "lastAppliedRevision"); ready.Status != "True" || applied != rev {
				return fmt.Errorf("Kustomization crossplane-system/%s: Ready %s at %q (the source is at %q): %.300s", p.layer, ready.Status, applied, rev, ready.Message)
			}
			claim, err := get[conditioned](ctx, p.pool)
			if err != nil {
				return err
			}
			if c := claim.condition(pool.ConditionLayerApplied); c.Status != "True" {
				return fmt.Errorf("%s says %s %s: %s", p.pool, pool.ConditionLayerApplied, c.Status, c.Message)
			}
			s, err := openShoot(p.shoot)
			if err != nil {
				return err
			}
			fromLayer := func(what string, l map[string]string) error {
				if l["kustomize.toolkit.fluxcd.io/name"] != p.layer || l["kustomize.toolkit.fluxcd.io/namespace"] != "crossplane-system" {
					return fmt.Errorf("%s in Shoot %s is not the layer's: labels %v", what, p.shoot, l)
				}
				return nil
			}
			for _, name := range p.crds {
				crd, err := s.dyn.Resource(crds).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return fmt.Errorf("CRD %s in Shoot %s: %w", name, p.shoot, err)
				}
				if err := fromLayer("CRD "+name, crd.GetLabels()); err != nil {
					return err
				}
				// Written by Flux alone (the API server sets its status):
				// the Shoot's cluster did not come with it.
				for _, f := range crd.GetManagedFields() {
					if f.Manager != "kustomize-controller" && f.Manager != "kube-apiserver" {
						return fmt.Errorf("CRD %s in Shoot %s was also written by %s", name, p.shoot, f.Manager)
					}
				}
			}
			if p.workload == "" {
				return nil
			}
			ds, err := s.kube.AppsV1().DaemonSets(p.namespace).Get(ctx, p.workload, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("DaemonSet %s/%s in Shoot %s: %w", p.namespace, p.workload, p.shoot, err)
			}
			if err := fromLayer("DaemonSet "+p.namespace+"/"+p.workload, ds.GetLabels()); err != nil {
				return err
			}
			ns, err := s.kube.CoreV1().Namespaces().Get(ctx, p.namespace, metav1.GetOptions{})
			if err != nil {
				return err
			}
			return fromLayer("Namespace "+p.namespace, ns.GetLabels())
		})
	}

	// A commit to the hypervisor pools' layer: a ConfigMap beside the
	// agents, then taken back. Whatever fails on the way, the demo's Git
	// gets the layer back as it was (later sections commit with git add -A).
	dir := plane.path("gitops/clusters/pools/hypervisor")
	probe := "probe-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	kustomization := filepath.Join(dir, "kustomization.yaml")
	probeFile := filepath.Join(dir, "layer-probe.yaml")
	before, err := os.ReadFile(kustomization)
	if err != nil {
		t.Fatalf("the demo's hypervisor layer: %v", err)
	}
	// A run before this one on the same demo that died midway.
	before = []byte(strings.Replace(string(before), "- layer-probe.yaml\n", "", 1))
	restore := func() error {
		if err := os.Remove(probeFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return os.WriteFile(kustomization, before, 0o644) //nolint:gosec // a Git tree's file
	}
	t.Cleanup(func() {
		if err := restore(); err != nil {
			t.Errorf("the demo's hypervisor layer left changed: %v", err)
			return
		}
		if gitops(t, "status", "--porcelain", "--", dir) != "" {
			gitopsCommit(t, "platform: the probe taken back (e2e 2d stopped midway)")
		}
	})
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: layer-probe, namespace: c5c3-agents}\ndata: {probe: " + probe + "}\n"
	if err := os.WriteFile(probeFile, []byte(cm), 0o644); err != nil { //nolint:gosec // a Git tree's file
		t.Fatal(err)
	}
	withProbe := strings.Replace(string(before), "resources:\n", "resources:\n- layer-probe.yaml\n", 1)
	if withProbe == string(before) {
		t.Fatalf("%s has no resources list to add the probe to", kustomization)
	}
	if err := os.WriteFile(kustomization, []byte(withProbe), 0o644); err != nil { //nolint:gosec // a Git tree's file
		t.Fatal(err)
	}
	rev := gitopsCommit(t, "platform: a probe in the hypervisor pools' layer")
	probeIn := func(p layered, want string) func(context.Context) error {
		var asked time.Time
		return func(ctx context.Context) error {
			// Each pool's Kustomization applies a new revision of its
			// source as soon as the source has fetched it.
			if err := fetched(ctx, "crossplane-system", layersSource, rev, &asked); err != nil {
				return err
			}
			s, err := openShoot(p.shoot)
			if err != nil {
				return err
			}
			got, err := s.kube.CoreV1().ConfigMaps("c5c3-agents").Get(ctx, "layer-probe", metav1.GetOptions{})
			switch {
			case want == "" && apierrors.IsNotFound(err):
				return nil
			case want == "" && err == nil:
				return errors.New("ConfigMap c5c3-agents/layer-probe is still there")
			case err != nil:
				return err
			case got.Data["probe"] != want:
				return fmt.Errorf("ConfigMap c5c3-agents/layer-probe holds %q, want %q", got.Data["probe"], want)
			}
			return nil
		}
	}
	for _, p := range pools {
		if p.kind == pool.KindHypervisor {
			eventuallyNil(t, probeWithin(p.pool.name), p.pool.name+": the layer's commit reached its cluster", probeIn(p, probe))
		}
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	rev = gitopsCommit(t, "platform: the probe taken back")
	for _, p := range pools {
		if p.kind == pool.KindHypervisor {
			eventuallyNil(t, probeWithin(p.pool.name), p.pool.name+": taken back from the layer, it left its cluster", probeIn(p, ""))
		}
	}
}

// probeWithin bounds the wait for a commit to reach a pool's cluster: a
// minute (CI: 15 s at most), and four for hv-pool-us, whose cluster API 4b
// freezes meanwhile for about a minute (stop 74's CI: the probe did not get
// in while it was frozen); Flux tries again every retryInterval (5 s) and
// gets in once it answers, which this also shows.
func probeWithin(pool string) time.Duration {
	if pool == "hv-pool-us" {
		return 4 * time.Minute
	}
	return time.Minute
}

// layersRevision is the commit the pools' layers' source has fetched.
func layersRevision(ctx context.Context) (string, error) {
	repo, err := plane.dyn.Resource(gitRepositories).Namespace("crossplane-system").Get(ctx, layersSource, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return nested(repo.Object, "status", "artifact", "revision"), nil
}
