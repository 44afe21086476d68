//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	consumerv1alpha1 "github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
)

var (
	shootKubeconfigs = schema.GroupVersionResource{Group: "gardener.provider.c5c3.io", Version: "v1alpha1", Resource: "shootkubeconfigs"}
	stretchModes     = schema.GroupVersionResource{Group: "ceph.provider.c5c3.io", Version: "v1alpha1", Resource: "stretchmodes"}
)

// stretchedPool (9f): st-pool-s spans eu-de-1a and eu-de-1b with the
// arbiter's monitor in cp-eu-de-1 (#42). Its Ceph here is a local Ceph of
// its own, laid out as Rook lays out a stretched pool cluster (up.sh): its
// status says where its data is and what that survives, Ceph runs in
// stretch mode (set by the provider's StretchMode, each monitor in its
// node's zone, the arbiter's the tiebreaker), and a cloud's Ceph pools are
// made there with size 4 and min_size 2 by the stretch rule; that cloud,
// created while 9 killed the plane's processes, converged with one object
// per managed resource in the real services. Deleted, the
// pool takes its arbiter out of the control-plane cluster and releases it.
// (internal-stretched, the cloud on it, was applied in 9b.)
func stretchedPool(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := get[storageClaim](ctx, ref{gvr: storageClusters, namespace: "infrastructure", name: "st-pool-s"})
	if err != nil {
		t.Fatalf("st-pool-s: %v", err)
	}
	t.Run("st-pool-s keeps 4 replicas, 2 in each zone, served with 2", func(t *testing.T) {
		want := consumerv1alpha1.DataPlacement{FailureDomain: "zone", Replicas: 4, MinReplicas: 2, Stretched: true, CrushRule: "stretch_zone"}
		got := st.Status.DataPlacement
		if got == nil {
			t.Fatal("st-pool-s has no status.dataPlacement")
		}
		want.Survives = got.Survives
		if *got != want {
			t.Fatalf("status.dataPlacement is %+v", *got)
		}
		t.Logf("it survives %s", got.Survives)
	})
	t.Run("st-pool-s's claim says Ceph runs in stretch mode, the arbiter's monitor the tiebreaker", func(t *testing.T) {
		c := st.Status.GetCondition("StretchMode")
		if want := "Ceph runs in stretch mode: every pool keeps 2 replicas in each zone by rule stretch_zone; monitor arbiter in cp-eu-de-1 is the tiebreaker"; c.Status != "True" || c.Message != want {
			t.Fatalf("its StretchMode condition is %s: %q", c.Status, c.Message)
		}
	})
	const mons = "true arbiter 3 a{zone=eu-de-1a} b{zone=eu-de-1b} arbiter{zone=cp-eu-de-1}"
	t.Run("st-pool-s's Ceph: stretch mode on, each monitor in its node's zone, the arbiter's the tiebreaker, election by connectivity", func(t *testing.T) {
		if got, err := monState(ctx); err != nil || got != mons {
			t.Fatalf("its mon dump: %q (%v), want %q", got, err, mons)
		}
	})
	c := tenantCloud{namespace: "internal", name: "internal-stretched"}
	xs := c.composite(t).Name
	// A cloud's pools there ask the provider for exactly that: size 4,
	// min_size 2, the stretch over zones, on the pool's device class; Ceph
	// has them so.
	uses := []string{"volumes", "images"}
	eventuallyNil(t, 240*time.Second, "internal-stretched's volume and image pools in st-pool-s ask for 4 replicas, min_size 2, stretched over zones, on nvme", func(ctx context.Context) error {
		for _, use := range uses {
			p, err := get[cephPool](ctx, ref{gvr: cephPools, name: xs + "-st-pool-s-" + use})
			if err != nil {
				return err
			}
			f := p.Spec.ForProvider
			if f.Size != 4 || f.MinSize != 2 || f.Stretch == nil || f.Stretch.ZoneType != "zone" || f.DeviceClass != "nvme" {
				return fmt.Errorf("%s asks for %+v", use, f)
			}
		}
		return nil
	})
	volumes := ""
	eventuallyNil(t, 240*time.Second, "... and st-pool-s's Ceph has them so: size 4, min_size 2, rule stretch_zone (and the Pool's status says it)", func(ctx context.Context) error {
		inCeph, err := stretchedPools(ctx)
		if err != nil {
			return err
		}
		for _, use := range uses {
			p, err := get[cephPool](ctx, ref{gvr: cephPools, name: xs + "-st-pool-s-" + use})
			if err != nil {
				return err
			}
			if got := inCeph[p.Spec.ForProvider.Name]; got != "4 2 stretch_zone" {
				return fmt.Errorf("Ceph has %s (%s) as %q", use, p.Spec.ForProvider.Name, got)
			}
			if use == "volumes" {
				if p.Status.AtProvider.CrushRule != "stretch_zone" {
					return fmt.Errorf("the Pool's status.atProvider.crushRule is %q", p.Status.AtProvider.CrushRule)
				}
				volumes = p.Spec.ForProvider.Name
			}
		}
		return nil
	})
	// internal-stretched was created while 9 killed the provider, its
	// function, core and kube-apiserver: it converged, and the real services
	// hold one object per managed resource of it, no second and no orphan.
	if eventually(t, 240*time.Second, "internal-stretched, created while the plane's processes were killed (9), is Ready", c.claim(), isReady) {
		t.Run("... and holds one object in the real services per managed resource: none twice, none left over", func(t *testing.T) {
			oneEach(t, c.name, xs)
		})
	}
	deleteClaims(t, c.claim())
	eventuallyNone(t, 240*time.Second, "internal-stretched is deleted with its pools (dataPolicy Delete)", composedFor(t, c.name))
	t.Run("... its volume pool is gone from st-pool-s's Ceph", func(t *testing.T) {
		inCeph, err := stretchedPools(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := inCeph[volumes]; volumes == "" || ok {
			t.Fatalf("internal-stretched's volume pool %q is still in st-pool-s's Ceph", volumes)
		}
	})
	// Deleted, a stretched pool takes its arbiter's identity and monitor out
	// of the control-plane cluster with it, and releases that cluster.
	deleteClaims(t, ref{gvr: storageClusters, namespace: "infrastructure", name: "st-pool-s"})
	eventuallyNone(t, 120*time.Second, "st-pool-s: its composite is gone", compositeOf(consumer("xstorageclusters"), "st-pool-s"))
	cp := shootCluster(t, "cp-eu-de-1")
	eventuallyNil(t, 60*time.Second, "st-pool-s: its arbiter's namespace (ServiceAccount, Role, monitor) is gone from cp-eu-de-1", func(ctx context.Context) error {
		_, err := cp.kube.CoreV1().Namespaces().Get(ctx, "ceph-arbiter-st-pool-s", metav1.GetOptions{})
		if err == nil {
			return fmt.Errorf("namespace ceph-arbiter-st-pool-s is still there")
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	eventuallyNone(t, 30*time.Second, "st-pool-s: its arbiter's ShootKubeconfig is gone", existing(ref{gvr: shootKubeconfigs, name: "storage-st-pool-s-arbiter"}))
	eventuallyNone(t, 30*time.Second, "st-pool-s: its StretchMode is gone", existing(ref{gvr: stretchModes, name: "storage-st-pool-s-stretch-mode"}))
	t.Run("... and its Ceph stays in stretch mode: leaving it would lower every pool's placement", func(t *testing.T) {
		if got, err := monState(t.Context()); err != nil || !strings.HasPrefix(got, "true arbiter ") {
			t.Fatalf("st-pool-s's Ceph's mon dump: %q (%v)", got, err)
		}
	})
	t.Run("... and its usage of cp-eu-de-1 is released", func(t *testing.T) {
		l, err := plane.dyn.Resource(usages).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range l.Items {
			if nested(u.Object, "spec", "by", "kind") == "XStorageCluster" {
				t.Errorf("a storage pool still uses a control-plane cluster: %s", nested(u.Object, "spec", "reason"))
			}
		}
	})
}

// cephPool is a Pool managed resource as the suite reads it.
type cephPool struct {
	Spec struct {
		ForProvider struct {
			Name        string `json:"name"`
			Size        int    `json:"size"`
			MinSize     int    `json:"minSize"`
			DeviceClass string `json:"deviceClass"`
			Stretch     *struct {
				ZoneType string `json:"zoneType"`
			} `json:"stretch"`
		} `json:"forProvider"`
	} `json:"spec"`
	Status struct {
		AtProvider struct {
			CrushRule string `json:"crushRule"`
		} `json:"atProvider"`
	} `json:"status"`
}

// stretchedPools are the pools of st-pool-s's Ceph: name to "size min_size
// rule".
func stretchedPools(ctx context.Context) (map[string]string, error) {
	out, err := stretchedCeph(ctx, "osd", "pool", "ls", "detail", "-f", "json")
	if err != nil {
		return nil, err
	}
	var pools []struct {
		Name      string `json:"pool_name"`
		Size      int    `json:"size"`
		MinSize   int    `json:"min_size"`
		CrushRule int    `json:"crush_rule"`
	}
	if err := json.Unmarshal([]byte(strings.Join(out, "\n")), &pools); err != nil {
		return nil, err
	}
	out, err = stretchedCeph(ctx, "osd", "crush", "rule", "dump", "-f", "json")
	if err != nil {
		return nil, err
	}
	var rules []struct {
		ID   int    `json:"rule_id"`
		Name string `json:"rule_name"`
	}
	if err := json.Unmarshal([]byte(strings.Join(out, "\n")), &rules); err != nil {
		return nil, err
	}
	byID := map[int]string{}
	for _, r := range rules {
		byID[r.ID] = r.Name
	}
	m := map[string]string{}
	for _, p := range pools {
		m[p.Name] = fmt.Sprintf("%d %d %s", p.Size, p.MinSize, byID[p.CrushRule])
	}
	return m, nil
}

// monState is a stretched Ceph's monitors as its mon dump says:
// stretch mode, tiebreaker, election strategy, each monitor's location.
func monState(ctx context.Context) (string, error) {
	out, err := stretchedCeph(ctx, "mon", "dump", "-f", "json")
	if err != nil {
		return "", err
	}
	var d struct {
		StretchMode      bool   `json:"stretch_mode"`
		TiebreakerMon    string `json:"tiebreaker_mon"`
		ElectionStrategy int    `json:"election_strategy"`
		Mons             []struct {
			Name          string `json:"name"`
			CrushLocation string `json:"crush_location"`
		} `json:"mons"`
	}
	if err := json.Unmarshal([]byte(strings.Join(out, "\n")), &d); err != nil {
		return "", err
	}
	s := fmt.Sprintf("%t %s %d", d.StretchMode, d.TiebreakerMon, d.ElectionStrategy)
	for _, m := range d.Mons {
		s += " " + m.Name + m.CrushLocation
	}
	return s, nil
}

// stretchedCeph runs the ceph CLI against st-pool-s's own Ceph (up.sh).
func stretchedCeph(ctx context.Context, args ...string) ([]string, error) {
	return lines(ctx, 30*time.Second, "ceph", append([]string{"-c", plane.path("ceph-stretched/ceph.conf"), "--connect-timeout", "10"}, args...)...)
}

// oneEach: what the real services hold of a cloud on st-pool-s (names
// holding its composite's name xr) is one object per managed resource of
// its claim, kind by kind: a create retried after a crash made no second
// project, aggregate, volume type, HA chassis group, Ceph pool or key.
func oneEach(t *testing.T, claim, xr string) {
	t.Helper()
	ctx := t.Context()
	l := listServices(ctx, t)
	pools, err := stretchedCeph(ctx, "osd", "pool", "ls")
	if err != nil {
		t.Fatal(err)
	}
	auth, err := stretchedCeph(ctx, "auth", "ls")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, line := range auth {
		if strings.HasPrefix(line, "client.") {
			keys = append(keys, line)
		}
	}
	inService := map[string][]string{
		"projects.keystone.provider.c5c3.io":   slices.Collect(maps.Keys(l.projects)),
		"aggregates.nova.provider.c5c3.io":     slices.Collect(maps.Keys(l.aggregates)),
		"volumetypes.cinder.provider.c5c3.io":  l.volumeTypes,
		"hachassisgroups.ovn.provider.c5c3.io": slices.Collect(maps.Keys(l.haGroups)),
		"pools.ceph.provider.c5c3.io":          pools,
		"clients.ceph.provider.c5c3.io":        keys,
	}
	for _, kind := range slices.Sorted(maps.Keys(inService)) {
		resource, group, _ := strings.Cut(kind, ".")
		managed, err := labelledFor(ctx, schema.GroupVersionResource{Group: group, Version: "v1alpha1", Resource: resource}, claim)
		if err != nil {
			t.Fatal(err)
		}
		held := slices.DeleteFunc(slices.Clone(inService[kind]), func(s string) bool { return !strings.Contains(s, xr) })
		if len(managed) == 0 || len(held) != len(managed) {
			t.Errorf("%s: %d managed resources %v, the real service holds %d: %v", kind, len(managed), managed, len(held), held)
			continue
		}
		t.Logf("%s: %d, one each", kind, len(held))
	}
}
