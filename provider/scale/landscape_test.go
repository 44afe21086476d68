package scale

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/internal/shard"
	"github.com/c5c3/consumer-plane/provider/scale/ovnstub"
	"github.com/c5c3/consumer-plane/test/openstackstub"
)

// cloudObjects are the provider's objects of one cloud, as the
// OpenStackCluster function composes them (its render goldens): the
// cloud's ProviderConfig and credentials, and ten managed resources in the
// cloud's own Keystone, Nova, Cinder and Neutron; with OVN, the
// ProviderConfig of the cloud's OVN databases and per hypervisor pool a
// ChassisSet and the HA chassis group of its gateway chassis (the
// function's composeGateways: gateways first, priorities down from 32767);
// with Ceph, its pools and client in the storage pool (cephObjects).
var cloudObjects = template.Must(template.New("cloud").Parse(`
apiVersion: v1
kind: Secret
metadata: {name: {{.Name}}-openstack-admin, namespace: crossplane-system}
stringData:
  cacert: |
{{.CA}}
  clouds.yaml: |
    clouds:
      admin:
        auth:
          auth_url: {{.AuthURL}}
          username: admin
          password: {{.Password}}
          project_name: admin
          user_domain_name: Default
          project_domain_name: Default
        region_name: {{.Region}}
---
apiVersion: openstack.provider.c5c3.io/v1alpha1
kind: ProviderConfig
metadata: {name: {{.Name}}}
spec:
  authURL: {{.AuthURL}}
  region: {{.Region}}
  caBundleSecretRef: {key: cacert, name: {{.Name}}-openstack-admin, namespace: crossplane-system}
  credentials:
    source: Secret
    format: CloudsYAML
    cloud: admin
    secretRef: {key: clouds.yaml, name: {{.Name}}-openstack-admin, namespace: crossplane-system}
---
apiVersion: keystone.provider.c5c3.io/v1alpha1
kind: Project
metadata: {name: {{.Name}}}
spec:
  forProvider: {name: {{.Name}}, description: The default project of {{.Name}}}
  providerConfigRef: {name: {{.Name}}}
---
apiVersion: keystone.provider.c5c3.io/v1alpha1
kind: User
metadata: {name: {{.Name}}-tenant}
spec:
  forProvider: {name: {{.Name}}-tenant, description: The tenant of {{.Name}}}
  providerConfigRef: {name: {{.Name}}}
  writeConnectionSecretToRef: {name: {{.Name}}-tenant-user, namespace: crossplane-system}
---
apiVersion: keystone.provider.c5c3.io/v1alpha1
kind: RoleAssignment
metadata: {name: {{.Name}}-tenant-member}
spec:
  forProvider:
    projectIDRef: {name: {{.Name}}}
    userIDRef: {name: {{.Name}}-tenant}
    role: member
  providerConfigRef: {name: {{.Name}}}
---
apiVersion: keystone.provider.c5c3.io/v1alpha1
kind: ApplicationCredential
metadata: {name: {{.Name}}-tenant}
spec:
  forProvider:
    name: {{.Name}}-tenant
    description: The tenant's credential of {{.Name}}
    cloud: {name: {{.Name}}, region: {{.Region}}}
    passwordSecretRef: {key: password, name: {{.Name}}-tenant-user, namespace: crossplane-system}
    projectIDRef: {name: {{.Name}}}
    userIDRef: {name: {{.Name}}-tenant}
    roles: [member]
  providerConfigRef: {name: {{.Name}}}
  writeConnectionSecretToRef: {name: {{.Name}}-credentials, namespace: crossplane-system}
{{range .Pools}}---
apiVersion: nova.provider.c5c3.io/v1alpha1
kind: Aggregate
metadata: {name: {{$.Name}}-{{.}}}
spec:
  forProvider:
    name: {{$.Name}}-{{.}}
    availabilityZone: {{.}}
    filterTenantIDRefs: [{name: {{$.Name}}}]
    metadata: {c5c3.io_pool: {{.}}, c5c3.io_allocated_nodes: "20"}
  providerConfigRef: {name: {{$.Name}}}
{{end}}---
apiVersion: cinder.provider.c5c3.io/v1alpha1
kind: VolumeType
metadata: {name: {{.Name}}-st-pool-a}
spec:
  forProvider: {name: {{.Name}}-st-pool-a, backendName: ceph-st-pool-a, description: RBD volumes in storage pool st-pool-a}
  providerConfigRef: {name: {{.Name}}}
---
apiVersion: nova.provider.c5c3.io/v1alpha1
kind: QuotaSet
metadata: {name: {{.Name}}-compute}
spec:
  forProvider: {projectIDRef: {name: {{.Name}}}, cores: 2000, instances: 500, ramMB: 8192000}
  providerConfigRef: {name: {{.Name}}}
---
apiVersion: cinder.provider.c5c3.io/v1alpha1
kind: QuotaSet
metadata: {name: {{.Name}}-volume}
spec:
  forProvider: {projectIDRef: {name: {{.Name}}}, gigabytes: 50000, snapshots: 4000, volumes: 2000}
  providerConfigRef: {name: {{.Name}}}
---
apiVersion: neutron.provider.c5c3.io/v1alpha1
kind: QuotaSet
metadata: {name: {{.Name}}-network}
spec:
  forProvider: {projectIDRef: {name: {{.Name}}}, floatingIPs: 200, networks: 100, ports: 5000, routers: 50}
  providerConfigRef: {name: {{.Name}}}
{{if .OVN}}---
apiVersion: ovn.provider.c5c3.io/v1alpha1
kind: ProviderConfig
metadata: {name: {{.Name}}}
spec:
  northbound: {endpoints: ["{{.OVN}}"]}
  southbound: {endpoints: ["{{.OVN}}"]}
{{range $pool, $members := .Gateways}}---
apiVersion: ovn.provider.c5c3.io/v1alpha1
kind: ChassisSet
metadata: {name: {{$.Name}}-{{$pool}}}
spec:
  forProvider: {availabilityZones: [{{$pool}}], minChassis: 1}
  providerConfigRef: {name: {{$.Name}}}
---
apiVersion: ovn.provider.c5c3.io/v1alpha1
kind: HAChassisGroup
metadata: {name: {{$.Name}}-{{$pool}}}
spec:
  forProvider:
    name: {{$.Name}}-{{$pool}}
    chassis:{{range $members}}
    - {name: {{.Name}}, priority: {{.Priority}}}{{end}}
    externalIDs: {c5c3.io_openstack-cluster: {{$.Name}}, c5c3.io_pool: {{$pool}}}
  providerConfigRef: {name: {{$.Name}}}
{{end}}{{end}}{{if .Ceph}}` + cephObjects + `{{end}}`))

// withOVN: the clouds have OVN databases and their resources, unless
// COBALTCORE_SCALE_OVN=0 (make bench-scale OVN=0) leaves them out, as the
// runs before stop 90 did.
var withOVN = os.Getenv("COBALTCORE_SCALE_OVN") != "0"

// perCloud is how many managed resources cloudObjects declares: ten in
// OpenStack, and with OVN two per pool (and with Ceph perCephCloud more).
var perCloud = func() int {
	if withOVN {
		return 10 + 2*len(pools)
	}
	return 10
}()

// pools are the hypervisor pools each cloud has an aggregate in.
var pools = []string{"hv-pool-a", "hv-pool-b"}

// cloudName is the name of cloud i's objects.
func cloudName(i int) string { return fmt.Sprintf("c%05d", i) }

// A gateway is an HA chassis group's member.
type gateway struct {
	Name     string
	Priority int
}

// gateways are every pool's HA chassis group members, as the
// OpenStackCluster function ranks the ChassisSet's chassis.
func gateways() map[string][]gateway {
	out := map[string][]gateway{}
	for _, p := range pools {
		for k := range ovnstub.ChassisPerPool {
			out[p] = append(out[p], gateway{Name: ovnstub.Chassis(p, k), Priority: 32767 - k})
		}
	}
	return out
}

// objectsOf renders cloud c's objects, with its OVN databases' endpoint
// unless ovn is "", and its storage in the Ceph of ProviderConfig ceph
// unless that is "".
func objectsOf(c *openstackstub.Cloud, ovn, ceph string) ([]*unstructured.Unstructured, error) {
	var ca strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(string(c.CA)), "\n") {
		ca.WriteString("    " + l + "\n")
	}
	var buf bytes.Buffer
	if err := cloudObjects.Execute(&buf, map[string]any{"Name": cloudName(c.Index), "AuthURL": c.AuthURL, "CA": strings.TrimRight(ca.String(), "\n"),
		"Password": openstackstub.AdminPassword, "Region": openstackstub.Region, "Pools": pools, "OVN": ovn, "Gateways": gateways(), "Ceph": ceph}); err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(&buf, 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				return out, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// managedKinds are the kinds of cloudObjects' managed resources.
var managedKinds = []schema.GroupVersionKind{
	{Group: "keystone.provider.c5c3.io", Version: "v1alpha1", Kind: "Project"},
	{Group: "keystone.provider.c5c3.io", Version: "v1alpha1", Kind: "User"},
	{Group: "keystone.provider.c5c3.io", Version: "v1alpha1", Kind: "RoleAssignment"},
	{Group: "keystone.provider.c5c3.io", Version: "v1alpha1", Kind: "ApplicationCredential"},
	{Group: "nova.provider.c5c3.io", Version: "v1alpha1", Kind: "Aggregate"},
	{Group: "cinder.provider.c5c3.io", Version: "v1alpha1", Kind: "VolumeType"},
	{Group: "nova.provider.c5c3.io", Version: "v1alpha1", Kind: "QuotaSet"},
	{Group: "cinder.provider.c5c3.io", Version: "v1alpha1", Kind: "QuotaSet"},
	{Group: "neutron.provider.c5c3.io", Version: "v1alpha1", Kind: "QuotaSet"},
	{Group: "ovn.provider.c5c3.io", Version: "v1alpha1", Kind: "ChassisSet"},
	{Group: "ovn.provider.c5c3.io", Version: "v1alpha1", Kind: "HAChassisGroup"},
	{Group: "ceph.provider.c5c3.io", Version: "v1alpha1", Kind: "Pool"},
	{Group: "ceph.provider.c5c3.io", Version: "v1alpha1", Kind: "Client"},
}

// A landscape is the stub clouds: each its own OpenStack and, with OVN,
// its own OVN databases on the same address.
type landscape struct {
	*openstackstub.Landscape
	ovn *ovnstub.Landscape // nil without OVN
}

// newLandscape starts n clouds, stopped when tb ends.
func newLandscape(tb testing.TB, n int) *landscape {
	tb.Helper()
	clouds, err := openstackstub.New(n, 0)
	mustTB(tb, err)
	tb.Cleanup(clouds.Close)
	l := &landscape{Landscape: clouds}
	if withOVN {
		l.ovn, err = ovnstub.New(n, pools, openstackstub.Address)
		mustTB(tb, err)
		tb.Cleanup(l.ovn.Close)
	}
	return l
}

// add starts one more cloud.
func (l *landscape) add(tb testing.TB) *openstackstub.Cloud {
	tb.Helper()
	c, err := l.Add()
	mustTB(tb, err)
	if l.ovn != nil {
		o, err := l.ovn.Add(openstackstub.Address(c.Index))
		mustTB(tb, err)
		if o.Index != c.Index {
			tb.Fatalf("cloud %d has the OVN databases of cloud %d", c.Index, o.Index)
		}
	}
	return c
}

// ovnEndpoint is cloud i's OVN databases' endpoint, or "" without OVN.
func (l *landscape) ovnEndpoint(i int) string {
	if l.ovn == nil {
		return ""
	}
	return l.ovn.Clouds[i].Endpoint
}

// createClouds creates the objects of clouds of l, workers at a time,
// labelled with their batch.
func createClouds(ctx context.Context, kube client.Client, batch string, l *landscape, clouds []*openstackstub.Cloud, workers int) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		work     = make(chan *openstackstub.Cloud)
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				ceph := ""
				if c.Index < cephShare {
					ceph = cephProviderConfig
				}
				objs, err := objectsOf(c, l.ovnEndpoint(c.Index), ceph)
				managed := 0
				for _, o := range objs {
					if slices.Contains(managedKinds, o.GroupVersionKind()) {
						managed++
					}
				}
				for _, o := range objs {
					if err != nil {
						break
					}
					// As the functions label what they compose
					// (internal/function's shardGuard); and the cloud's,
					// with how many it has, for waitBatchReady.
					o.SetLabels(map[string]string{batchLabel: batch, shard.Label: shard.Of(cloudName(c.Index)),
						cloudLabel: cloudName(c.Index), resourcesLabel: strconv.Itoa(managed)})
					err = kube.Create(ctx, o)
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("cloud %d: %w", c.Index, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, c := range clouds {
		work <- c
	}
	close(work)
	wg.Wait()
	return firstErr
}

// batchLabel marks the objects created together, so that one watch per
// kind finds them.
const batchLabel = "scale.c5c3.io/batch"

// cloudLabel names an object's cloud, and resourcesLabel how many managed
// resources the cloud has: a cloud's storage names the storage pool's
// ProviderConfig, not the cloud's.
const (
	cloudLabel     = "scale.c5c3.io/cloud"
	resourcesLabel = "scale.c5c3.io/resources"
)

// waitBatchReady waits until every managed resource of batch (n clouds) is
// Ready, and returns when each cloud's last one was seen Ready. It watches
// each kind (one list, then events) rather than listing every few seconds:
// at thousands of clouds the harness's own lists of every object were a
// load the API server shares with the provider, and timed out or were cut
// off (stop 77's runs at 1,000 clouds).
func waitBatchReady(tb testing.TB, cfg *rest.Config, p crasher, batch string, n int, timeout time.Duration) (map[string]time.Time, error) {
	tb.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	w := &batchWatch{ready: map[string]map[string]bool{}, want: map[string]int{}, done: map[string]time.Time{}, waiting: map[string]string{}}
	stop := make(chan struct{})
	defer close(stop)
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, metav1.NamespaceAll, func(o *metav1.ListOptions) {
		o.LabelSelector = batchLabel + "=" + batch
	})
	for _, gvk := range managedKinds {
		gvr := gvk.GroupVersion().WithResource(strings.ToLower(gvk.Kind) + "s")
		if _, err := f.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    w.observe,
			UpdateFunc: func(_, o any) { w.observe(o) },
		}); err != nil {
			return nil, err
		}
	}
	f.Start(stop)

	// A landscape that takes many minutes says how far it got each
	// minute, so that a run stopped early still gives its rate.
	started := time.Now()
	deadline, next := started.Add(timeout), started.Add(time.Minute)
	for {
		if now := time.Now(); now.After(next) {
			next = next.Add(time.Minute)
			done, waiting := w.progress()
			say(tb, "%s after the start: %d of %d clouds, %d of %d resources Ready; one waiting: %s", now.Sub(started).Round(time.Second), len(done), n, w.resourcesReady(), w.resourcesWanted(), waiting)
		}
		if err := p.crashed(); err != nil {
			done, _ := w.progress()
			return done, err
		}
		done, waiting := w.progress()
		if len(done) == n {
			return done, nil
		}
		if time.Now().After(deadline) {
			return done, &notReady{batch: batch, after: timeout, clouds: len(done), of: n,
				ready: w.resourcesReady(), wanted: w.resourcesWanted(), waiting: waiting}
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// notReady is how far a batch got when waitBatchReady gave up on it.
type notReady struct {
	batch         string
	after         time.Duration
	clouds, of    int // clouds with every resource Ready, of the batch's
	ready, wanted int // resources Ready, of those seen
	waiting       string
}

func (e *notReady) Error() string {
	return fmt.Sprintf("%d of %d clouds of batch %s Ready after %s (%d of %d resources); waiting on %s",
		e.clouds, e.of, e.batch, e.after, e.ready, e.wanted, e.waiting)
}

// A batchWatch keeps, per cloud, which of its managed
// resources are Ready, and when each cloud first had all of them Ready.
type batchWatch struct {
	mu      sync.Mutex
	ready   map[string]map[string]bool // cloud → kind/name → Ready
	want    map[string]int             // cloud → how many it has
	done    map[string]time.Time
	waiting map[string]string // kind/name → why it is not Ready, for a timeout's message
}

func (w *batchWatch) observe(o any) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	pc := u.GetLabels()[cloudLabel]
	want, _ := strconv.Atoi(u.GetLabels()[resourcesLabel])
	key := u.GetKind() + " " + u.GetName()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ready[pc] == nil {
		w.ready[pc] = map[string]bool{}
	}
	w.want[pc] = want
	r := isReady(u)
	w.ready[pc][key] = r
	if r {
		delete(w.waiting, key)
	} else {
		w.waiting[key] = conditionMessage(u, "Synced")
	}
	if _, seen := w.done[pc]; seen || !r {
		return
	}
	for _, ok := range w.ready[pc] {
		if !ok {
			return
		}
	}
	if len(w.ready[pc]) == want {
		w.done[pc] = time.Now()
	}
}

// progress returns a copy of the clouds done, and one resource not Ready
// yet and why.
func (w *batchWatch) progress() (map[string]time.Time, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	waiting := "the first events of the watches"
	for k, why := range w.waiting {
		waiting = k + ": " + why
		break
	}
	return maps.Clone(w.done), waiting
}

// resourcesWanted counts the resources of the clouds seen so far.
func (w *batchWatch) resourcesWanted() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, want := range w.want {
		n += want
	}
	return n
}

// resourcesReady counts the resources Ready now.
func (w *batchWatch) resourcesReady() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, of := range w.ready {
		for _, r := range of {
			if r {
				n++
			}
		}
	}
	return n
}

// envInt reads a positive integer from the environment, or def.
func envInt(name string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err == nil && n > 0 {
		return n
	}
	return def
}

// envDuration reads a positive duration from the environment, or zero.
func envDuration(name string) time.Duration {
	d, err := time.ParseDuration(os.Getenv(name))
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// deadlineFor is how long waiting on n managed resources may take at a
// pessimistic 2 reconciles a second.
func deadlineFor(n int) time.Duration { return time.Duration(n/2+120) * time.Second }

func mustTB(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func isReady(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// conditionMessage is the reason and message of u's condition kind.
func conditionMessage(u *unstructured.Unstructured, kind string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == kind {
			return fmt.Sprintf("%v %v", m["reason"], m["message"])
		}
	}
	return "no " + kind + " condition yet"
}
