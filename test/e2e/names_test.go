//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	consumerv1alpha1 "github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
)

// shootsCounted is closed once 1b counted the Shoots: 3b makes a
// control-plane cluster of its own, whose Shoot would count.
var shootsCounted = make(chan struct{})

var openStackClusters = cloudsGroup("openstackclusters")

// namedClaim is any claim whose status names its Shoot.
type namedClaim struct {
	Status struct {
		xpv2.ConditionedStatus `json:",inline"`
		ShootName              string `json:"shootName,omitempty"`
		Dedicated              bool   `json:"dedicated,omitempty"`
	} `json:"status"`
}

// derivedShootName is the Shoot name of a cluster, as docs/how-it-works.md
// says it (written here again, not taken from internal/gardener): its name
// up to 17 characters (project c5c3), else its first 11 characters, a
// trailing hyphen dropped, and five hex digits of the name's SHA-256.
func derivedShootName(name string) string {
	if len(name) <= 17 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return strings.TrimSuffix(name[:11], "-") + "-" + hex.EncodeToString(sum[:])[:5]
}

// longNames (3b): a name is the user's: a name longer than Gardener allows
// gets a derived Shoot name, admitted by the real gardener-apiserver and
// recorded in the claim's status; the docs' hv-pool-compliance is
// dedicated by its label and the docs' finance-prod, applied by its
// tenant as printed, waits until the platform names the tenant.
func longNames(t *testing.T) {
	t.Parallel()
	after(t, shootsCounted, "1b counting the Shoots")
	ctx := t.Context()
	cp := object(t, `
apiVersion: crossplane.c5c3.io/v1alpha1
kind: ControlPlaneCluster
metadata: {name: eu-de-1-control-plane, namespace: infrastructure}
spec: {region: eu-de-1, kubernetesVersion: "1.34", workers: 3, maxWorkers: 3, machineType: baremetal-control-plane, highAvailability: true}
`)
	if _, err := plane.dyn.Resource(controlPlaneClusters).Namespace("infrastructure").Create(ctx, cp, metav1.CreateOptions{}); err != nil {
		t.Fatalf("cannot create eu-de-1-control-plane: %v", err)
	}
	for _, c := range []ref{
		{gvr: hypervisorClusters, namespace: "infrastructure", name: "hv-pool-compliance"},
		{gvr: controlPlaneClusters, namespace: "infrastructure", name: "eu-de-1-control-plane"},
	} {
		eventually(t, 300*time.Second, c.String()+" is Ready", c, isReady)
		want := derivedShootName(c.name)
		t.Run(fmt.Sprintf("... its Shoot's name %s fits Gardener's 21 characters with project c5c3, in status.shootName", want), func(t *testing.T) {
			got, err := get[namedClaim](t.Context(), c)
			if err != nil || got.Status.ShootName != want || len("c5c3")+len(want) > 21 {
				t.Errorf("status.shootName %q, want %q (%v)", got.Status.ShootName, want, err)
			}
		})
		t.Run("... and the real gardener-apiserver holds Shoot garden-c5c3/"+want+" of pool "+c.name, func(t *testing.T) {
			s, err := plane.dyn.Resource(shoots).Namespace("garden-c5c3").Get(t.Context(), want, metav1.GetOptions{})
			if err != nil || s.GetLabels()["c5c3.io/pool"] != c.name {
				t.Errorf("no Shoot garden-c5c3/%s labelled c5c3.io/pool=%s (%v)", want, c.name, err)
			}
		})
		t.Run("... kubectl get shows it in column SHOOT", func(t *testing.T) {
			if cols := printerColumns(t.Context(), t, c); !strings.Contains(" "+strings.Join(cols, " ")+" ", " SHOOT ") {
				t.Errorf("no SHOOT column: %v", cols)
			}
		})
	}
	compliance := ref{gvr: hypervisorClusters, namespace: "infrastructure", name: "hv-pool-compliance"}
	t.Run(`hv-pool-compliance is dedicated by its label dedicated: "true", as the docs write it (status.dedicated)`, func(t *testing.T) {
		if c, err := get[namedClaim](t.Context(), compliance); err != nil || !c.Status.Dedicated {
			t.Errorf("hv-pool-compliance is not dedicated (%v)", err)
		}
	})

	// finance-prod as the docs print it (apiVersion c5c3.io/v1alpha1),
	// applied by the tenant. The docs' pool names no tenant yet: the claim
	// says so and waits, until the platform names the tenant in
	// spec.allowedTenants.
	financeProd := docsClaim(t, 4)
	t.Run("the tenant applies the docs' finance-prod as written", func(t *testing.T) {
		if _, err := asTenant(t, "tenant-finance").Resource(resourceOf(t, financeProd.GroupVersionKind())).Namespace(financeProd.GetNamespace()).
			Create(t.Context(), financeProd, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
			t.Fatalf("the docs' finance-prod: %v", err)
		}
	})
	docsCloud := ref{gvr: resourceOf(t, financeProd.GroupVersionKind()), namespace: financeProd.GetNamespace(), name: financeProd.GetName()}
	eventually(t, 180*time.Second, "the tenant reads on finance-prod that hv-pool-compliance is open to no tenant yet", docsCloud,
		conditionIs("PoolsReady", "", "hv-pool-compliance is dedicated (spec.labels.dedicated) and open to no tenant yet"))
	if _, err := plane.dyn.Resource(compliance.gvr).Namespace(compliance.namespace).Patch(ctx, compliance.name, types.MergePatchType,
		[]byte(`{"spec":{"allowedTenants":["tenant-finance"]}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("cannot name tenant-finance on hv-pool-compliance: %v", err)
	}

	// The docs' finance-prod names no control-plane cluster: it takes the
	// one of its region, whatever its name, and while eu-de-1 has two it
	// is refused, naming them; a cloud already placed stays (#53 §1).
	eventually(t, 120*time.Second, "finance-prod, naming no control-plane cluster while eu-de-1 has two, is refused naming them", docsCloud,
		conditionIs("PoolsReady", "Refused", "spec.controlPlaneCluster: region eu-de-1 has 2 control-plane clusters (cp-eu-de-1, eu-de-1-control-plane) and the cloud names none: name one of them"))
	teamAProd := ref{gvr: openStackClusters, namespace: "team-a", name: "team-a-prod"}
	eventually(t, 120*time.Second, "team-a-prod, placed in cp-eu-de-1 before eu-de-1 had two, stays there Ready (status.consumedPools.controlPlaneCluster)", teamAProd,
		func(c *cloudClaim) (bool, string) {
			in := ""
			if c.Status.ConsumedPools != nil {
				in = c.Status.ConsumedPools.ControlPlaneCluster
			}
			pools, ready := c.Status.GetCondition("PoolsReady"), c.Status.GetCondition("Ready")
			return in == "cp-eu-de-1" && pools.Status == corev1.ConditionTrue && ready.Status == corev1.ConditionTrue,
				fmt.Sprintf("in %q, PoolsReady %s %q, Ready %s", in, pools.Status, pools.Message, ready.Status)
		})

	if err := plane.dyn.Resource(controlPlaneClusters).Namespace("infrastructure").Delete(ctx, "eu-de-1-control-plane", metav1.DeleteOptions{}); err != nil {
		t.Errorf("cannot delete eu-de-1-control-plane: %v", err)
	}
	cpShoot := derivedShootName("eu-de-1-control-plane")
	eventuallyGone(t, 120*time.Second, "deleting eu-de-1-control-plane deletes its Shoot "+cpShoot, ref{gvr: shoots, namespace: "garden-c5c3", name: cpShoot})
	eventually(t, 180*time.Second, "with eu-de-1-control-plane gone, finance-prod is placed in cp-eu-de-1, the only control-plane cluster of eu-de-1", docsCloud,
		func(c *cloudClaim) (bool, string) {
			in := ""
			if c.Status.ConsumedPools != nil {
				in = c.Status.ConsumedPools.ControlPlaneCluster
			}
			return in == "cp-eu-de-1", fmt.Sprintf("status.consumedPools.controlPlaneCluster %q, PoolsReady %q", in, c.Status.GetCondition("PoolsReady").Message)
		})

	// Lists of pools are sets: a pool named twice is refused at admission,
	// on the tenant's own apply, naming the entry.
	t.Run("a claim naming hv-pool-a twice is refused, naming the entry", func(t *testing.T) {
		dup := object(t, `
apiVersion: c5c3.io/v1alpha1
kind: OpenStackCluster
metadata: {name: e2e-duplicate-pools, namespace: team-a}
spec: {region: eu-de-1, hypervisorClusters: [hv-pool-a, hv-pool-a], storageClusters: [st-pool-a]}
`)
		_, err := asTenant(t, "team-a").Resource(openStackClusters).Namespace("team-a").Create(t.Context(), dup, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if m := regexp.MustCompile(`spec.hypervisorClusters\[1\]: Duplicate value: "[^"]*"`).FindString(fmt.Sprint(err)); m == "" {
			t.Fatalf("a claim naming hv-pool-a twice: %v", err)
		} else {
			t.Log(m)
		}
	})

	// Nothing accepted is dropped in silence: team-a-prod asks for MTU 9000,
	// which the ControlPlane cannot carry; the tenant reads so on its claim.
	t.Run("team-a-prod's MTU is reported as not applied, on the tenant's claim", func(t *testing.T) {
		c := tenantReads(t, tenantCloud{namespace: "team-a", name: "team-a-prod"})
		msg := c.Status.GetCondition("Supported").Message
		unsupported, _ := json.Marshal(c.Status.UnsupportedSettings)
		if !strings.Contains(string(unsupported), `"spec.network.mtu"`) || !strings.Contains(msg, "spec.network.mtu") {
			t.Errorf("team-a-prod does not report spec.network.mtu: %s %q", unsupported, msg)
		}
	})
}

// docsClaim is the n-th document of the C5C3 docs' claims, as printed
// (tools/xrd/testdata/c5c3-docs-claims.yaml).
func docsClaim(t *testing.T, n int) *unstructured.Unstructured {
	t.Helper()
	docs := strings.Split(read(t, filepath.Join(plane.repo, "tools/xrd/testdata/c5c3-docs-claims.yaml")), "\n---\n")
	if n > len(docs) {
		t.Fatalf("the docs' claims have %d documents, not %d", len(docs), n)
	}
	return object(t, docs[n-1])
}

// printerColumns are the columns kubectl get shows for an object: the
// server's Table of it.
func printerColumns(ctx context.Context, t *testing.T, r ref) []string {
	t.Helper()
	raw, err := plane.kube.CoreV1().RESTClient().Get().
		AbsPath("/apis", r.gvr.Group, r.gvr.Version, "namespaces", r.namespace, r.gvr.Resource, r.name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx).Raw()
	if err != nil {
		t.Fatalf("kubectl get %s: %v", r, err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatalf("the Table of %s: %v", r, err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, strings.ToUpper(c.Name))
	}
	return cols
}

// tenantReads is the tenant's cloud claim, read by a person of the tenant
// in its namespace.
func tenantReads(t *testing.T, cloud tenantCloud) *cloudClaim {
	t.Helper()
	r := cloud.claim()
	u, err := asTenant(t, r.namespace).Resource(r.gvr).Namespace(r.namespace).Get(t.Context(), r.name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the tenant reads %s: %v", cloud, err)
	}
	c, err := decode[cloudClaim](u)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// cloudClaim is an OpenStackCluster claim as the suite reads it.
type cloudClaim struct {
	Spec struct {
		ResourceRef *corev1.ObjectReference `json:"resourceRef,omitempty"`
	} `json:"spec"`
	Status struct {
		xpv2.ConditionedStatus                  `json:",inline"`
		consumerv1alpha1.OpenStackClusterStatus `json:",inline"`
	} `json:"status"`
}
