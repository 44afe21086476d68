//go:build e2e

package e2e

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/aggregates"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	consumerv1alpha1 "github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	ovnv1alpha1 "github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/cephhealth"
	"github.com/c5c3/consumer-plane/internal/pool"
)

// TestClouds: the tenants' clouds (e2e.sh's sections 6, 6b and 6c). Every
// example cloud and the docs' finance-prod is Ready, each has its own
// objects in the real services, each tenant logs in with its claim's
// connection secret and finds in its cloud what its claim says it holds,
// and no secret value is outside its Secrets. The sections only read (6c
// plants a ConfigMap of its own), so they run at once.
func TestClouds(t *testing.T) {
	t.Run("6 the tenants' clouds", tenantsClouds)
	t.Run("6b each tenant logs in with its claim's connection secret", tenantsLogIn)
	t.Run("6c no published secret value outside its Secrets", noSecretOutsideItsSecrets)
}

// tenantCloud is a cloud claim of the landscape.
type tenantCloud struct {
	namespace, name string
	// legacy: claimed in the deprecated crossplane.c5c3.io, not c5c3.io.
	legacy bool
}

func (c tenantCloud) String() string { return c.namespace + "/" + c.name }

func (c tenantCloud) claim() ref {
	r := ref{gvr: openStackClusters, namespace: c.namespace, name: c.name}
	if c.legacy {
		r.gvr = legacyGroup(r.gvr)
	}
	return r
}

// composite is the cloud's XOpenStackCluster, named once the claim is bound.
func (c tenantCloud) composite(t *testing.T) *consumerv1alpha1.XOpenStackCluster {
	t.Helper()
	x, err := c.compositeOf(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// compositeOf is the cloud's composite, or why it cannot be read.
func (c tenantCloud) compositeOf(ctx context.Context) (*consumerv1alpha1.XOpenStackCluster, error) {
	cl, err := get[cloudClaim](ctx, c.claim())
	if err != nil || cl.Spec.ResourceRef == nil {
		return nil, fmt.Errorf("%s names no composite (%v)", c, err)
	}
	gvr := xOpenStackClusters
	if c.legacy {
		gvr = legacyGroup(gvr)
	}
	x, err := get[consumerv1alpha1.XOpenStackCluster](ctx, ref{gvr: gvr, name: cl.Spec.ResourceRef.Name})
	if err != nil {
		return nil, fmt.Errorf("%s's composite: %w", c, err)
	}
	return x, nil
}

// tenantClouds are the example clouds and the docs' finance-prod (section 0).
var tenantClouds = []tenantCloud{
	{namespace: "finance", name: "finance-prod"},
	{namespace: "internal", name: "internal-prod"},
	{namespace: "team-a", name: "team-a-prod"},
	{namespace: "team-a", name: "team-a-staging"},
	{namespace: "team-b", name: "team-b-staging"},
	{namespace: "tenant-finance", name: "finance-prod"},
}

var ovnProviderConfigs = schema.GroupVersionResource{Group: ovnv1alpha1.Group, Version: ovnv1alpha1.Version, Resource: "providerconfigs"}

// cloudsReady is the first check of 6 and 6b: the docs' finance-prod,
// applied with its pools in section 0, is Ready (up to 600 s: its pools
// provision while the sections before run), and every other cloud is.
func cloudsReady(t *testing.T) bool {
	t.Helper()
	docs := tenantClouds[len(tenantClouds)-1]
	if !eventually(t, 600*time.Second, "tenant-finance/finance-prod, the docs' cloud (c5c3.io), is Ready on hv-pool-compliance and st-pool-encrypted", docs.claim(), isReady) {
		return false
	}
	if p, err := plane.dyn.Resource(hypervisorClusters).Namespace("infrastructure").Get(t.Context(), "hv-pool-compliance", metav1.GetOptions{}); err == nil {
		t.Logf("... %.0f s after its pools were applied", time.Since(p.GetCreationTimestamp().Time).Seconds())
	}
	ready := true
	for _, c := range tenantClouds[:len(tenantClouds)-1] {
		ready = eventually(t, 5*time.Second, c.String()+" is Ready", c.claim(), isReady) && ready
	}
	return ready
}

// tenantsClouds (6): each cloud has its own objects in the real services:
// a Keystone project, Nova aggregates, Cinder volume types, Ceph pools and
// a CephX client, and in OVN, reached over ssl with the cloud's client
// certificate, an HA chassis group per hypervisor pool of that pool's
// chassis.
func tenantsClouds(t *testing.T) {
	t.Parallel()
	if !cloudsReady(t) {
		return
	}
	ctx := t.Context()
	// #53 §5: the plain name is what a tenant and a platform engineer type.
	t.Run("kubectl get openstackclusters -A lists every cloud, as the tenants claimed them", func(t *testing.T) {
		got, err := kubectl(t.Context(), "get", "openstackclusters", "-A", "-o", "custom-columns=C:.apiVersion,N:.metadata.namespace,M:.metadata.name", "--no-headers")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range tenantClouds {
			if want := consumerv1alpha1.DocsGroupVersion.String() + " " + c.namespace + " " + c.name; !slices.ContainsFunc(got, func(l string) bool { return strings.Join(strings.Fields(l), " ") == want }) {
				t.Errorf("kubectl get openstackclusters -A does not list %s (%s); it lists %q", c, want, got)
			}
		}
	})
	real := listServices(ctx, t)
	projectIDs, aggs, vts, cephPools, cephAuth, groups := real.projects, real.aggregates, real.volumeTypes, real.cephPools, real.cephAuth, real.haGroups
	prefixed := func(names []string, prefix string) int {
		n := 0
		for _, s := range names {
			if strings.HasPrefix(s, prefix) {
				n++
			}
		}
		return n
	}
	for _, c := range tenantClouds {
		t.Run(c.String(), func(t *testing.T) {
			xr := c.composite(t)
			x := xr.Name
			t.Run("Keystone project "+x, func(t *testing.T) {
				if projectIDs[x] == "" {
					t.Errorf("no Keystone project %s", x)
				}
			})
			t.Run("its Nova aggregates", func(t *testing.T) {
				if n := prefixed(slices.Collect(maps.Keys(aggs)), x+"-hv-pool"); n < 1 {
					t.Errorf("no Nova aggregate %s-hv-pool*", x)
				}
			})
			t.Run("its Cinder volume types", func(t *testing.T) {
				if n := prefixed(vts, x+"-st-pool"); n < 1 {
					t.Errorf("no Cinder volume type %s-st-pool*", x)
				}
			})
			t.Run("its Ceph pools", func(t *testing.T) {
				if n := prefixed(cephPools, x+"-st-pool"); n < 2 {
					t.Errorf("%d Ceph pools %s-st-pool*, want 2 or more", n, x)
				}
			})
			t.Run("its claim says its storage pools serve its data (DataAvailable)", func(t *testing.T) {
				eventually(t, 60*time.Second, c.String()+": DataAvailable from its storage pools' Ceph", c.claim(), func(cl *cloudClaim) (bool, string) {
					d := cl.Status.GetCondition(cephhealth.ConditionDataAvailable)
					return d.Status == corev1.ConditionTrue, fmt.Sprintf("DataAvailable %s %s: %q", d.Status, d.Reason, d.Message)
				})
			})
			t.Run("its CephX client", func(t *testing.T) {
				if prefixed(cephAuth, "client.openstack-"+x+"-") < 1 {
					t.Errorf("no CephX client client.openstack-%s-*", x)
				}
			})
			// Per hypervisor pool, an HA chassis group of the pool's chassis
			// (the operator stand-in registers each of a pool's nodes in its
			// zone), named after the pool's Shoot (derived for a long name).
			for _, p := range xr.Spec.HypervisorClusters {
				pool := string(p)
				t.Run("OVN HA chassis group "+x+"-"+pool+" holds "+pool+"'s 3 chassis", func(t *testing.T) {
					var want []string
					for i := range 3 {
						want = append(want, fmt.Sprintf("garden-c5c3.%s-node-%d", derivedShootName(pool), i))
					}
					if got := groups[x+"-"+pool]; !slices.Equal(got, want) {
						t.Errorf("HA chassis group %s-%s holds %v, want %v", x, pool, got, want)
					}
				})
				t.Run("status.network reports "+pool+"'s gateway group Ready", func(t *testing.T) {
					st := "absent"
					if xr.Status.Network != nil {
						for _, g := range xr.Status.Network.Gateways {
							if g.HypervisorCluster == pool {
								st = string(g.Status)
							}
						}
					}
					if st != "Ready" {
						t.Errorf("status.network.gateways[%s].status is %s", pool, st)
					}
				})
			}
			// ... reached over ssl: with the cloud's own client certificate,
			// whose Secret its ProviderConfig guards while in use.
			t.Run("its OVN ProviderConfig reaches ssl:127.0.0.1:6643 with client certificate "+x+"-ovn-client-tls, guarded", func(t *testing.T) {
				pc, err := get[ovnv1alpha1.ProviderConfig](t.Context(), ref{gvr: ovnProviderConfigs, name: x})
				if err != nil {
					t.Fatalf("its OVN ProviderConfig: %v", err)
				}
				tls := ""
				if pc.Spec.TLSSecretRef != nil {
					tls = pc.Spec.TLSSecretRef.Name
				}
				if !slices.Equal(pc.Spec.Northbound.Endpoints, []string{"ssl:127.0.0.1:6643"}) || tls != x+"-ovn-client-tls" {
					t.Errorf("its OVN ProviderConfig: northbound %v, TLS Secret %q", pc.Spec.Northbound.Endpoints, tls)
				}
				s, err := plane.kube.CoreV1().Secrets("crossplane-system").Get(t.Context(), x+"-ovn-client-tls", metav1.GetOptions{})
				if err != nil || !slices.ContainsFunc(s.Finalizers, func(f string) bool { return strings.Contains(f, x) }) {
					t.Errorf("Secret crossplane-system/%s-ovn-client-tls is not guarded by its ProviderConfig (%v)", x, err)
				} else {
					t.Logf("guarded: %v", s.Finalizers)
				}
			})
		})
	}
}

// login is what a tenant holds after logging in: its session and the
// project its admin knows the cloud by.
type login struct {
	session *openStack
	project string
}

// tenantsLogIn (6b): every tenant reads its claim's connection secret with
// its own identity (only the tenant role of its namespace), and with that
// clouds.yaml and the CA beside it gets a token of its cloud's project and
// sees it; team-b cannot see or change team-a's project, nor act as an
// admin. Each share of a hypervisor pool is named nodes, carrying the
// cloud's label, in its aggregate (its zone), reachable with the kubeconfig
// the cloud's control plane got, and nothing more.
func tenantsLogIn(t *testing.T) {
	t.Parallel()
	if !cloudsReady(t) {
		return
	}
	ctx := t.Context()
	projectIDs := openStackAdmin(t).projectsByName(ctx, t)
	logins := map[string]login{}
	for _, c := range tenantClouds {
		t.Run(c.String(), func(t *testing.T) {
			x := c.composite(t).Name
			if l, ok := tenantLogsIn(t, c, x, projectIDs[x]); ok {
				logins[c.String()] = l
			}
		})
	}
	t.Run("team-b cannot reach team-a's project, nor act as an admin", func(t *testing.T) {
		b, ok := logins["team-b/team-b-staging"]
		a, okA := logins["team-a/team-a-prod"]
		if !ok || !okA {
			t.Skip("team-b or team-a did not log in (above)")
		}
		identity, compute := b.session.identity(t), b.session.compute(t)
		t.Run("team-b cannot see team-a-prod's project", func(t *testing.T) {
			if _, err := projects.Get(t.Context(), identity, a.project).Extract(); !refused(err) {
				t.Errorf("team-b reads team-a's project: %v", err)
			}
		})
		t.Run("team-b cannot change team-a-prod's project", func(t *testing.T) {
			taken := "taken"
			if _, err := projects.Update(t.Context(), identity, a.project, projects.UpdateOpts{Description: &taken}).Extract(); !refused(err) {
				t.Errorf("team-b changes team-a's project: %v", err)
			}
		})
		t.Run("a tenant's credential is not an admin's (no aggregate list)", func(t *testing.T) {
			if _, err := aggregates.List(compute).AllPages(t.Context()); !refused(err) {
				t.Errorf("a tenant lists the cloud's aggregates (admin only): %v", err)
			}
		})
	})
	sharesAreNamedNodes(t, logins)
}

// tenantLogsIn is one tenant's login with its claim's connection secret,
// read as the tenant, as docs/tenant-guide.md tells it: its clouds.yaml and
// the CA it names (key cacert: the cloud's endpoints serve HTTPS with a
// certificate of the landscape's CA) saved side by side.
func tenantLogsIn(t *testing.T, c tenantCloud, x, project string) (login, bool) {
	t.Helper()
	ctx := t.Context()
	var cloudsYAML, caCert []byte
	if !t.Run("the tenant reads its clouds.yaml and CA from "+c.name+"-credentials", func(t *testing.T) {
		s, err := asTenantKube(t, c.namespace).CoreV1().Secrets(c.namespace).Get(ctx, c.name+"-credentials", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the tenant cannot read its connection secret: %v", err)
		}
		cloudsYAML, caCert = s.Data["clouds.yaml"], s.Data["cacert"]
		if len(cloudsYAML) == 0 {
			t.Fatalf("its connection secret has no clouds.yaml (keys %v)", slices.Collect(maps.Keys(s.Data)))
		}
	}) {
		return login{}, false
	}
	t.Run("its clouds.yaml names an HTTPS Keystone and the CA beside it (key cacert)", func(t *testing.T) {
		certErr := fmt.Errorf("no PEM block in its %d bytes", len(caCert))
		if b, _ := pem.Decode(caCert); b != nil {
			_, certErr = x509.ParseCertificate(b.Bytes)
		}
		if !regexp.MustCompile(`(?m)^ *cacert: cacert$`).Match(cloudsYAML) || !regexp.MustCompile(`auth_url: https://`).Match(cloudsYAML) || certErr != nil {
			t.Errorf("its clouds.yaml's auth_url and cacert: %v; the CA: %v",
				regexp.MustCompile(`(?m)^ *(auth_url|cacert):.*$`).FindAll(cloudsYAML, -1), certErr)
		}
	})
	t.Run("its ProviderConfig trusts the CA of the admin credential and reads the catalog over HTTPS", func(t *testing.T) {
		pc, err := get[openstackv1alpha1.ProviderConfig](ctx, ref{gvr: openStackProviderConfigs, name: x})
		if err != nil {
			t.Fatalf("its ProviderConfig: %v", err)
		}
		ca, region := "", ""
		if r := pc.Spec.CABundleSecretRef; r != nil {
			ca = r.Name + "/" + r.Key
		}
		if pc.Status.Catalog != nil {
			region = pc.Status.Catalog.Region
		}
		if !strings.HasSuffix(ca, "-openstack-admin/cacert") || region == "" {
			t.Errorf("its ProviderConfig's CA %q and catalog region %q", ca, region)
		}
	})
	t.Run("its ProviderConfig logs in only at the cloud's composed Keystone, which the tenant's clouds.yaml names", func(t *testing.T) {
		// #52 §14: the admin clouds.yaml comes from the control-plane
		// cluster; its auth_url is not where the admin password goes.
		xr, err := c.compositeOf(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pc, err := get[openstackv1alpha1.ProviderConfig](ctx, ref{gvr: openStackProviderConfigs, name: x})
		if err != nil {
			t.Fatalf("its ProviderConfig: %v", err)
		}
		keystone := ""
		if xr.Status.Endpoints != nil {
			keystone = xr.Status.Endpoints.Keystone
		}
		want := keystone + "/v3"
		if keystone == "" || pc.Spec.AuthURL != want || !regexp.MustCompile(`(?m)^ *auth_url: `+regexp.QuoteMeta(want)+`$`).Match(cloudsYAML) {
			t.Errorf("its ProviderConfig's authURL %q and its clouds.yaml's %v, want the composed Keystone %q",
				pc.Spec.AuthURL, regexp.MustCompile(`(?m)^ *auth_url:.*$`).FindAll(cloudsYAML, -1), want)
		}
	})
	dir := t.TempDir()
	ca := filepath.Join(dir, "cacert")
	if err := os.WriteFile(ca, caCert, 0o600); err != nil {
		t.Fatal(err)
	}
	var l login
	if !t.Run("openstack --os-cloud "+c.name+" logs in, scoped to its own project", func(t *testing.T) {
		s, err := logIn(ctx, cloudsYAML, c.name, ca)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.tokenProject()
		if err != nil || project == "" || got != project {
			t.Fatalf("its token's project %q (%v), want %s's %q", got, err, x, project)
		}
		l = login{session: s, project: project}
	}) {
		return login{}, false
	}
	t.Run("the tenant sees its project", func(t *testing.T) {
		p, err := projects.Get(ctx, l.session.identity(t), project).Extract()
		if err != nil || p.Name != x {
			t.Errorf("the tenant reads its project %s: %v %v", project, p, err)
		}
	})
	return l, true
}

// asTenantKube is asTenant as a typed client.
func asTenantKube(t *testing.T, tenant string) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(tenantConfig(tenant))
}

// sharesAreNamedNodes: a share is a set of named nodes (#38). Each
// hypervisor pool names, in status.shares[].nodes, the nodes a cloud holds
// (the local pools have 3 nodes each: shares of 20 or 4 nodes take what is
// free, the rest wait); the cloud's aggregate of the pool holds exactly
// those (nova-compute, deployed with the cloud's kubeconfig of the pool,
// made them compute hosts), no node is held twice, and the tenant sees the
// pool as an availability zone of its cloud.
func sharesAreNamedNodes(t *testing.T, logins map[string]login) {
	t.Helper()
	l, err := plane.dyn.Resource(consumer("xhypervisorclusters")).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("cannot list the hypervisor pools: %v", err)
	}
	var named []string
	for _, u := range l.Items {
		px, err := decode[consumerv1alpha1.XHypervisorCluster](&u)
		if err != nil {
			t.Fatal(err)
		}
		p := px.GetLabels()["crossplane.io/claim-name"]
		for _, share := range px.Status.Shares {
			if len(share.Nodes) == 0 {
				continue
			}
			nodes := slices.Sorted(slices.Values(share.Nodes))
			named = append(named, nodes...)
			t.Run(share.Claim+" on "+p, func(t *testing.T) {
				shareOfPool(t, px, p, share.Cloud, nodes)
				if tenant, ok := logins[share.Claim]; ok {
					t.Run("the tenant sees "+p+" as an availability zone of its cloud", func(t *testing.T) {
						// (The local landscape has one Nova for every cloud, so a
						// tenant's zones are every cloud's pools here; a cloud of
						// its own Nova shows its own.)
						pages, err := availabilityzones.List(tenant.session.compute(t)).AllPages(t.Context())
						if err != nil {
							t.Fatalf("the tenant lists its availability zones: %v", err)
						}
						zones, err := availabilityzones.ExtractAvailabilityZones(pages)
						if err != nil || !slices.ContainsFunc(zones, func(z availabilityzones.AvailabilityZone) bool { return z.ZoneName == p }) {
							t.Errorf("the tenant's availability zones are %v (%v), without %s", zones, err, p)
						}
					})
				}
			})
		}
	}
	t.Run("the hypervisor pools' shares are named nodes", func(t *testing.T) {
		if len(named) == 0 {
			t.Errorf("no hypervisor pool names a node for any cloud (status.shares[].nodes)")
		}
	})
	t.Run("no node is held by two clouds", func(t *testing.T) {
		slices.Sort(named)
		for i := 1; i < len(named); i++ {
			if named[i] == named[i-1] {
				t.Errorf("node %s is held by two clouds", named[i])
			}
		}
	})
}

// shareOfPool checks one cloud's share of hypervisor pool p: its aggregate,
// its nodes' label, and what the kubeconfig of the pool its control plane
// got may do there.
func shareOfPool(t *testing.T, px *consumerv1alpha1.XHypervisorCluster, p, cloud string, nodes []string) {
	t.Helper()
	admin := openStackAdmin(t)
	eventuallyNil(t, 90*time.Second, fmt.Sprintf("its aggregate %s-%s holds the nodes %s named for it (%s)", cloud, p, p, strings.Join(nodes, " ")), func(ctx context.Context) error {
		aggs, err := admin.aggregates(ctx, t)
		if hosts := sortedHosts(aggs[cloud+"-"+p]); err == nil && !slices.Equal(hosts, nodes) {
			err = fmt.Errorf("aggregate %s-%s holds %v", cloud, p, hosts)
		}
		return err
	})
	cluster := shootCluster(t, px.Status.ShootName)
	for _, n := range nodes {
		eventuallyNil(t, 60*time.Second, "node "+n+" of "+p+"'s cluster carries "+pool.LabelCloud+"="+cloud, func(ctx context.Context) error {
			node, err := cluster.kube.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err == nil && node.Labels[pool.LabelCloud] != cloud {
				err = fmt.Errorf("its "+pool.LabelCloud+" is %q", node.Labels[pool.LabelCloud])
			}
			return err
		})
	}
	// A compromised node may not take another cloud's label to lure that
	// cloud's nova-compute: NodeRestriction keeps its kubelet off it.
	for _, n := range nodes[:min(1, len(nodes))] {
		t.Run("node "+n+"'s own kubelet may not relabel it another cloud's", func(t *testing.T) {
			_, err := cluster.asKubelet(n).CoreV1().Nodes().Patch(t.Context(), n, types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"`+pool.LabelCloud+`":"not-`+cloud+`"}}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), pool.LabelCloud) {
				t.Errorf("%s's kubelet setting %s=not-%s: %v, want Forbidden naming the label", n, pool.LabelCloud, cloud, err)
			}
		})
	}
	// The cloud's control plane got a kubeconfig of the pool for a
	// ServiceAccount limited to the cloud's namespace and its nodes there.
	cpc := "cp-" + string(px.Spec.Region)
	if x, err := cloudComposite(t.Context(), cloud); err == nil && x.Spec.ControlPlaneCluster != "" {
		cpc = string(x.Spec.ControlPlaneCluster)
	}
	cps, err := plane.dyn.Resource(consumer("xcontrolplaneclusters")).List(t.Context(), metav1.ListOptions{LabelSelector: "crossplane.io/claim-name=" + cpc})
	if err != nil || len(cps.Items) == 0 {
		t.Fatalf("the control-plane cluster %s of %s: %v", cpc, cloud, err)
	}
	cpShoot := nested(cps.Items[0].Object, "status", "shootName")
	var kubeconfig []byte
	if !eventuallyNil(t, 90*time.Second, fmt.Sprintf("its control plane holds a kubeconfig of %s (Secret openstack-%s/hypervisor-%s-kubeconfig in %s)", p, cloud, p, cpShoot), func(ctx context.Context) error {
		cp, err := openShoot(cpShoot)
		if err != nil {
			return err
		}
		s, err := cp.kube.CoreV1().Secrets("openstack-"+cloud).Get(ctx, "hypervisor-"+p+"-kubeconfig", metav1.GetOptions{})
		if err == nil && len(s.Data["kubeconfig"]) == 0 {
			err = fmt.Errorf("it has no key kubeconfig")
		}
		if err == nil {
			kubeconfig = s.Data["kubeconfig"]
		}
		return err
	}) {
		return
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatalf("the kubeconfig of %s: %v", p, err)
	}
	accessOfCloud(t, kubernetes.NewForConfigOrDie(cfg), cloud, nodes[0])
}

// accessOfCloud: what a cloud's kubeconfig of a pool may do, asked with
// real requests (dry runs where the request would change something):
// kubectl auth can-i would ask about a cluster-scoped resource in the
// kubeconfig's namespace.
func accessOfCloud(t *testing.T, c kubernetes.Interface, cloud, node string) {
	t.Helper()
	ns := "openstack-" + cloud
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	may := map[string]func(context.Context) error{
		"read its node " + node: func(ctx context.Context) error {
			_, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			return err
		},
		"manage its namespace (a ConfigMap)": func(ctx context.Context) error {
			_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "e2e-probe"}}, dry)
			return err
		},
		"run nova-compute on its nodes (privileged, with its host paths)": func(ctx context.Context) error {
			_, err := c.AppsV1().DaemonSets(ns).Create(ctx, computeDaemonSet(cloud), dry)
			return err
		},
	}
	mayNot := map[string]func(context.Context) error{
		"label its node": func(ctx context.Context) error {
			_, err := c.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(`{"metadata":{"labels":{"c5c3.io/e2e-probe":"x"}}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		},
		"read another node": func(ctx context.Context) error {
			_, err := c.CoreV1().Nodes().Get(ctx, "not-"+node, metav1.GetOptions{})
			return err
		},
		"list nodes": func(ctx context.Context) error {
			_, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			return err
		},
		"read kube-system's Secrets": func(ctx context.Context) error {
			_, err := c.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
			return err
		},
		"create a namespace": func(ctx context.Context) error {
			_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-not-yours"}}, dry)
			return err
		},
		"bind a role (admin to its ServiceAccount)": func(ctx context.Context) error {
			_, err := c.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "e2e-probe"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "default"}},
			}, dry)
			return err
		},
		"mint a token (a year, for its own ServiceAccount)": func(ctx context.Context) error {
			year := int64(8760 * 3600)
			_, err := c.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "c5c3-control-plane", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &year}}, metav1.CreateOptions{})
			return err
		},
		// Its namespace's policy: a token that would outlive the access.
		"keep a token Secret of its ServiceAccount": func(ctx context.Context) error {
			_, err := c.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "e2e-probe",
				Annotations: map[string]string{corev1.ServiceAccountNameKey: "c5c3-control-plane"}}, Type: corev1.SecretTypeServiceAccountToken}, dry)
			return err
		},
		"run a pod (on another node)": func(ctx context.Context) error {
			_, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "e2e-probe"},
				Spec:       corev1.PodSpec{NodeName: "not-" + node, Containers: []corev1.Container{{Name: "probe", Image: "busybox"}}},
			}, dry)
			return err
		},
		// The placement policy the access put into the pool's cluster.
		"run nova-compute on another cloud's nodes": func(ctx context.Context) error {
			_, err := c.AppsV1().DaemonSets(ns).Create(ctx, computeDaemonSet("not-"+cloud), dry)
			return err
		},
		"run a DaemonSet mounting its node's root": func(ctx context.Context) error {
			ds := computeDaemonSet(cloud)
			ds.Spec.Template.Spec.Volumes = append(ds.Spec.Template.Spec.Volumes, corev1.Volume{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
			_, err := c.AppsV1().DaemonSets(ns).Create(ctx, ds, dry)
			return err
		},
		"create a Service": func(ctx context.Context) error {
			_, err := c.CoreV1().Services(ns).Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "e2e-probe"},
				Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 443}}},
			}, dry)
			return err
		},
	}
	for _, what := range slices.Sorted(maps.Keys(may)) {
		t.Run("its kubeconfig may "+what, func(t *testing.T) {
			if err := may[what](t.Context()); err != nil {
				t.Errorf("%s's kubeconfig may not %s: %v", cloud, what, err)
			}
		})
	}
	for _, what := range slices.Sorted(maps.Keys(mayNot)) {
		t.Run("its kubeconfig may not "+what, func(t *testing.T) {
			if err := mayNot[what](t.Context()); !apierrors.IsForbidden(err) {
				t.Errorf("%s's kubeconfig may %s: want Forbidden, got %v", cloud, what, err)
			}
		})
	}
}

// cloudComposite is a cloud's composite by name, in either group.
func cloudComposite(ctx context.Context, name string) (*consumerv1alpha1.XOpenStackCluster, error) {
	x, err := get[consumerv1alpha1.XOpenStackCluster](ctx, ref{gvr: xOpenStackClusters, name: name})
	if apierrors.IsNotFound(err) {
		x, err = get[consumerv1alpha1.XOpenStackCluster](ctx, ref{gvr: legacyGroup(xOpenStackClusters), name: name})
	}
	return x, err
}

// computeDaemonSet is nova-compute as a cloud's control plane deploys it
// into its namespace of a hypervisor pool: on the nodes labelled for
// cloud, privileged, with the host paths it keeps its state in.
func computeDaemonSet(cloud string) *appsv1.DaemonSet {
	labels := map[string]string{"app.kubernetes.io/name": "e2e-probe"}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-probe"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{pool.LabelCloud: cloud},
					HostPID:      true,
					Volumes:      []corev1.Volume{{Name: "nova", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/nova"}}}},
					Containers: []corev1.Container{{Name: "nova-compute", Image: "nova-compute",
						SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
						VolumeMounts:    []corev1.VolumeMount{{Name: "nova", MountPath: "/var/lib/nova"}}}},
				},
			},
		},
	}
}
